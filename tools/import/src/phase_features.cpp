#include "lmm/import/phase_features.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/blob_writer.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/import/import.hpp"

#include "database_writing.hpp"

namespace lmm::pipeline {

const char* const kHowToGetPhases =
    "import the database with a schema without phase groups (e.g. configs/features/lipschitz31.toml), train "
    "a periodic autoencoder with `lmm-train phase --db X.mmdb --out DIR`, then write the database with this "
    "schema and its phases by `lmm-export --in DIR --phase --db X.mmdb --features SCHEMA --out Y.mmdb`";

namespace {

// "[rows][columns]"
std::string shape_text(int64_t rows, const std::string& columns) {
  return "[" + std::to_string(rows) + "][" + columns + "]";
}

// The first phase group of `config`, or nullptr.
const FeatureGroupConfig* first_phase_group(const FeatureSchemaConfig& config) {
  const auto it = std::find_if(config.groups.begin(), config.groups.end(),
                               [](const FeatureGroupConfig& g) { return g.kind == FeatureKind::Phase; });
  return it == config.groups.end() ? nullptr : &*it;
}

// A skeleton config holding the roles of `db`, to resolve a schema's bones as at import.
SkeletonConfig database_roles(const Database& db) {
  SkeletonConfig config;
  config.source = "the database";
  for (const auto& [role, joint] : db.roles()) config.roles.emplace_back(role, db.skeleton().names[size_t(joint)]);
  return config;
}

// Clip `range` of `db` as lmm-import processed it: local transforms and velocities.
ProcessedClip stored_clip(const Database& db, const DatabaseRange& range) {
  ProcessedClip pc;
  pc.name = range.name;
  pc.mirrored = range.mirrored;
  Clip& clip = pc.clip;
  clip.name = range.name;
  clip.fps = db.fps();
  clip.frames = range.stop - range.start;
  clip.joints = db.joint_count();
  const size_t count = size_t(clip.frames) * size_t(clip.joints);
  const int f = range.start;
  clip.positions.assign(db.positions(f), db.positions(f) + count);
  clip.rotations.assign(db.rotations(f), db.rotations(f) + count);
  pc.velocities.assign(db.velocities(f), db.velocities(f) + count);
  pc.angular_velocities.assign(db.angular_velocities(f), db.angular_velocities(f) + count);
  return pc;
}

// Throws InputError when `phases` is not [db frames][2 x channels] with the schema's channels
// (any channels in [1, kMaxPhaseChannels] when it reads none) or holds a non-finite value.
void check_phase_array(const PhaseArray& phases, const Database& db, const FeatureSchema& schema,
                       const std::string& source) {
  const int wanted = schema.phase_channels;
  const bool channels_ok = wanted > 0 ? phases.channels == wanted
                                      : phases.channels >= 1 && phases.channels <= kMaxPhaseChannels;
  const uint64_t width = 2 * uint64_t(std::max(phases.channels, 0));
  if (phases.frames != db.frame_count() || !channels_ok || phases.values.size() != uint64_t(phases.frames) * width) {
    const std::string expected_columns =
        wanted > 0 ? std::to_string(2 * wanted) : "2 x channels, channels in " + range_text(1, kMaxPhaseChannels);
    throw InputError("phase array of shape " + shape_text(phases.frames, std::to_string(width)) + " holding " +
                     std::to_string(phases.values.size()) + " values does not fit: expected " +
                     shape_text(db.frame_count(), expected_columns) + " (one row per database frame, mirrored " +
                     "clips included; amplitude x sin, amplitude x cos per channel" +
                     (wanted > 0 ? " for the " + std::to_string(wanted) + " channels " + source + " reads" : "") +
                     ")");
  }
  const auto bad = std::find_if(phases.values.begin(), phases.values.end(), [](float v) { return !std::isfinite(v); });
  if (bad != phases.values.end()) {
    const size_t index = size_t(bad - phases.values.begin());
    const int frame = int(index / width);
    throw InputError("phase array: frame " + std::to_string(frame) + " (clip '" +
                     db.ranges()[size_t(clip_index(db, frame))].name + "'), column " +
                     std::to_string(index % width) + " holds " + format_number(*bad) +
                     "; phases must be finite");
  }
}

// The phases re-featuring uses: `phases` (checked) when given, else the ones `db` holds; with
// their channels in `channels` (0 and nullptr when there are none). Throws InputError when the
// schema has a phase group and there are no phases.
const float* phase_rows(const Database& db, const FeatureSchemaConfig& config, const FeatureSchema& schema,
                        const PhaseArray& phases, int& channels) {
  const bool given = phases.frames != 0 || phases.channels != 0 || !phases.values.empty();
  if (given) check_phase_array(phases, db, schema, config.source);
  channels = given ? phases.channels : db.phase_channels();
  const float* rows = given ? phases.values.data() : channels > 0 ? db.phase(0) : nullptr;
  if (schema.phase_channels > 0 && channels == 0) {
    throw InputError(config.source + ": feature group '" + first_phase_group(config)->name +
                     "' (kind phase) needs each frame's phases, but none were given and the database holds none: " +
                     kHowToGetPhases);
  }
  if (schema.phase_channels > 0 && channels != schema.phase_channels) {
    throw InputError(config.source + ": the phase groups read " + std::to_string(schema.phase_channels) +
                     " channels, but the database's " + db_tensor::kPhase + " is " +
                     shape_text(db.frame_count(), std::to_string(2 * channels)) + ", expected " +
                     shape_text(db.frame_count(), std::to_string(2 * schema.phase_channels)) +
                     ": give phases of that many channels");
  }
  return rows;
}

// Raw features of every frame of `db` for `schema`, phase groups from `rows` (2 x channels per frame).
std::vector<float> raw_features(const Database& db, const FeatureSchema& schema, const float* rows, int channels) {
  std::vector<float> raw;
  raw.reserve(size_t(db.frame_count()) * size_t(schema.dims));
  for (const DatabaseRange& range : db.ranges()) {
    const std::vector<float> clip = clip_features(schema, db.skeleton(), stored_clip(db, range));
    raw.insert(raw.end(), clip.begin(), clip.end());
  }
  for (int f = 0; f < db.frame_count() && schema.phase_channels > 0; ++f) {
    write_phase_features(schema, rows + size_t(f) * 2 * size_t(channels), &raw[size_t(f) * size_t(schema.dims)]);
  }
  return raw;
}

// Whether tensor `name` of a database is rebuilt by re-featuring (features.* and phase.values).
bool rebuilt(const std::string& name) { return name.rfind("features.", 0) == 0 || name == db_tensor::kPhase; }

}  // namespace

void refuse_phase_groups(const FeatureSchemaConfig& schema) {
  if (const FeatureGroupConfig* group = first_phase_group(schema)) {
    throw InputError(schema.source + ": feature group '" + group->name + "' (kind phase) needs each frame's " +
                     "phases, which lmm-import cannot compute: " + kHowToGetPhases);
  }
}

RefeatureSummary refeature_database(const Database& db, const FeatureSchemaConfig& config, const PhaseArray& phases,
                                    const std::string& out_path) {
  const FeatureSchema schema = resolve_schema(config, database_roles(db), db.skeleton(), db.fps());
  int channels = 0;
  const float* rows = phase_rows(db, config, schema, phases, channels);
  const FeatureSection features(schema, raw_features(db, schema, rows, channels));
  BlobBuilder b;
  for (const TensorView& t : db.blob().tensors()) {
    if (!rebuilt(t.name)) b.add(t.name, t.dtype, std::vector<uint64_t>(t.dims, t.dims + t.rank), t.data);
  }
  features.tensors().add_to(b);
  if (channels > 0) b.add(db_tensor::kPhase, DType::F32, {uint64_t(db.frame_count()), 2 * uint64_t(channels)}, rows);
  RefeatureSummary summary;
  summary.bytes = write_database_blob(b, out_path);
  summary.frames = db.frame_count();
  summary.feature_dims = schema.dims;
  summary.phase_channels = channels;
  return summary;
}

}  // namespace lmm::pipeline
