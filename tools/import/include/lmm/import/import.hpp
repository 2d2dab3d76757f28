// The import pipeline: BVH and glTF files -> processed clips -> normalised features -> *.mmdb.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lmm/import/config.hpp"
#include "lmm/import/motion.hpp"

namespace lmm::pipeline {

// Everything lmm-import needs besides the output path.
struct ImportOptions {
  std::vector<std::string> inputs;  // BVH and glTF files or directories (searched recursively)
  SkeletonConfig skeleton;
  FeatureSchemaConfig features;
  float fps = 60.0f;
  bool mirror = true;
  bool skip_bad = false;  // skip any bad file (parse, range or processing fault) with a warning
  int threads = 2;
  std::string mesh = "none";  // convert_motion_files' .glb mesh: output_mesh's --mesh value
  std::function<void(const std::string&)> warn;  // skipped files and sanity warnings
  std::function<void(const std::string&)> info;  // how each glTF file's units and axes were read
  std::function<void(const char* stage, int done, int total)> progress;
};

// Contact labels of one contact joint over the imported frames.
struct ContactJointSummary {
  std::string joint;
  double ratio = 0.0;           // fraction of frames labelled in contact
  float height_threshold = 0.0f;  // m above the ground (the resting height plus height_above_rest)
};

// Frames of the database that carry one tag.
struct TagCount {
  std::string tag;
  int frames = 0;
};

// What an import produced.
struct ImportSummary {
  int files = 0;          // BVH files and glTF animations imported
  int skipped_files = 0;  // bad files skipped with skip_bad
  int frames = 0;
  int clips = 0;          // ranges, mirrored ones included
  int joints = 0;
  int feature_dims = 0;
  float fps = 0.0f;
  double contact_ratio = 0.0;  // fraction of (frame, contact joint) labelled in contact
  std::vector<ContactJointSummary> contact_joints;
  double moving_ratio = 0.0;   // fraction of frames whose simulation bone moves at kMovingSpeed or faster
  SkeletonHeight height;       // over the imported frames (mirrored copies included)
  size_t bytes = 0;            // size of the written file
  SpeedProfile speeds;         // the controller speeds the database gives (Database::speeds)
  std::vector<TagCount> tags;  // per declared tag, in bit order (empty when the config declares none)
  std::vector<std::string> action_tags;  // the tags searches requiring no tag leave out (TagConfig::kept_out)
  int events = 0;              // events written
  int no_entry_frames = 0;     // frames marked no-entry
  int biased_frames = 0;       // frames with a non-zero cost bias
};

// One processed clip, ready to be packed into a database.
struct ProcessedClip {
  std::string name;
  bool mirrored = false;
  Clip clip;  // local transforms including the simulation bone (joint 0)
  std::vector<Vec3> velocities, angular_velocities;
  std::vector<uint8_t> contacts;  // frames x contact joints
  std::vector<float> features;    // frames x dims, raw (unnormalised)
  ClipAnnotations annotations;    // tags, no-entry, cost biases and events of its frames
};

// The motion files (.bvh, .gltf, .glb) named by `inputs` (directories searched recursively,
// sorted). Throws InputError for a missing path or when no motion file is found.
std::vector<std::string> collect_motion_files(const std::vector<std::string>& inputs);

// The formats convert_motion_files writes.
enum class MotionFormat { Bvh, Glb };

// Reads every motion file of `options.inputs` as import_database does (BVH in the skeleton
// config's unit_scale and up axis, glTF in metres and Y-up; nothing collapsed or dropped) and
// writes each clip (one per BVH file, one per glTF animation) atomically to
// `out_dir`/<clip name>.bvh (the config's unit_scale, Y-up, ZXY rotations) or .glb (write_glb,
// with output_mesh(options.mesh) of each file's skeleton, made before anything is written);
// returns the paths written. Each BVH clip is checked before it is written: joint names BVH
// cannot hold are renamed uniquely (each through options.warn), and a clip whose frame time, frame
// count, depth or values BVH cannot carry is refused. A bad file stops the conversion
// (InputError naming it) unless options.skip_bad, which warns and goes on.
std::vector<std::string> convert_motion_files(const ImportOptions& options, MotionFormat format, const std::string& out_dir);

// The root (joint 0) of `frame`; outside the clip, the end frame's root moved on at that
// frame's velocity (clips are short, so clamping would fake a stop at every clip end).
RootSample root_sample(const ProcessedClip& clip, int frame);

// Raw features of every frame of a processed clip (trajectory samples from root_sample); the
// phase groups' dims are left 0 (write_phase_features fills them).
std::vector<float> clip_features(const FeatureSchema& schema, const Skeleton& skeleton,
                                 const ProcessedClip& clip);

// Normalises rows x schema.dims features in place per group (basic motion matching, normalize_feature: mean
// offset, scale = mean std / weight) and returns offset and scale. Throws InputError naming a
// group whose variance is zero.
void normalize_groups(const FeatureSchema& schema, std::vector<float>& features,
                      std::vector<float>& offset, std::vector<float>& scale);

// Largest difference of a joint's rest offset from the first file's, as a fraction of the
// first file's rest height (SkeletonHeight::rest), before a file counts as another skeleton.
constexpr float kOffsetTolerance = 0.05f;
// Sanity ranges: a fraction of (frame, contact joint) pairs labelled in contact outside
// [kMinContactRatio, kMaxContactRatio] is warned about (thresholds or units are likely wrong).
constexpr double kMinContactRatio = 0.2, kMaxContactRatio = 0.8;
// A frame moves when its simulation bone is at least this fast (m/s; as Database::speeds).
constexpr float kMovingSpeed = 0.3f;
// Standing-only data: fewer than this fraction of frames move. Feet stand on the ground in
// nearly every frame of it, so a contact ratio above kMaxContactRatio is expected there.
constexpr double kStandingMovingRatio = 0.1;

// Imports, builds and atomically writes the database to `out_path`, after loading it with the
// runtime loader, and reads it back. A schema with a phase group is refused before any file is
// read (lmm-import computes no phases: refuse_phase_groups). A bad file (parse, range or
// processing fault, or rest offsets beyond kOffsetTolerance of the first file's) stops the
// import unless skip_bad.
// Throws InputError naming the file, line, key or joint at fault (a [mirror] pattern that
// pairs no joints is one); on error nothing is written (and a file that does not read back is
// removed). When the first good file looks Z-up under up_axis "y" (or the reverse; up_axis_hint)
// options.warn gets an "up axis" warning before any clip is processed. Once written, it gets: a
// skeleton height outside the config's [checks] height_range (pointing at the up axis first
// when the files looked Z-up, else at unit_scale); a contact
// ratio outside [kMinContactRatio, kMaxContactRatio] (above it only unless the data is
// standing-only, kStandingMovingRatio); a config without [contacts] joints (no labels). A T-pose
// or reference pose before a file's take (find_leading_jump) is dropped with a warning naming
// the file; a clip of fewer than kMinClipFrames frames is a bad file. The files are turned to
// Y-up from the config's up_axis, and a root named kSimulationBoneName (lmm-sim's output) is
// removed (collapse_simulation_root). Tags, no-entry frames, cost biases and events come from the
// config's [tags] / [events] and each file's sidecar (load_file_annotations; a bad sidecar makes a
// bad file); excluded ranges split a file into one clip per kept part (kept_parts). Annotation
// tensors are written only when something is declared.
ImportSummary import_database(const ImportOptions& options, const std::string& out_path);

}  // namespace lmm::pipeline
