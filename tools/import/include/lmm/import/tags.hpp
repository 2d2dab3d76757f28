// Gameplay annotations at import (docs/configs.md [tags] and [events], docs/formats/tags.md):
// tags declared in the skeleton config (by file-name pattern, or derived from the motion such as
// `standing`), frame ranges and events of the sidecar file next to a BVH file (X.bvh ->
// X.tags.toml), mapped through the importer's dropped leading frames, resampling and mirroring.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmm/asset/frame_annotations.hpp"
#include "lmm/core/math.hpp"
#include "lmm/import/motion.hpp"

namespace lmm::pipeline {

// Name of the derived tag of [tags.standing].
constexpr const char* kStandingTag = "standing";

// Thresholds of the derived `standing` tag: a frame stands when all hold, and runs of standing
// frames shorter than min_duration are not tagged.
struct StandingSettings {
  float max_root_speed = 0.1f;     // m/s: horizontal speed of the simulation bone
  float max_turn_rate = 10.0f;     // deg/s: turning rate of the simulation bone about the vertical
  float max_contact_speed = 0.15f; // m/s: speed of every [contacts] joint
  float max_joint_speed = INFINITY;  // m/s: speed of every joint (a body at rest, not gesturing), when given
  float min_duration = 0.5f;       // s
};

// Accepted ranges of the [tags.standing] keys.
constexpr double kMaxStandingSpeed = 10.0;     // m/s, from 0 (both speeds)
constexpr double kMaxStandingTurnRate = 720.0; // deg/s, from 0
constexpr double kMaxStandingDuration = 60.0;  // s, from 0

// A [[tags.files]] rule: files whose stem matches `pattern` (glob: '*' any run, '?' one
// character) get `tags` on every frame.
struct FileTagRule {
  std::string pattern;
  TagMask tags = 0;
};

// The [tags] and [events] sections of a skeleton config.
struct TagConfig {
  std::string source;                  // the config file, for messages
  std::vector<std::string> names;      // tags in bit order: [tags] names, then `standing` unless declared there
  std::vector<std::pair<std::string, std::string>> mirror;  // tag or event-name pairs swapped on mirrored copies
  std::string mirror_where;            // "CONFIG:LINE: [tags] mirror", for messages
  TagMask actions = 0;                 // [tags] actions: the tags of one-shot actions' frames
  bool enter_actions_freely = false;   // [tags] enter_actions_freely: searches needn't require a tag to enter them
  std::vector<FileTagRule> files;
  std::optional<StandingSettings> standing;
  std::vector<std::string> foot_plants;  // [events] foot_plants: one event name per [contacts] joint, or none

  // Bit index of tag `name`, or -1.
  int tag(const std::string& name) const;
  // The mask of `names`; throws InputError "WHERE: unknown tag 'X'" naming the declared tags.
  TagMask mask(const std::vector<std::string>& names, const std::string& where) const;
  // Whether the config declares any tag or event (else an import writes no annotation).
  bool declares_anything() const { return !names.empty() || !foot_plants.empty(); }
  // The tags of a file with stem `stem` by the [[tags.files]] rules.
  TagMask file_tags(const std::string& stem) const;
  // `tags` with every sided tag swapped by `mirror`.
  TagMask mirrored(TagMask tags) const;
  // `event` swapped by `mirror` (itself when it is in no pair).
  std::string mirrored(const std::string& event) const;
  // Throws InputError naming the mirror pair when a pair of event names names none of `events`
  // (the events of the imported clips: foot plants and sidecar events).
  void check_mirrored_events(const std::vector<std::string>& events) const;
  // The tags that searches requiring no tag leave out: `actions`, none with enter_actions_freely.
  TagMask kept_out() const { return enter_actions_freely ? 0 : actions; }
};

// Whether `text` matches the glob `pattern` ('*' any run of characters, '?' one character).
bool glob_match(const std::string& pattern, const std::string& text);

// A [[range]] of a sidecar file, in the BVH file's own frame numbers.
struct TaggedRange {
  int first = 0, last = 0;  // inclusive
  TagMask tags = 0;
  bool exclude = false;
  bool no_entry = false;
  std::optional<float> cost_bias;
  std::string where;  // "SIDECAR:LINE", for messages
};

// An [[event]] of a sidecar file.
struct MarkedEvent {
  int frame = 0;
  std::string name;
  std::string where;  // "SIDECAR:LINE"
};

// What the sidecar of one BVH file declares (nothing when it has none).
struct FileAnnotations {
  std::string sidecar;  // path of the sidecar read, or ""
  TagMask tags = 0;     // whole-file tags
  std::vector<TaggedRange> ranges;
  std::vector<MarkedEvent> events;
};

// X.bvh -> X.tags.toml.
std::string sidecar_path(const std::string& bvh_path);

// Reads the sidecar of `bvh_path` when it exists (an empty FileAnnotations when not) and checks it
// against `config` and the file's `file_frames` frames, of which the importer drops the first
// `dropped` (a pose before the take). Throws InputError "SIDECAR:LINE: ..." naming the key, tag or
// frame at fault: an unknown key or tag, a bad type, a frame outside [0, file_frames) or among
// the dropped ones, first > last, a range with nothing to declare, an exclude range overlapping
// any other kind of range or an event, two different cost biases over one frame.
FileAnnotations load_file_annotations(const std::string& bvh_path, const TagConfig& config, int file_frames,
                                      int dropped);

// A run of a file's frames that is imported: the take between excluded ranges, in file frames.
struct KeptPart {
  int first = 0, last = 0;  // inclusive
};

// The parts of frames [dropped, file_frames) outside the excluded ranges of `file`, in order.
// Throws InputError naming the sidecar line of the exclude range that leaves a part of fewer
// than kMinClipFrames frames.
std::vector<KeptPart> kept_parts(const FileAnnotations& file, int file_frames, int dropped);

// The annotations of one imported clip, per frame of the clip.
struct ClipAnnotations {
  std::vector<TagMask> tags;
  std::vector<uint8_t> no_entry;
  std::vector<float> cost_bias;
  std::vector<std::pair<int, std::string>> events;  // (frame, name), frames ascending
};

// How a part of a file became a clip: its file frames at `source_fps`, resampled to `clip_fps`
// into `clip_frames` frames, mirrored or not.
struct PartMapping {
  KeptPart part;
  float source_fps = 30.0f;
  float clip_fps = 60.0f;
  int clip_frames = 0;
  bool mirrored = false;
};

// Clip frame range covering the file frames [first, last] of `mapping`'s part: the frames whose
// time lies within [time of first, time of last], times counted from the part's first frame.
// Empty (first > last) only when resampling to a lower rate leaves no frame there.
std::pair<int, int> clip_frames_of(const PartMapping& mapping, int first, int last);
// The clip frame nearest in time to file frame `frame` of `mapping`'s part.
int clip_frame_of(const PartMapping& mapping, int frame);

// The annotations of `file` (and the whole-file `file_tags`) on the clip that `mapping` made,
// with sided tags and event names swapped by `config` on a mirrored clip.
ClipAnnotations map_file_annotations(const FileAnnotations& file, TagMask file_tags, const PartMapping& mapping,
                                     const TagConfig& config);

// Motion of a clip that derived tags are judged on: per frame, the simulation bone's
// horizontal speed (m/s) and turning rate (rad/s about the vertical), and the speeds (m/s) of
// the contact joints (frames x contact joints).
struct StandingMotion {
  std::vector<float> root_speed, turn_rate, contact_speeds;
  std::vector<float> fastest_joint;  // per frame: the fastest joint's global speed (m/s), the simulation bone aside
  int contact_joints = 0;
  float fps = 60.0f;
};

// The StandingMotion of a clip whose joint 0 is the simulation bone, with its local velocities,
// on `skeleton`, judging the joints `contact_joints`.
StandingMotion standing_motion(const Skeleton& skeleton, const Clip& clip, const std::vector<Vec3>& velocities,
                               const std::vector<Vec3>& angular_velocities, const std::vector<int>& contact_joints);

// 1 on each frame of a run of at least settings.min_duration (rounded up to frames) in which the
// root speed, turning rate, every contact speed and the fastest joint's speed are below their
// limits; 0 elsewhere.
std::vector<uint8_t> standing_frames(const StandingSettings& settings, const StandingMotion& motion);

// Adds event names[c] on each frame whose contact label of joint c (`contacts`: frames x
// names.size()) goes from 0 to 1 (none on the first frame), keeping the events in frame order.
void add_foot_plants(const std::vector<std::string>& names, const std::vector<uint8_t>& contacts,
                     ClipAnnotations& annotations);

}  // namespace lmm::pipeline
