// Phase features: the phase embedding of Kleanthous & Martini 2023 (Table 10), from a periodic
// autoencoder (Starke, Mason & Komura 2022, DeepPhase), is not computed from the pose: it comes
// from a per-frame phase array stored in the database (phase.values, docs/formats/mmdb.md).
// Re-featuring rebuilds an existing database's features for a schema with such an array.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"

namespace lmm::pipeline {

// One phase embedding per database frame, in database frame order (mirrored clips' frames
// included): frames x 2 * channels floats, per channel amplitude x sin and amplitude x cos of
// its phase (channel 0 first).
struct PhaseArray {
  int frames = 0;
  int channels = 0;
  std::vector<float> values;
};

// How to get phases for a database, appended to messages about missing phases.
extern const char* const kHowToGetPhases;

// Throws InputError naming `schema`'s first phase group and how to get phases, when it has one:
// lmm-import reads BVH files and computes no phases.
void refuse_phase_groups(const FeatureSchemaConfig& schema);

// What re-featuring wrote.
struct RefeatureSummary {
  int frames = 0;
  int feature_dims = 0;
  int phase_channels = 0;  // of the phases stored (0: none)
  size_t bytes = 0;        // size of the written file
};

// Writes `db` to `out_path` (atomically; it may be db's own file) with its features rebuilt for
// `schema` exactly as lmm-import builds them (bones resolved through db's roles and joint names,
// groups normalised over the database), phase groups filled from `phases` (stored as
// phase.values) or, when `phases` is empty, from the phases db holds. Throws InputError on a
// phase group without phases, a phase array of another shape than [db frames][2 x the schema's
// channels] or with a non-finite value (naming the frame), or any import error; nothing is
// written on error.
RefeatureSummary refeature_database(const Database& db, const FeatureSchemaConfig& schema, const PhaseArray& phases,
                                    const std::string& out_path);

}  // namespace lmm::pipeline
