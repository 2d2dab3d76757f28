#include "lmm/import/import.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/animation_file.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/import/phase_features.hpp"

#include "database_writing.hpp"

namespace lmm::pipeline {
namespace {

namespace fs = std::filesystem;

// A BVH file or glTF / FBX animation read and converted to local transforms (or the reason it could not be).
struct ParsedFile {
  std::string path;             // the file, and for a glTF or FBX file of several animations the animation
  std::string annotation_path;  // its sidecar's path with another extension (of one of several animations: <stem>.<animation>.<ext>)
  std::string info;             // how the file's units and axes were read (glTF, FBX), or ""
  Skeleton skeleton;
  Clip clip;
  std::string error;
  std::string note;  // a warning about the file (leading frames dropped), or ""
  int file_frames = 0;  // frames in the file
  int dropped = 0;      // leading frames dropped (a pose before the take)
  FileAnnotations annotations;  // of its sidecar
  std::vector<KeptPart> parts;  // the file frames imported, as one clip each
};

// Everything derived once from the reference skeleton and the configs.
struct Plan {
  Skeleton skeleton;  // final skeleton, joint 0 = simulation bone
  MirrorMap mirror;
  SimulationBoneSettings simulation;
  ContactSettings contacts;
  FeatureSchema schema;
  std::vector<std::pair<std::string, int>> roles;
};

// Calls fn(i) for i in [0, count) on up to `threads` threads (fewer when the system starts no
// more). An exception from fn stops the remaining work and the first one is rethrown here once
// every thread has joined: none escapes a worker thread.
void parallel_for(int count, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (int i = next++; i < count; i = next++) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < std::min(threads, count); ++t) pool.emplace_back(worker);
  } catch (const std::exception&) {  // no more threads: the ones started share the work
  }
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// `message` about the file at `path`, starting with the path.
std::string file_error(const std::string& path, const std::string& message) {
  return message.rfind(path, 0) == 0 ? message : path + ": " + message;
}

// The clip name of a BVH file: its stem with control characters replaced by '_' (the database
// stores clip names one per line).
std::string clip_name(const std::string& path) {
  std::string name = fs::path(path).stem().string();
  const auto control = [](char c) { return std::iscntrl(static_cast<unsigned char>(c)) != 0; };
  std::replace_if(name.begin(), name.end(), control, '_');
  return name;
}

// Throws InputError when `clip` has fewer than kMinClipFrames frames; `how` says how it got them.
void check_clip_frames(const Clip& clip, const std::string& how) {
  if (clip.frames >= kMinClipFrames) return;
  throw InputError(how + " " + std::to_string(clip.frames) + " frame" + (clip.frames == 1 ? "" : "s") + " at " +
                   format_number(clip.fps) + " Hz: a clip needs at least " + std::to_string(kMinClipFrames) +
                   " frames (velocities and contacts are differences between frames)");
}

// Drops a T-pose or reference pose before the take (find_leading_jump) from `parsed`, with a note.
void drop_leading_pose(ParsedFile& parsed) {
  const LeadingJump jump = find_leading_jump(parsed.skeleton, parsed.clip, kMaxJointJumpSpeed);
  if (jump.frames == 0) return;
  keep_frames(parsed.clip, jump.frames, parsed.clip.frames - jump.frames);
  parsed.dropped = jump.frames;
  parsed.note = parsed.path + ": dropped the first " + std::to_string(jump.frames) + " frame" +
                (jump.frames == 1 ? "" : "s") + ", a pose before the take (a T-pose?): joint '" +
                parsed.skeleton.names[size_t(jump.joint)] + "' moves at " + format_number(jump.speed) +
                " m/s from frame " + std::to_string(jump.frames - 1) + " to " + std::to_string(jump.frames) +
                " (a jump: faster than " + format_number(kMaxJointJumpSpeed) + " m/s)";
}

// The parsed files of `path` before processing: its skeleton and clip (one per glTF or FBX
// animation), in metres and Y-up; a BVH file's units and axes are the config's, a glTF or FBX
// file's its own.
std::vector<ParsedFile> read_source(const std::string& path, const SkeletonConfig& config) {
  if (!is_animation_file_path(path)) {
    ParsedFile parsed;
    parsed.path = parsed.annotation_path = path;
    clip_from_bvh(read_bvh(path), config.unit_scale, clip_name(path), parsed.skeleton, parsed.clip);
    convert_up_axis(config.up_axis, parsed.skeleton, parsed.clip);
    return {parsed};
  }
  AnimationFile file = read_animation_file(path);
  std::vector<ParsedFile> out(file.clips.size());
  const fs::path base(path);
  for (size_t a = 0; a < out.size(); ++a) {
    ParsedFile& parsed = out[a];
    const bool several = out.size() > 1;
    parsed.path = several ? path + " (animation '" + printable(file.clips[a].name) + "')" : path;
    parsed.annotation_path = several ? (base.parent_path() / (base.stem().string() + "." + file.clips[a].name)).string() + base.extension().string() : path;
    parsed.info = path + ": " + file.units;
    parsed.skeleton = file.skeleton;
    parsed.clip = std::move(file.clips[a]);
    parsed.clip.name = clip_name(parsed.annotation_path);
  }
  return out;
}

// Collapses the config's joints and lmm-sim's simulation root, drops a leading pose and reads
// the annotations of a read file.
void prepare_clip(ParsedFile& parsed, const SkeletonConfig& config) {
  std::vector<std::string> present;
  for (const std::string& name : config.collapse) {
    if (parsed.skeleton.find(name) >= 0) present.push_back(name);
  }
  collapse_joints(present, parsed.skeleton, parsed.clip);
  collapse_simulation_root(parsed.skeleton, parsed.clip);
  check_clip_frames(parsed.clip, "the file has");
  parsed.file_frames = parsed.clip.frames;
  drop_leading_pose(parsed);
  check_clip_frames(parsed.clip, "after dropping the leading pose, the clip has");
  parsed.annotations = load_file_annotations(parsed.annotation_path, config.tags, parsed.file_frames, parsed.dropped);
  parsed.parts = kept_parts(parsed.annotations, parsed.file_frames, parsed.dropped);
}

// The clips of the file at `path`, each prepared (prepare_clip), or one with the error that
// stopped it.
std::vector<ParsedFile> parse_file(const std::string& path, const SkeletonConfig& config) {
  std::vector<ParsedFile> parsed;
  try {
    parsed = read_source(path, config);
  } catch (const std::exception& e) {  // InputError, or e.g. bad_alloc on a hostile file
    ParsedFile failed;
    failed.path = failed.annotation_path = path;
    failed.error = file_error(path, e.what());
    return {failed};
  }
  for (ParsedFile& p : parsed) {
    try {
      prepare_clip(p, config);
    } catch (const std::exception& e) {
      p.error = file_error(p.path, e.what());
    }
  }
  return parsed;
}

// Stops the import on a bad file, or with skip_bad counts it and warns.
void reject_file(const std::string& error, const ImportOptions& options, ImportSummary& summary) {
  if (!options.skip_bad) throw InputError(error + " (nothing written; use --skip-bad to skip bad files)");
  ++summary.skipped_files;
  if (options.warn) options.warn("skipping " + error);
}

// The roles of `config` whose joints `skeleton` has, with their indices.
std::vector<std::pair<std::string, int>> present_roles(const SkeletonConfig& config, const Skeleton& skeleton) {
  std::vector<std::pair<std::string, int>> roles;
  for (const auto& role : config.roles) {
    const int joint = skeleton.find(role.second);
    if (joint >= 0) roles.emplace_back(role.first, joint);
  }
  return roles;
}

std::string vector_text(Vec3 v) {
  return "(" + format_number(v.x) + ", " + format_number(v.y) + ", " + format_number(v.z) + ")";
}

// "" when both files have the same joints and parents, and rest offsets (of non-root joints:
// a root's comes from its position channels) within `tolerance` metres; else the first
// difference in names or parents, or the joint whose offset differs most.
std::string skeleton_mismatch(const ParsedFile& reference, const ParsedFile& other, float tolerance) {
  const Skeleton &a = reference.skeleton, &b = other.skeleton;
  if (a.joint_count() != b.joint_count()) {
    return "has " + std::to_string(b.joint_count()) + " joints, expected " + std::to_string(a.joint_count());
  }
  int worst = -1;
  float worst_distance = tolerance;
  for (int j = 0; j < a.joint_count(); ++j) {
    if (a.names[j] != b.names[j] || a.parents[j] != b.parents[j]) {
      return "joint " + std::to_string(j) + " is '" + b.names[j] + "', expected '" + a.names[j] +
             "' with the same parent";
    }
    const float distance = length(a.offsets[size_t(j)] - b.offsets[size_t(j)]);
    if (a.parents[j] >= 0 && distance > worst_distance) {
      worst = j;
      worst_distance = distance;
    }
  }
  if (worst < 0) return "";
  return "joint '" + b.names[size_t(worst)] + "' has the rest offset " + vector_text(b.offsets[size_t(worst)]) +
         " m, " + vector_text(a.offsets[size_t(worst)]) + " m in " + reference.path + ": " +
         format_number(worst_distance) + " m apart, more than " + format_number(tolerance) + " m (" +
         format_number(100.0 * kOffsetTolerance) + "% of the skeleton height): files in other length units " +
         "(unit_scale) or of another skeleton";
}

// The height of the file `reference` (its offset tolerance for skeleton_mismatch is
// kOffsetTolerance x its rest height; up_axis_hint judges its up axis).
SkeletonHeight reference_height(const ParsedFile& reference, const SkeletonConfig& config) {
  return measure_height(reference.skeleton, present_roles(config, reference.skeleton), pose_frames(reference.clip));
}

std::vector<int> resolve_all(const SkeletonConfig& config, const Skeleton& skeleton,
                             const std::vector<std::string>& names, const std::string& needed_by) {
  std::vector<int> out;
  for (const std::string& n : names) out.push_back(config.resolve(skeleton, n, needed_by));
  return out;
}

std::string pattern_text(const std::pair<std::string, std::string>& pattern) {
  return "[\"" + printable(pattern.first) + "\", \"" + printable(pattern.second) + "\"]";
}

// Throws InputError naming the config when a [mirror] pattern pairs no two joints of
// `skeleton`, or when `mirroring` without any pattern (every joint would be its own partner).
void check_mirror_patterns(const SkeletonConfig& config, const Skeleton& skeleton, bool mirroring) {
  for (const auto& pattern : config.mirror_patterns) {
    const std::vector<int> pairs = mirror_pairs(skeleton, {pattern});
    bool paired = false;
    for (size_t j = 0; j < pairs.size(); ++j) paired = paired || pairs[j] != int(j);
    if (!paired) {
      throw InputError(config.source + " [mirror]: pattern " + pattern_text(pattern) +
                       " pairs no joints (no two joint names differ by it); joints: " + skeleton.joined_names());
    }
  }
  if (mirroring && config.mirror_patterns.empty()) {
    throw InputError(config.source + " [mirror]: no 'patterns', so mirroring would pair no left and right "
                     "joints; add patterns such as [[\"_L\", \"_R\"]] or import with --no-mirror");
  }
}

// Per contact joint (an index in the final skeleton, whose joint 0 is the simulation bone on
// the ground), its resting height over the files: its kRestingHeightPercentile height.
std::vector<float> resting_heights(const std::vector<const ParsedFile*>& files, const std::vector<int>& joints) {
  std::vector<float> rest;
  for (int joint : joints) {
    std::vector<float> heights;  // none for the simulation bone: it stays on the ground
    for (size_t f = 0; joint > 0 && f < files.size(); ++f) {
      const std::vector<float> h = joint_heights(files[f]->skeleton, pose_frames(files[f]->clip), joint - 1);
      heights.insert(heights.end(), h.begin(), h.end());
    }
    rest.push_back(percentile(std::move(heights), kRestingHeightPercentile));
  }
  return rest;
}

Plan make_plan(const std::vector<const ParsedFile*>& good, const ImportOptions& options) {
  const Skeleton& bvh_skeleton = good.front()->skeleton;
  const Clip& sample = good.front()->clip;
  const SkeletonConfig& config = options.skeleton;
  Plan plan;
  std::vector<const Clip*> clips;
  for (const ParsedFile* file : good) clips.push_back(&file->clip);
  const std::string simulation = config.source + " [simulation]";
  plan.simulation.hips = config.resolve(bvh_skeleton, "hips", simulation + " (the hips projected on the ground)");
  plan.simulation.left = resolve_all(config, bvh_skeleton, config.facing_left, simulation + " facing_left");
  plan.simulation.right = resolve_all(config, bvh_skeleton, config.facing_right, simulation + " facing_right");
  check_mirror_patterns(config, bvh_skeleton, options.mirror);
  try {
    plan.mirror = mirror_map(bvh_skeleton, config.mirror_patterns, mean_local_rotations(clips));
  } catch (const InputError& e) {  // "mirror: FAULT", named after the config
    const std::string fault = e.what();
    throw InputError(config.source + " [mirror] patterns: " + fault.substr(fault.rfind("mirror: ", 0) == 0 ? 8 : 0));
  }
  plan.simulation.position_sigma = config.position_smoothing;
  plan.simulation.direction_sigma = config.direction_smoothing;
  plan.skeleton = bvh_skeleton;
  Clip probe = sample;
  probe.frames = 1;
  probe.positions.resize(size_t(probe.joints));
  probe.rotations.resize(size_t(probe.joints));
  add_simulation_bone(plan.simulation, plan.skeleton, probe);
  plan.contacts.joints = resolve_all(config, plan.skeleton, config.contact_joints, config.source + " [contacts] joints");
  plan.contacts.velocity_threshold = config.contact_velocity;
  plan.contacts.height_threshold = config.contact_height_above_rest.value_or(config.contact_height);
  if (config.contact_height_above_rest) plan.contacts.rest_heights = resting_heights(good, plan.contacts.joints);
  plan.contacts.filter_seconds = config.contact_filter;
  for (const auto& role : config.roles) {
    plan.roles.emplace_back(role.first, config.resolve(plan.skeleton, role.first, config.source + " [roles]"));
  }
  plan.schema = resolve_schema(options.features, config, plan.skeleton, options.fps);
  return plan;
}

// Throws InputError at the first joint value of `pc` that the database loader would reject
// (beyond lmm::kMaxJointPosition, kMaxJointSpeed or kMaxJointAngularSpeed, or not finite), or
// at a non-finite feature, so that the file is rejected (or skipped) on its own.
void check_clip_values(const ProcessedClip& pc, const Skeleton& skeleton) {
  struct Series {
    const std::vector<Vec3>& values;
    const char* what;
    float limit;
  };
  for (const Series& s : {Series{pc.clip.positions, "local position (m)", kMaxJointPosition},
                          Series{pc.velocities, "velocity (m/s)", kMaxJointSpeed},
                          Series{pc.angular_velocities, "angular velocity (rad/s)", kMaxJointAngularSpeed}}) {
    for (size_t i = 0; i < s.values.size(); ++i) {
      const Vec3 v = s.values[i];
      if (std::fabs(v.x) <= s.limit && std::fabs(v.y) <= s.limit && std::fabs(v.z) <= s.limit) continue;
      const size_t joints = size_t(pc.clip.joints);
      throw InputError("clip '" + pc.name + "', frame " + std::to_string(i / joints) + ", joint '" +
                       skeleton.names[i % joints] + "': " + s.what + " (" + format_number(v.x) + ", " +
                       format_number(v.y) + ", " + format_number(v.z) + ") is outside the database limit " +
                       range_text(-s.limit, s.limit));
    }
  }
  if (!std::all_of(pc.features.begin(), pc.features.end(), [](float f) { return std::isfinite(f); })) {
    throw InputError("clip '" + pc.name + "' gives non-finite features");
  }
}

// The annotations of `pc`, made from `mapping` of `file`: its file tags and sidecar, the derived
// standing tag and foot plants of `tags`.
ClipAnnotations annotate_clip(const ParsedFile& file, const ProcessedClip& pc, const PartMapping& mapping,
                              const Skeleton& skeleton, const Plan& plan, const TagConfig& tags) {
  ClipAnnotations a = map_file_annotations(file.annotations, tags.file_tags(file.clip.name), mapping, tags);
  if (tags.standing) {
    const TagMask standing = TagMask(1) << tags.tag(kStandingTag);
    const StandingMotion motion =
        standing_motion(skeleton, pc.clip, pc.velocities, pc.angular_velocities, plan.contacts.joints);
    const std::vector<uint8_t> still = standing_frames(*tags.standing, motion);
    for (size_t f = 0; f < still.size(); ++f) a.tags[f] |= still[f] != 0 ? standing : 0;
  }
  add_foot_plants(tags.foot_plants, pc.contacts, a);
  return a;
}

// The clip of file frames `part` of `file`, named after the file and, when the file is split by
// excluded ranges, its frames.
Clip part_clip(const ParsedFile& file, const KeptPart& part) {
  Clip clip = file.clip;
  keep_frames(clip, part.first - file.dropped, part.last - part.first + 1);
  if (file.parts.size() > 1) clip.name += " (frames " + std::to_string(part.first) + "-" + std::to_string(part.last) + ")";
  return clip;
}

ProcessedClip process_clip(const ParsedFile& file, const KeptPart& part, const Plan& plan, bool mirrored,
                           const ImportOptions& options) {
  const Clip source = part_clip(file, part);
  ProcessedClip out;
  out.name = source.name + (mirrored ? " (mirrored)" : "");
  out.mirrored = mirrored;
  Skeleton skeleton = file.skeleton;
  out.clip = resample(source, options.fps);
  check_clip_frames(out.clip, std::to_string(source.frames) + " frames at " + format_number(source.fps) +
                                  " Hz resample to");
  if (mirrored) out.clip = mirror(out.clip, file.skeleton, plan.mirror);
  add_simulation_bone(plan.simulation, skeleton, out.clip);
  compute_velocities(out.clip, out.velocities, out.angular_velocities);
  out.contacts = compute_contacts(plan.contacts, skeleton, out.clip, out.velocities, out.angular_velocities);
  out.features = clip_features(plan.schema, skeleton, out);
  check_clip_values(out, skeleton);
  const PartMapping mapping{part, source.fps, out.clip.fps, out.clip.frames, mirrored};
  out.annotations = annotate_clip(file, out, mapping, skeleton, plan, options.skeleton.tags);
  return out;
}

// The clips of every part of `file`, mirrored or not.
std::vector<ProcessedClip> process_parts(const ParsedFile& file, const Plan& plan, bool mirrored,
                                         const ImportOptions& options) {
  std::vector<ProcessedClip> clips;
  for (const KeptPart& part : file.parts) clips.push_back(process_clip(file, part, plan, mirrored, options));
  return clips;
}

// Processes every file (and its mirrored copy) on the worker threads. A file that fails is a bad
// file (reject_file); the clips of the others, in input order.
std::vector<ProcessedClip> process_files(const std::vector<const ParsedFile*>& files, const Plan& plan,
                                         const ImportOptions& options, ImportSummary& summary) {
  const size_t variants = options.mirror ? 2 : 1;
  std::vector<std::vector<ProcessedClip>> processed(files.size() * variants);
  std::vector<std::string> errors(processed.size());
  std::mutex report;
  int done = 0;
  parallel_for(int(processed.size()), options.threads, [&](int i) {
    const ParsedFile& file = *files[size_t(i) / variants];
    try {
      processed[size_t(i)] = process_parts(file, plan, size_t(i) % variants == 1, options);
    } catch (const std::exception& e) {  // InputError, or e.g. bad_alloc
      errors[size_t(i)] = file_error(file.path, e.what());
    }
    std::lock_guard<std::mutex> lock(report);
    if (options.progress) options.progress("process", ++done, int(processed.size()));
  });
  std::vector<ProcessedClip> clips;
  for (size_t f = 0; f < files.size(); ++f) {
    const auto first = errors.begin() + long(f * variants), last = first + long(variants);
    const auto failed = std::find_if(first, last, [](const std::string& e) { return !e.empty(); });
    if (failed != last) {
      reject_file(*failed, options, summary);
      continue;
    }
    for (size_t v = 0; v < variants; ++v) {
      for (ProcessedClip& clip : processed[f * variants + v]) clips.push_back(std::move(clip));
    }
    ++summary.files;
  }
  return clips;
}

std::string roles_text(const std::vector<std::pair<std::string, int>>& roles) {
  std::string text;
  for (const auto& r : roles) text += r.first + "=" + std::to_string(r.second) + "\n";
  return text;
}

template <typename T, typename Get>
std::vector<T> gather(const std::vector<ProcessedClip>& clips, Get get) {
  std::vector<T> out;
  for (const ProcessedClip& c : clips) {
    const auto& part = get(c);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

// Fills the contact ratios of `summary` from `contacts` (frames x contact joints of `plan`).
void summarize_contacts(const std::vector<uint8_t>& contacts, const Plan& plan, ImportSummary& summary) {
  const size_t count = plan.contacts.joints.size();
  std::vector<size_t> on(count, 0);
  for (size_t i = 0; i < contacts.size(); ++i) on[i % count] += contacts[i];
  size_t total = 0;
  for (size_t c = 0; c < count; ++c) {
    const float rest = plan.contacts.rest_heights.empty() ? 0.0f : plan.contacts.rest_heights[c];
    const double frames = double(contacts.size() / count);
    summary.contact_joints.push_back(ContactJointSummary{plan.skeleton.names[size_t(plan.contacts.joints[c])],
                                                         frames > 0 ? double(on[c]) / frames : 0.0,
                                                         rest + plan.contacts.height_threshold});
    total += on[c];
  }
  summary.contact_ratio = contacts.empty() ? 0.0 : double(total) / double(contacts.size());
}

// The fraction of the clips' frames whose simulation bone (joint 0) moves at kMovingSpeed or faster.
double moving_ratio(const std::vector<ProcessedClip>& clips) {
  size_t moving = 0, frames = 0;
  for (const ProcessedClip& c : clips) {
    for (int f = 0; f < c.clip.frames; ++f) {
      const Vec3 v = c.velocities[size_t(f) * size_t(c.clip.joints)];
      moving += std::hypot(v.x, v.z) >= kMovingSpeed;
    }
    frames += size_t(c.clip.frames);
  }
  return frames == 0 ? 0.0 : double(moving) / double(frames);
}

// The annotation tensors of `clips` under the tags of `config`, with their counts in `summary`.
// Throws InputError when no frame may be entered (every one no-entry).
AnnotationSection annotation_section(const std::vector<ProcessedClip>& clips, const TagConfig& config,
                                     ImportSummary& summary) {
  std::vector<const ClipAnnotations*> annotations;
  for (const ProcessedClip& c : clips) annotations.push_back(&c.annotations);
  AnnotationSection section(config.names, config.kept_out(), annotations);
  if (!section.no_entry.empty() && std::count(section.no_entry.begin(), section.no_entry.end(), uint8_t(0)) == 0) {
    throw InputError("every frame of every clip is no_entry (tag sidecars' [[range]] no_entry = true): no search could "
                     "ever enter the database, so a character could never move; nothing written");
  }
  for (size_t t = 0; t < config.names.size(); ++t) {
    summary.tags.push_back(TagCount{config.names[t], section.tag_frames[t]});
    if ((config.kept_out() >> t & 1) != 0) summary.action_tags.push_back(config.names[t]);
  }
  summary.events = int(section.event_frames.size());
  summary.no_entry_frames = int(std::count(section.no_entry.begin(), section.no_entry.end(), uint8_t(1)));
  summary.biased_frames =
      int(std::count_if(section.cost_bias.begin(), section.cost_bias.end(), [](float b) { return b != 0.0f; }));
  return section;
}

// The float components of `values` (Vec3 or Quat: packed floats) as one array.
template <typename T>
Span<const float> components(const std::vector<T>& values) {
  static_assert(sizeof(T) % sizeof(float) == 0, "a type made of floats");
  return {reinterpret_cast<const float*>(values.data()), values.size() * (sizeof(T) / sizeof(float))};
}

// Packs the clips into a database blob, checks it with the runtime loader, writes it atomically
// and reads it back; `unit_scale` (metres per source file unit) is stored as meta.unit_scale.
// Throws InputError naming `out_path`; nothing is written when the database does not load, and
// a file that does not read back is removed.
void write_database(const std::vector<ProcessedClip>& clips, const Plan& plan, const ImportOptions& options,
                    const std::string& out_path, ImportSummary& summary) {
  const float fps = options.fps, unit_scale = options.skeleton.unit_scale;
  uint64_t total_frames = 0;
  for (const ProcessedClip& c : clips) total_frames += uint64_t(c.clip.frames);
  if (total_frames > uint64_t(std::numeric_limits<int32_t>::max())) {
    throw InputError(out_path + ": the clips hold " + std::to_string(total_frames) +
                     " frames, more than a database indexes (2^31 - 1)");
  }
  const auto positions = gather<Vec3>(clips, [](const ProcessedClip& c) -> const auto& { return c.clip.positions; });
  const auto rotations = gather<Quat>(clips, [](const ProcessedClip& c) -> const auto& { return c.clip.rotations; });
  const auto velocities = gather<Vec3>(clips, [](const ProcessedClip& c) -> const auto& { return c.velocities; });
  const auto angular = gather<Vec3>(clips, [](const ProcessedClip& c) -> const auto& { return c.angular_velocities; });
  const auto contacts = gather<uint8_t>(clips, [](const ProcessedClip& c) -> const auto& { return c.contacts; });
  const FeatureSection features(plan.schema,
                                gather<float>(clips, [](const ProcessedClip& c) -> const auto& { return c.features; }));
  const AnnotationSection annotations = annotation_section(clips, options.skeleton.tags, summary);

  std::vector<int32_t> starts, stops, mirrored, parents(plan.skeleton.parents.begin(), plan.skeleton.parents.end());
  std::string range_names, joint_names;
  for (const ProcessedClip& c : clips) {
    starts.push_back(stops.empty() ? 0 : stops.back());
    stops.push_back(starts.back() + c.clip.frames);
    mirrored.push_back(c.mirrored ? 1 : 0);
    range_names += c.name + "\n";
  }
  for (const std::string& n : plan.skeleton.names) joint_names += n + "\n";
  const std::vector<int32_t> contact_joints(plan.contacts.joints.begin(), plan.contacts.joints.end());
  const uint64_t n = uint64_t(stops.back()), j = uint64_t(plan.skeleton.joint_count());
  const uint64_t r = starts.size();

  DatabaseTensors tensors;
  tensors.fps = fps;
  tensors.unit_scale = Span<const float>(&unit_scale, 1);
  tensors.joint_names = joint_names;
  tensors.roles = roles_text(plan.roles);
  tensors.range_names = range_names;
  tensors.parents = parents;
  tensors.offsets = components(plan.skeleton.offsets);
  tensors.range_start = starts;
  tensors.range_stop = stops;
  tensors.range_mirrored = mirrored;
  tensors.positions = components(positions);
  tensors.rotations = components(rotations);
  tensors.velocities = components(velocities);
  tensors.angular_velocities = components(angular);
  tensors.contact_joints = contact_joints;
  tensors.contacts = contacts;
  tensors.features = features.tensors();
  tensors.annotations = annotations.tensors();
  BlobBuilder b;
  tensors.add_to(b);

  summary.bytes = write_database_blob(b, out_path, &summary.speeds);
  summary.frames = int(n);
  summary.clips = int(r);
  summary.joints = int(j);
  summary.feature_dims = plan.schema.dims;
  summary.fps = fps;
  summarize_contacts(contacts, plan, summary);
  summary.moving_ratio = moving_ratio(clips);
  summary.height = measure_height(plan.skeleton, plan.roles, PoseFrames{positions.data(), rotations.data(), int(n)});
}

// What to check first when a sanity check fails: the up axis when the files look like another
// one (`axis_hint`), else `other`.
std::string advice(const std::string& axis_hint, const std::string& other) {
  return axis_hint.empty() ? other : "check the up axis first (see the 'up axis' warning)";
}

// The skeleton height warning of sanity_warnings, or "" when the height is within range.
std::string height_warning(const SkeletonHeight& h, const SkeletonConfig& config, const std::string& axis_hint) {
  const auto outside = [&](float height) { return !(height >= config.min_height && height <= config.max_height); };
  if (!outside(h.rest) && !outside(h.standing)) return "";
  return "skeleton height: rest " + format_number(h.rest) + " m ('" + h.foot + "' to '" + h.top +
         "' along the bones), median standing " + format_number(h.standing) + " m ('" + h.top +
         "' above the ground), expected within " + range_text(config.min_height, config.max_height) + " m: " +
         advice(axis_hint, "check unit_scale = " + format_number(config.unit_scale) + " in " + config.source +
                               ", or set [checks] height_range there for a character of another size");
}

// The contact warning of sanity_warnings, or "" when the labels look plausible.
std::string contact_warning(const ImportSummary& summary, const SkeletonConfig& config, const std::string& axis_hint) {
  if (summary.contact_joints.empty()) {
    return "no contact labels: " + config.source + " has no [contacts] joints, so no frame is labelled in "
           "contact; lmm-sim --foot-lock has nothing to lock and foot-slide metrics measure nothing on this "
           "database: add [contacts] joints (e.g. [\"left_toe\", \"right_toe\"]) to the skeleton config";
  }
  const bool standing_only = summary.moving_ratio < kStandingMovingRatio;
  const bool too_high = summary.contact_ratio > kMaxContactRatio && !standing_only;
  if (!(summary.contact_ratio < kMinContactRatio || too_high)) return "";
  std::string joints;
  for (const ContactJointSummary& c : summary.contact_joints) {
    joints += (joints.empty() ? "" : ", ") + c.joint + " " + format_number(100.0 * c.ratio) + "%";
  }
  const std::string height = config.contact_height_above_rest
                                  ? "height_above_rest = " + format_number(*config.contact_height_above_rest) + " m"
                                  : "height_threshold = " + format_number(config.contact_height) + " m";
  return "contact labels: " + format_number(100.0 * summary.contact_ratio) + "% of frames over all contact joints (" +
         joints + "), expected " + format_number(100.0 * kMinContactRatio) + "-" +
         format_number(100.0 * kMaxContactRatio) + "%: " +
         advice(axis_hint, "check [contacts] velocity_threshold = " + format_number(config.contact_velocity) +
                               " m/s and " + height + " in " + config.source + ", and unit_scale");
}

// Sanity warnings about an import: height_warning and contact_warning, which point at the up
// axis first when `axis_hint` (up_axis_hint of the first file) is not "".
std::vector<std::string> sanity_warnings(const ImportSummary& summary, const SkeletonConfig& config,
                                         const std::string& axis_hint) {
  std::vector<std::string> warnings;
  for (std::string w : {height_warning(summary.height, config, axis_hint), contact_warning(summary, config, axis_hint)}) {
    if (!w.empty()) warnings.push_back(std::move(w));
  }
  return warnings;
}

constexpr const char* kSidecarSuffix = ".tags.toml";

bool is_sidecar(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.size() > std::strlen(kSidecarSuffix) &&
         name.compare(name.size() - std::strlen(kSidecarSuffix), std::string::npos, kSidecarSuffix) == 0;
}

// The tag sidecars an import of `inputs` could mean: every one in the folders given, and those
// beside a file given whose name starts with the file's stem and a dot.
std::vector<fs::path> sidecars_among(const std::vector<std::string>& inputs) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const std::string& input : inputs) {
    if (fs::is_directory(input, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(input, ec)) {
        if (entry.is_regular_file() && is_sidecar(entry.path())) found.push_back(entry.path());
      }
      continue;
    }
    const fs::path file(input), folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
    const std::string prefix = file.stem().string() + ".";
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && is_sidecar(entry.path()) && name.rfind(prefix, 0) == 0) found.push_back(entry.path());
    }
  }
  return found;
}

// Throws InputError naming the first tag sidecar among `inputs` that belongs to no clip of
// `parsed` (a misspelt stem, X.tags.toml beside a glTF or FBX file of several animations, a
// sidecar of a missing animation): its tags would silently be lost.
void check_orphan_sidecars(const std::vector<std::string>& inputs, const std::vector<ParsedFile>& parsed) {
  std::set<fs::path> expected;
  for (const ParsedFile& p : parsed) expected.insert(fs::path(sidecar_path(p.annotation_path)).lexically_normal());
  for (const fs::path& sidecar : sidecars_among(inputs)) {
    if (expected.count(sidecar.lexically_normal()) != 0) continue;
    throw InputError(sidecar.string() + ": a tag sidecar of no imported clip (X.bvh's is X.tags.toml; an animation A of a glTF " +
                     "or FBX file X of several animations has X.A.tags.toml); rename it after its clip or move it away; "
                     "nothing written");
  }
}

// The event names of `files`' sidecars and the foot plants of `config`.
std::vector<std::string> declared_events(const std::vector<const ParsedFile*>& files, const TagConfig& config) {
  std::vector<std::string> names = config.foot_plants;
  for (const ParsedFile* file : files) {
    for (const MarkedEvent& e : file->annotations.events) {
      if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
    }
  }
  return names;
}

// Whether two skeletons have the same joints, hierarchy and rest offsets.
bool same_rest_pose(const Skeleton& a, const Skeleton& b) {
  if (a.names != b.names || a.parents != b.parents || a.offsets.size() != b.offsets.size()) return false;
  for (size_t j = 0; j < a.offsets.size(); ++j) {
    if (a.offsets[j].x != b.offsets[j].x || a.offsets[j].y != b.offsets[j].y || a.offsets[j].z != b.offsets[j].z) return false;
  }
  return true;
}

}  // namespace

bool is_motion_file(const fs::path& path) {
  return path.extension() == ".bvh" || is_animation_file_path(path.string());
}

std::vector<std::string> collect_motion_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(input, ec)) {
        if (entry.is_regular_file() && is_motion_file(entry.path())) found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(input, ec)) {
      files.push_back(input);
    } else if (fs::exists(input, ec)) {
      throw InputError(input + ": is not a regular file or a folder (a FIFO, socket or device)");
    } else {
      throw InputError(input + ": no such file or directory");
    }
  }
  if (files.empty()) throw InputError("no .bvh, .gltf, .glb or .fbx files found in the given inputs");
  return files;
}

RootSample root_sample(const ProcessedClip& pc, int frame) {
  const Clip& clip = pc.clip;
  const int k = std::clamp(frame, 0, clip.frames - 1);
  const Vec3 velocity = pc.velocities[size_t(k) * size_t(clip.joints)];
  const Vec3 extrapolated = clip.position(k, 0) + velocity * (float(frame - k) / clip.fps);
  return RootSample{Vec3{extrapolated.x, 0.0f, extrapolated.z}, clip.rotation(k, 0)};
}

std::vector<float> clip_features(const FeatureSchema& schema, const Skeleton& skeleton,
                                 const ProcessedClip& pc) {
  const Clip& clip = pc.clip;
  std::vector<float> out(size_t(clip.frames) * schema.dims);
  PoseScratch scratch;
  scratch.resize(clip.joints);
  std::vector<RootSample> trajectory(schema.trajectory_offsets.size());
  for (int f = 0; f < clip.frames; ++f) {
    for (size_t s = 0; s < trajectory.size(); ++s) {
      trajectory[s] = root_sample(pc, f + schema.trajectory_offsets[s]);
    }
    const size_t i = size_t(f) * size_t(clip.joints);
    features_from_local_pose(schema, skeleton.parents.data(), clip.joints, &clip.positions[i],
                             &clip.rotations[i], &pc.velocities[i], &pc.angular_velocities[i],
                             trajectory.data(), scratch, &out[size_t(f) * schema.dims]);
  }
  return out;
}

namespace {

static_assert(kSceneMaxJoints <= kBvhMaxJoints, "every skeleton lmm-import reads fits in a BVH file");

// The BVH file --convert bvh writes for `p` (the skeleton config's unit_scale, ZXY rotations),
// with joint names a BVH file holds (options.warn lists each rename); throws InputError naming
// the file when lmm-import could not read it back (fewer than kMinClipFrames frames, or what
// check_bvh_writable refuses).
BvhFile bvh_to_write(const ParsedFile& p, const ImportOptions& options) {
  check_clip_frames(p.clip, p.path + ": the clip has");
  BvhFile bvh = bvh_from_clip(p.skeleton, p.clip, "ZXY", options.skeleton.unit_scale);
  check_bvh_writable(bvh, p.path);
  for (const BvhRename& r : make_joint_names_writable(bvh)) {
    if (options.warn) {
      options.warn(p.path + ": joint '" + printable(r.from) + "' is written to BVH as '" + r.to +
                   "' (a BVH joint name is unique and holds no whitespace, brace or control character)");
    }
  }
  return bvh;
}

}  // namespace

std::vector<std::string> convert_motion_files(const ImportOptions& options, MotionFormat format, const std::string& out_dir) {
  const std::vector<std::string> paths = collect_motion_files(options.inputs);
  std::vector<ParsedFile> clips;   // every file read (and with bvh, checked) before anything is written
  std::vector<BvhFile> bvh_files;  // with bvh, each clip's file
  ImportSummary unused;
  for (size_t i = 0; i < paths.size(); ++i) {
    try {
      std::vector<ParsedFile> read = read_source(paths[i], options.skeleton);
      std::vector<BvhFile> bvh;
      for (const ParsedFile& p : read) {
        if (format == MotionFormat::Bvh) bvh.push_back(bvh_to_write(p, options));
      }
      if (!read.front().info.empty() && options.info) options.info(read.front().info);
      for (ParsedFile& p : read) clips.push_back(std::move(p));
      for (BvhFile& b : bvh) bvh_files.push_back(std::move(b));
    } catch (const std::exception& e) {
      reject_file(file_error(paths[i], e.what()), options, unused);
    }
    if (options.progress) options.progress("read", int(i) + 1, int(paths.size()));
  }
  std::map<std::string, std::string> source_of;  // clip name -> the file it came from
  for (const ParsedFile& p : clips) {
    const auto [it, fresh] = source_of.emplace(p.clip.name, p.path);
    if (!fresh) throw InputError(p.path + " and " + it->second + " would both be written as '" + p.clip.name + "' (nothing written)");
  }
  // The .glb mesh of each clip, made once for each run of clips on one skeleton (a --mesh file is read once).
  std::vector<SkinnedMesh> meshes;
  std::vector<size_t> mesh_of(clips.size());
  for (size_t c = 0; c < clips.size(); ++c) {
    if (format == MotionFormat::Glb && (c == 0 || !same_rest_pose(clips[c].skeleton, clips[c - 1].skeleton))) {
      meshes.push_back(output_mesh(options.mesh, clips[c].skeleton));
    }
    mesh_of[c] = meshes.empty() ? 0 : meshes.size() - 1;
  }
  fs::create_directories(out_dir);
  std::vector<std::string> written;
  for (size_t c = 0; c < clips.size(); ++c) {
    const ParsedFile& p = clips[c];
    const std::string out = (fs::path(out_dir) / p.clip.name).string() + (format == MotionFormat::Bvh ? ".bvh" : ".glb");
    write_text_atomic(out, format == MotionFormat::Bvh ? write_bvh(bvh_files[c])
                                                       : write_glb(p.skeleton, {p.clip}, &meshes[mesh_of[c]]));
    written.push_back(out);
  }
  return written;
}

ImportSummary import_database(const ImportOptions& options, const std::string& out_path) {
  refuse_phase_groups(options.features);
  const std::vector<std::string> paths = collect_motion_files(options.inputs);
  std::vector<std::vector<ParsedFile>> per_file(paths.size());
  std::atomic<int> done{0};
  std::mutex report;
  parallel_for(int(paths.size()), options.threads, [&](int i) {
    per_file[size_t(i)] = parse_file(paths[size_t(i)], options.skeleton);
    std::lock_guard<std::mutex> lock(report);
    if (options.progress) options.progress("read", ++done, int(paths.size()));
  });
  std::vector<ParsedFile> parsed;
  for (std::vector<ParsedFile>& clips : per_file) {
    if (!clips.front().info.empty() && options.info) options.info(clips.front().info);
    for (ParsedFile& p : clips) parsed.push_back(std::move(p));
  }

  ImportSummary summary;
  std::vector<const ParsedFile*> good;
  float tolerance = 0.0f;
  std::string axis_hint;  // judged on the first good file, and said before anything can fail
  for (ParsedFile& p : parsed) {
    if (!p.note.empty() && options.warn) options.warn(p.note);
    if (p.error.empty() && good.empty()) {
      const SkeletonHeight height = reference_height(p, options.skeleton);
      tolerance = kOffsetTolerance * height.rest;
      axis_hint = up_axis_hint(height, options.skeleton.up_axis);
      if (!axis_hint.empty() && options.warn) options.warn("up axis: " + p.path + ": " + axis_hint);
    }
    if (p.error.empty() && !good.empty()) {
      const std::string mismatch = skeleton_mismatch(*good.front(), p, tolerance);
      if (!mismatch.empty()) p.error = p.path + ": skeleton differs from " + good.front()->path + ": " + mismatch;
    }
    if (p.error.empty()) {
      good.push_back(&p);
    } else {
      reject_file(p.error, options, summary);
    }
  }
  if (good.empty()) throw InputError("every input file was bad; nothing written");
  check_orphan_sidecars(options.inputs, parsed);
  options.skeleton.tags.check_mirrored_events(declared_events(good, options.skeleton.tags));

  const Plan plan = make_plan(good, options);
  const std::vector<ProcessedClip> clips = process_files(good, plan, options, summary);
  if (clips.empty()) throw InputError("every input file was bad; nothing written");
  write_database(clips, plan, options, out_path, summary);
  for (const std::string& warning : sanity_warnings(summary, options.skeleton, axis_hint)) {
    if (options.warn) options.warn(warning);
  }
  return summary;
}

}  // namespace lmm::pipeline
