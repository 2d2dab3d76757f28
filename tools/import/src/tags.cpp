// Tags, ranges and events mapped onto imported clips, and the tags derived from the motion.
#include "lmm/import/tags.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/common/errors.hpp"
#include "lmm/import/motion.hpp"

namespace lmm::pipeline {
namespace {

// Tolerance on frame times (in output frames) so that frames meeting exactly are not lost to rounding.
constexpr double kFrameTimeTolerance = 1e-6;
constexpr double kDegreesPerRadian = 57.29577951308232;

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

// The partner of `name` in `pairs`, or `name` itself.
const std::string& partner(const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& name) {
  for (const auto& [left, right] : pairs) {
    if (name == left) return right;
    if (name == right) return left;
  }
  return name;
}

// Output frame position of file frame `frame` of `m`'s part (fractional).
double clip_position(const PartMapping& m, int frame) {
  return double(frame - m.part.first) * double(m.clip_fps) / double(m.source_fps);
}

// The ranges' tags, no-entry flags and cost biases over the clip's frames.
void mark_ranges(const FileAnnotations& file, const PartMapping& mapping, ClipAnnotations& out) {
  for (const TaggedRange& r : file.ranges) {
    const auto [first, last] = clip_frames_of(mapping, r.first, r.last);
    for (int f = first; f <= last; ++f) {
      out.tags[size_t(f)] |= r.tags;
      out.no_entry[size_t(f)] |= uint8_t(r.no_entry);
      if (r.cost_bias) out.cost_bias[size_t(f)] = *r.cost_bias;
    }
  }
}

}  // namespace

int TagConfig::tag(const std::string& name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : int(it - names.begin());
}

TagMask TagConfig::mask(const std::vector<std::string>& tags, const std::string& where) const {
  TagMask m = 0;
  for (const std::string& name : tags) {
    const int t = tag(name);
    if (t < 0) {
      throw InputError(where + ": unknown tag '" + printable(name) + "' (the tags of " + source +
                       " [tags]: " + joined(names) + ")");
    }
    m |= TagMask(1) << t;
  }
  return m;
}

TagMask TagConfig::file_tags(const std::string& stem) const {
  TagMask m = 0;
  for (const FileTagRule& rule : files) {
    if (glob_match(rule.pattern, stem)) m |= rule.tags;
  }
  return m;
}

TagMask TagConfig::mirrored(TagMask tags) const {
  TagMask out = 0;
  for (size_t t = 0; t < names.size(); ++t) {
    if ((tags >> t & 1) != 0) out |= TagMask(1) << tag(partner(mirror, names[t]));
  }
  return out;
}

std::string TagConfig::mirrored(const std::string& event) const { return partner(mirror, event); }

void TagConfig::check_mirrored_events(const std::vector<std::string>& events) const {
  const auto named = [&](const std::string& name) { return std::find(events.begin(), events.end(), name) != events.end(); };
  for (const auto& [left, right] : mirror) {
    if (tag(left) >= 0 || named(left) || named(right)) continue;
    throw InputError(mirror_where + ": the pair [\"" + printable(left) + "\", \"" + printable(right) +
                     "\"] names no declared tag and no event of the imported clips (tags: " + joined(names) +
                     "; events: " + joined(events) + "); names are case-sensitive");
  }
}

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string::npos) {  // let the last '*' take one more character
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<KeptPart> kept_parts(const FileAnnotations& file, int file_frames, int dropped) {
  std::vector<const TaggedRange*> excluded;
  for (const TaggedRange& r : file.ranges) {
    if (r.exclude) excluded.push_back(&r);
  }
  std::sort(excluded.begin(), excluded.end(), [](const TaggedRange* a, const TaggedRange* b) { return a->first < b->first; });
  std::vector<KeptPart> parts;
  const auto keep = [&](int first, int last, const TaggedRange* bound) {
    if (last < first) return;
    if (last - first + 1 < kMinClipFrames) {
      throw InputError(bound->where + ": the excluded range leaves frames " + std::to_string(first) + " to " +
                       std::to_string(last) + " of the file, fewer than a clip needs (" +
                       std::to_string(kMinClipFrames) + " frames)");
    }
    parts.push_back(KeptPart{first, last});
  };
  int next = dropped;
  for (const TaggedRange* r : excluded) {
    keep(next, r->first - 1, r);
    next = std::max(next, r->last + 1);
  }
  if (!excluded.empty()) keep(next, file_frames - 1, excluded.back());
  if (excluded.empty()) parts.push_back(KeptPart{dropped, file_frames - 1});
  if (parts.empty()) throw InputError(file.sidecar + ": the excluded ranges leave no frame of the file to import");
  return parts;
}

std::pair<int, int> clip_frames_of(const PartMapping& mapping, int first, int last) {
  const int a = std::max(first, mapping.part.first), b = std::min(last, mapping.part.last);
  if (a > b) return {0, -1};
  const int from = int(std::ceil(clip_position(mapping, a) - kFrameTimeTolerance));
  const int to = std::min(mapping.clip_frames - 1, int(std::floor(clip_position(mapping, b) + kFrameTimeTolerance)));
  return {from, to};
}

int clip_frame_of(const PartMapping& mapping, int frame) {
  return std::min(mapping.clip_frames - 1, int(std::lround(clip_position(mapping, frame))));
}

ClipAnnotations map_file_annotations(const FileAnnotations& file, TagMask file_tags, const PartMapping& mapping,
                                     const TagConfig& config) {
  const size_t frames = size_t(mapping.clip_frames);
  ClipAnnotations out;
  out.tags.assign(frames, file_tags | file.tags);
  out.no_entry.assign(frames, 0);
  out.cost_bias.assign(frames, 0.0f);
  mark_ranges(file, mapping, out);
  for (const MarkedEvent& e : file.events) {
    if (e.frame < mapping.part.first || e.frame > mapping.part.last) continue;
    out.events.emplace_back(clip_frame_of(mapping, e.frame), e.name);
  }
  std::stable_sort(out.events.begin(), out.events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!mapping.mirrored) return out;
  for (TagMask& tags : out.tags) tags = config.mirrored(tags);
  for (auto& event : out.events) event.second = config.mirrored(event.second);
  return out;
}

StandingMotion standing_motion(const Skeleton& skeleton, const Clip& clip, const std::vector<Vec3>& velocities,
                               const std::vector<Vec3>& angular_velocities, const std::vector<int>& contact_joints) {
  StandingMotion motion;
  const size_t joints = size_t(clip.joints);
  for (int f = 0; f < clip.frames; ++f) {
    const Vec3 v = velocities[size_t(f) * joints], w = angular_velocities[size_t(f) * joints];
    motion.root_speed.push_back(std::hypot(v.x, v.z));
    motion.turn_rate.push_back(w.y);
  }
  motion.contact_speeds = joint_motion(skeleton, clip, velocities, angular_velocities, contact_joints).speeds;
  motion.contact_joints = int(contact_joints.size());
  std::vector<int> body;  // every joint but the simulation bone
  for (int j = 1; j < clip.joints; ++j) body.push_back(j);
  const std::vector<float> speeds = joint_motion(skeleton, clip, velocities, angular_velocities, body).speeds;
  for (size_t f = 0; f < size_t(clip.frames) && !body.empty(); ++f) {
    const auto first = speeds.begin() + long(f * body.size());
    motion.fastest_joint.push_back(*std::max_element(first, first + long(body.size())));
  }
  motion.fps = clip.fps;
  return motion;
}

std::vector<uint8_t> standing_frames(const StandingSettings& settings, const StandingMotion& motion) {
  const size_t frames = motion.root_speed.size(), joints = size_t(motion.contact_joints);
  const float max_turn = float(settings.max_turn_rate / kDegreesPerRadian);  // rad/s
  std::vector<uint8_t> still(frames, 0);
  for (size_t f = 0; f < frames; ++f) {
    const auto contact = motion.contact_speeds.begin() + long(f * joints);
    still[f] = motion.root_speed[f] < settings.max_root_speed && std::fabs(motion.turn_rate[f]) < max_turn &&
               std::all_of(contact, contact + long(joints), [&](float s) { return s < settings.max_contact_speed; }) &&
               (motion.fastest_joint.empty() || motion.fastest_joint[f] < settings.max_joint_speed);
  }
  const size_t min_run = size_t(std::max(1.0, std::ceil(double(settings.min_duration) * motion.fps - 1e-4)));
  for (size_t start = 0; start < frames;) {
    size_t end = start;
    while (end < frames && still[end] == still[start]) ++end;
    if (still[start] != 0 && end - start < min_run) std::fill(still.begin() + long(start), still.begin() + long(end), 0);
    start = end;
  }
  return still;
}

void add_foot_plants(const std::vector<std::string>& names, const std::vector<uint8_t>& contacts,
                     ClipAnnotations& annotations) {
  const size_t count = names.size();
  if (count == 0) return;
  for (size_t f = 1; f < contacts.size() / count; ++f) {
    for (size_t c = 0; c < count; ++c) {
      if (contacts[(f - 1) * count + c] == 0 && contacts[f * count + c] != 0) {
        annotations.events.emplace_back(int(f), names[c]);
      }
    }
  }
  std::stable_sort(annotations.events.begin(), annotations.events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace lmm::pipeline
