// Composable runtime stages, in the spirit of ozz-animation's jobs: each job is a struct of
// caller-owned inputs and outputs with validate() (pointers set, sizes consistent) and run()
// (validates, then computes; false on invalid input, never undefined behaviour). No job
// allocates or keeps state, so one job value may run for many characters. With the stateful
// stages (Steering, DatabasePlayback, LearnedPlayback, Inertializer, FootLocker) they are what
// DatabaseCharacter, LearnedCharacter and PathFollower are made of; docs/runtime.md shows how to
// compose a character of your own (e.g. one following a trajectory the game supplies).
//
// The stages of one update:
//   trajectory source  Steering (gamepad), PathFollower's revision (path), or the game's own
//                      world-space RootSamples at the schema's trajectory offsets
//   query              QueryJob: the one query builder of every character
//   matcher            SearchMatchJob (exact search), long_horizon_match (LHMM, lhmm.hpp),
//                      ProjectMatchJob (learned projector)
//   pose source        DatabasePlayback (database frames), LearnedPlayback (stepper + decoder)
//   post-processing    Inertializer (inside both playbacks), FootLocker, ForwardKinematicsJob
//   root               integrate_root_motion / pull_towards, or the game owns it (RootOwner)
#pragma once

#include "lmm/asset/database.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/core/math.hpp"
#include "lmm/core/span.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/eval/search.hpp"

namespace lmm {

// The query builder shared by every character: the normalised features of the pose being
// played (database features of the current frame, or the feature part of a learned state),
// with the trajectory groups replaced by the given world-space trajectory seen from `root`.
struct QueryJob {
  const FeatureSchema* schema = nullptr;
  Span<const float> offset, scale;    // the schema's normalisation (schema->dims each)
  Span<const float> pose_features;    // normalised features of the pose (schema->dims)
  RootSample root;                    // the character root (ground position, facing)
  Span<const RootSample> trajectory;  // world samples, one per schema->trajectory_offsets
  Span<float> query;                  // output: the normalised query (schema->dims)

  // Whether every span is set and sized for the schema (no aliasing of trajectory and output).
  bool validate() const;
  // Writes the query; false (output untouched) when validate() fails.
  bool run() const;
};

// QueryJob with the schema and normalisation of a database (the other fields left to fill).
QueryJob query_job_for(const Database& db);
// QueryJob with the schema and normalisation of a model bundle.
QueryJob query_job_for(const Model& model);

// Matcher: the exact nearest database frame to a query (FeatureSearch::search, k = 1).
struct SearchMatchJob {
  const FeatureSearch* index = nullptr;
  Span<const float> query;  // index->dims() floats
  int current_frame = -1;   // the frame playing (a candidate without transition cost), or -1
  SearchParams params;
  SearchScratch* scratch = nullptr;  // from index->make_scratch()
  SearchResult* result = nullptr;    // output: frame -1 when nothing was found

  // Whether the index is built, the query sized for it and scratch and result are set.
  bool validate() const;
  // Searches; false when validate() fails or nothing was found (non-finite query, empty index).
  bool run() const;
};

// Matcher: the learned projector's state for a query (Holden et al. 2020, the projector).
struct ProjectMatchJob {
  ModelEvaluator* evaluator = nullptr;  // initialised over the model (its scratch is used)
  Span<const float> query;              // model.projector_input_size() floats: features ++ constraint code
  Span<float> state;                    // output: model.state_size() floats

  // Whether the evaluator is initialised and the spans are sized for its model.
  bool validate() const;
  // Projects; false when validate() fails or the projector gives a non-finite value.
  bool run() const;
};

// Post-processing: global transforms of a local pose (joint 0 in world space).
struct ForwardKinematicsJob {
  Span<const int> parents;  // parent of each joint (-1 for the root), parents before children
  Span<const Vec3> local_positions;
  Span<const Quat> local_rotations;
  Span<Vec3> global_positions;  // output
  Span<Quat> global_rotations;  // output

  // Whether every span has parents.size elements and each parent precedes its joint.
  bool validate() const;
  // Computes the globals; false when validate() fails.
  bool run() const;
};

}  // namespace lmm
