#include "lmm/import/motion.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/common/report.hpp"

namespace lmm::pipeline {
namespace {

constexpr Vec3 kUp{0.0f, 1.0f, 0.0f};

Vec3 mirror_position(Vec3 p) { return {-p.x, p.y, p.z}; }
Quat mirror_rotation(Quat q) { return {q.w, q.x, -q.y, -q.z}; }

// The shortest rotation turning direction a into direction b.
Quat rotation_between(Vec3 a, Vec3 b) {
  a = normalize(a);
  b = normalize(b);
  const Vec3 axis = cross(a, b);
  if (length(axis) < 1e-6f) {
    if (dot(a, b) > 0.0f) return Quat{};
    const Vec3 side = std::fabs(a.x) < 0.9f ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
    return quat_from_angle_axis(3.14159265f, normalize(cross(a, side)));
  }
  return quat_from_angle_axis(std::atan2(length(axis), dot(a, b)), normalize(axis));
}

// Rotation of the orthonormal frame built from (a, a x b) (TRIAD).
Quat frame_rotation(Vec3 a, Vec3 b) {
  const Vec3 x = normalize(a), z = normalize(cross(a, b)), y = cross(z, x);
  // Rotation matrix with columns x, y, z, converted to a quaternion.
  const float m00 = x.x, m11 = y.y, m22 = z.z, trace = m00 + m11 + m22;
  Quat q;
  if (trace > 0.0f) {
    const float s = 0.5f / std::sqrt(trace + 1.0f);
    q = Quat{0.25f / s, (y.z - z.y) * s, (z.x - x.z) * s, (x.y - y.x) * s};
  } else if (m00 > m11 && m00 > m22) {
    const float s = 2.0f * std::sqrt(1.0f + m00 - m11 - m22);
    q = Quat{(y.z - z.y) / s, 0.25f * s, (y.x + x.y) / s, (z.x + x.z) / s};
  } else if (m11 > m22) {
    const float s = 2.0f * std::sqrt(1.0f + m11 - m00 - m22);
    q = Quat{(z.x - x.z) / s, (y.x + x.y) / s, 0.25f * s, (z.y + y.z) / s};
  } else {
    const float s = 2.0f * std::sqrt(1.0f + m22 - m00 - m11);
    q = Quat{(x.y - y.x) / s, (z.x + x.z) / s, (z.y + y.z) / s, 0.25f * s};
  }
  return normalize(q);
}

// Whether `k` turns each from[i] onto to[i] within 5% of its length.
bool fits(const std::vector<Vec3>& from, const std::vector<Vec3>& to, Quat k) {
  for (size_t i = 0; i < from.size(); ++i) {
    if (length(rotate(k, from[i]) - to[i]) > 0.05f * length(from[i]) + 1e-4f) return false;
  }
  return true;
}

// A rotation K with K * from[i] = to[i]: the two-vector frame fit where two of them point apart,
// else `guess` swung to turn from[0] onto to[0] (keeping its twist); `guess` when from is empty.
Quat fit_rotation(const std::vector<Vec3>& from, const std::vector<Vec3>& to, Quat guess) {
  if (from.empty()) return guess;
  for (size_t i = 1; i < from.size(); ++i) {
    if (length(cross(normalize(from[0]), normalize(from[i]))) > 0.1f) {
      return frame_rotation(to[0], to[i]) * inverse(frame_rotation(from[0], from[i]));
    }
  }
  return normalize(rotation_between(rotate(guess, from[0]), to[0]) * guess);
}

// The rest offsets of joint j's children (`own`) and their partners' mirrored offsets, which a
// correction K_j must map them onto for mirrored frames to keep the skeleton's offsets.
void child_offsets(const Skeleton& skeleton, const std::vector<int>& pairs, int j, std::vector<Vec3>& own,
                   std::vector<Vec3>& mirrored) {
  for (int c = j + 1; c < skeleton.joint_count(); ++c) {
    if (skeleton.parents[size_t(c)] != j || length(skeleton.offsets[size_t(c)]) < 1e-6f) continue;
    own.push_back(skeleton.offsets[size_t(c)]);
    mirrored.push_back(mirror_position(skeleton.offsets[size_t(pairs[size_t(c)])]));
  }
}

// K of a root joint: identity where it already keeps the offsets, else the fit of its children's.
Quat root_correction(const Skeleton& skeleton, const std::vector<int>& pairs, int root) {
  std::vector<Vec3> own, mirrored;
  child_offsets(skeleton, pairs, root, own, mirrored);
  return fits(own, mirrored, Quat{}) ? Quat{} : fit_rotation(own, mirrored, Quat{});
}

// K of a joint below the root: `pose_fit` (the fit to the mean pose) turned so that its children's
// offsets map exactly onto their partners' mirrored offsets.
Quat offset_correction(const Skeleton& skeleton, const std::vector<int>& pairs, int j, Quat pose_fit) {
  std::vector<Vec3> own, mirrored;
  child_offsets(skeleton, pairs, j, own, mirrored);
  return fit_rotation(own, mirrored, pose_fit);
}

// Global positions of every joint for every frame.
std::vector<Vec3> global_positions(const Skeleton& skeleton, const Clip& clip) {
  std::vector<Vec3> out(clip.positions.size());
  std::vector<Quat> rotations(size_t(clip.joints));
  for (int f = 0; f < clip.frames; ++f) {
    forward_kinematics(skeleton.parents.data(), clip.joints, &clip.position(f, 0),
                       &clip.rotation(f, 0), &out[size_t(f) * clip.joints], rotations.data());
  }
  return out;
}

// Calls fn(frame, global positions) for every frame of `poses`.
template <typename Fn>
void for_each_global_pose(const Skeleton& skeleton, const PoseFrames& poses, Fn fn) {
  const int joints = skeleton.joint_count();
  std::vector<Vec3> positions(static_cast<size_t>(joints));
  std::vector<Quat> rotations(static_cast<size_t>(joints));
  for (int f = 0; f < poses.frames; ++f) {
    const size_t i = size_t(f) * size_t(joints);
    forward_kinematics(skeleton.parents.data(), joints, poses.positions + i, poses.rotations + i, positions.data(),
                       rotations.data());
    fn(f, positions.data());
  }
}

// The joints of the given roles that `roles` maps, in the order of `names`.
std::vector<int> role_joints(const std::vector<std::pair<std::string, int>>& roles,
                             const std::vector<std::string>& names) {
  std::vector<int> joints;
  for (const std::string& name : names) {
    for (const auto& role : roles) {
      if (role.first == name) joints.push_back(role.second);
    }
  }
  return joints;
}

// The joint without children whose `heights` (one per joint, e.g. summed over frames) is lowest.
int lowest_leaf(const Skeleton& skeleton, const std::vector<double>& heights) {
  int lowest = -1;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const bool leaf = std::find(skeleton.parents.begin(), skeleton.parents.end(), j) == skeleton.parents.end();
    if (leaf && (lowest < 0 || heights[size_t(j)] < heights[size_t(lowest)])) lowest = j;
  }
  return lowest;
}

// Summed lengths of the rest offsets along the bones between joints `a` and `b`.
float chain_length(const Skeleton& skeleton, int a, int b) {
  std::vector<float> from_a(size_t(skeleton.joint_count()), -1.0f);
  float distance = 0.0f;
  for (int j = a; j >= 0; j = skeleton.parents[size_t(j)]) {
    from_a[size_t(j)] = distance;
    distance += length(skeleton.offsets[size_t(j)]);
  }
  distance = 0.0f;
  for (int j = b; j >= 0; j = skeleton.parents[size_t(j)]) {
    if (from_a[size_t(j)] >= 0.0f) return distance + from_a[size_t(j)];
    distance += length(skeleton.offsets[size_t(j)]);
  }
  return distance;
}

// Gaussian-smoothed copy of one component of a Vec3 series.
void smooth_component(std::vector<Vec3>& series, float Vec3::*component, float sigma) {
  std::vector<float> values(series.size());
  for (size_t i = 0; i < series.size(); ++i) values[i] = series[i].*component;
  values = gaussian_filter(values, sigma);
  for (size_t i = 0; i < series.size(); ++i) series[i].*component = values[i];
}

// "'name'", or "no joint" when `joint` pairs with itself, for mirror_pair_fault.
std::string partner_text(const Skeleton& skeleton, const std::vector<int>& pairs, int joint) {
  const int partner = pairs[size_t(joint)];
  return partner == joint ? "no joint" : "'" + skeleton.names[size_t(partner)] + "'";
}

// Why joint `j` cannot be mirrored onto its partner under `pairs` (partners must be mutual, both
// roots or neither, and have partnered parents), naming the joints and parents at fault; "" when
// it can.
std::string mirror_pair_fault(const Skeleton& skeleton, const std::vector<int>& pairs, int j) {
  const int pair = pairs[size_t(j)], parent = skeleton.parents[size_t(j)];
  const int pair_parent = skeleton.parents[size_t(pair)];
  const auto name = [&](int k) { return "'" + skeleton.names[size_t(k)] + "'"; };
  if (pairs[size_t(pair)] != j) {
    return name(j) + " pairs with " + name(pair) + ", which pairs with " + partner_text(skeleton, pairs, pair) +
           " (check the [mirror] patterns)";
  }
  if ((parent < 0) != (pair_parent < 0)) {
    return name(j) + " pairs with " + name(pair) + ", but only one of them is a root";
  }
  if (parent < 0 || pairs[size_t(parent)] == pair_parent) return "";
  if (pair == j) {
    return name(j) + " pairs with no joint, but its parent " + name(parent) + " pairs with " + name(pairs[size_t(parent)]) +
           ": the [mirror] patterns must pair " + name(j) + " with a child of " + name(pairs[size_t(parent)]) +
           ", or leave " + name(parent) + " unpaired";
  }
  return name(j) + " pairs with " + name(pair) + ", but their parents " + name(parent) + " and " + name(pair_parent) +
         " are not paired (" + name(parent) + " pairs with " + partner_text(skeleton, pairs, parent) + ", " +
         name(pair_parent) + " with " + partner_text(skeleton, pairs, pair_parent) +
         "): add a [mirror] pattern that pairs " + name(parent) + " with " + name(pair_parent);
}

}  // namespace

void clip_from_bvh(const BvhFile& bvh, float unit_scale, const std::string& name,
                   Skeleton& skeleton, Clip& clip) {
  const int joints = static_cast<int>(bvh.joints.size());
  skeleton = Skeleton{};
  for (const BvhJoint& j : bvh.joints) {
    skeleton.names.push_back(j.name);
    skeleton.parents.push_back(j.parent);
    skeleton.offsets.push_back(j.offset * unit_scale);
  }
  clip = Clip{};
  clip.name = name;
  // Frame times are usually printed rounded (0.0333333): snap rates that are within 0.01 of an
  // integer, so resampling keeps every source frame.
  const double fps = 1.0 / bvh.frame_time;
  clip.fps = static_cast<float>(std::fabs(fps - std::round(fps)) < 0.01 ? std::round(fps) : fps);
  clip.frames = bvh.frame_count;
  clip.joints = joints;
  clip.positions.resize(size_t(clip.frames) * joints);
  clip.rotations.resize(size_t(clip.frames) * joints);
  const int channels = bvh.channel_count();
  for (int f = 0; f < clip.frames; ++f) {
    const float* row = bvh.values.data() + size_t(f) * channels;
    for (int j = 0; j < joints; ++j) {
      const BvhJoint& joint = bvh.joints[j];
      Vec3 p = skeleton.offsets[j];
      for (size_t c = 0; c < joint.channels.size(); ++c) {
        if (joint.channels[c] == BvhChannel::Xposition) p.x = row[c] * unit_scale;
        if (joint.channels[c] == BvhChannel::Yposition) p.y = row[c] * unit_scale;
        if (joint.channels[c] == BvhChannel::Zposition) p.z = row[c] * unit_scale;
      }
      clip.position(f, j) = p;
      clip.rotation(f, j) = bvh_rotation(joint.channels, row);
      row += joint.channels.size();
    }
  }
}

BvhFile bvh_from_clip(const Skeleton& skeleton, const Clip& clip, const std::string& order,
                      float unit_scale) {
  const std::vector<BvhChannel> rotations = rotation_order(order);
  BvhFile bvh;
  std::vector<bool> has_child(size_t(clip.joints), false);
  for (int j = 0; j < clip.joints; ++j) {
    if (skeleton.parents[j] >= 0) has_child[size_t(skeleton.parents[j])] = true;
  }
  for (int j = 0; j < clip.joints; ++j) {
    BvhJoint joint;
    joint.name = skeleton.names[j];
    joint.parent = skeleton.parents[j];
    joint.offset = skeleton.offsets[j] / unit_scale;
    joint.channels = {BvhChannel::Xposition, BvhChannel::Yposition, BvhChannel::Zposition};
    joint.channels.insert(joint.channels.end(), rotations.begin(), rotations.end());
    joint.has_end_site = !has_child[size_t(j)];
    bvh.joints.push_back(joint);
  }
  bvh.frame_time = 1.0 / clip.fps;
  bvh.frame_count = clip.frames;
  bvh.values.reserve(size_t(clip.frames) * clip.joints * 6);
  for (int f = 0; f < clip.frames; ++f) {
    for (int j = 0; j < clip.joints; ++j) {
      const Vec3 p = clip.position(f, j) / unit_scale;
      float euler[3];
      bvh_euler(rotations, clip.rotation(f, j), euler);
      bvh.values.insert(bvh.values.end(), {p.x, p.y, p.z, euler[0], euler[1], euler[2]});
    }
  }
  return bvh;
}

void collapse_joints(const std::vector<std::string>& names, Skeleton& skeleton, Clip& clip) {
  for (const std::string& name : names) {
    const int gone = skeleton.find(name);
    if (gone < 0) {
      throw InputError("collapse: unknown joint '" + name + "'; available joints: " +
                       skeleton.joined_names());
    }
    const int parent = skeleton.parents[gone];
    const long children = std::count(skeleton.parents.begin(), skeleton.parents.end(), gone);
    if (parent < 0 && children > 1) {
      throw InputError("collapse: root joint '" + name + "' has several children");
    }
    Skeleton s;
    Clip c = clip;
    c.joints = clip.joints - 1;
    c.positions.clear();
    c.rotations.clear();
    std::vector<int> remap(size_t(clip.joints), -1);
    for (int j = 0, k = 0; j < clip.joints; ++j) {
      if (j != gone) remap[size_t(j)] = k++;
    }
    for (int j = 0; j < clip.joints; ++j) {
      if (j == gone) continue;
      const bool child = skeleton.parents[j] == gone;
      const int p = child ? parent : skeleton.parents[j];
      s.names.push_back(skeleton.names[j]);
      s.parents.push_back(p < 0 ? -1 : remap[size_t(p)]);
      s.offsets.push_back(child ? skeleton.offsets[gone] + skeleton.offsets[j] : skeleton.offsets[j]);
    }
    for (int f = 0; f < clip.frames; ++f) {
      for (int j = 0; j < clip.joints; ++j) {
        if (j == gone) continue;
        Vec3 p = clip.position(f, j);
        Quat q = clip.rotation(f, j);
        if (skeleton.parents[j] == gone) {
          p = clip.position(f, gone) + rotate(clip.rotation(f, gone), p);
          q = clip.rotation(f, gone) * q;
        }
        c.positions.push_back(p);
        c.rotations.push_back(q);
      }
    }
    skeleton = std::move(s);
    clip = std::move(c);
  }
}

bool parse_up_axis(const std::string& text, UpAxis& axis) {
  const std::string lower = lowercase(text);
  if (lower != "y" && lower != "z") return false;
  axis = lower == "y" ? UpAxis::Y : UpAxis::Z;
  return true;
}

const char* up_axis_name(UpAxis axis) { return axis == UpAxis::Y ? "y" : "z"; }

void convert_up_axis(UpAxis axis, Skeleton& skeleton, Clip& clip) {
  if (axis == UpAxis::Y) return;
  const Quat r = quat_from_angle_axis(-0.5f * 3.14159265f, Vec3{1.0f, 0.0f, 0.0f});
  const Quat r_inverse = inverse(r);
  for (Vec3& o : skeleton.offsets) o = rotate(r, o);
  for (Vec3& p : clip.positions) p = rotate(r, p);
  for (Quat& q : clip.rotations) q = normalize(r * q * r_inverse);
}

void collapse_simulation_root(Skeleton& skeleton, Clip& clip) {
  const int joint = skeleton.find(kSimulationBoneName);
  if (joint < 0) return;
  const long children = std::count(skeleton.parents.begin(), skeleton.parents.end(), joint);
  if (skeleton.parents[size_t(joint)] >= 0 || children != 1) {
    throw InputError(std::string("joint '") + kSimulationBoneName + "' is a reserved name: lmm-import inserts the "
                     "simulation bone under it, and removes only a root '" + kSimulationBoneName +
                     "' with one child (the simulation bone of lmm-sim's BVH output); this one is " +
                     (skeleton.parents[size_t(joint)] >= 0 ? "not the root" : "a root with " +
                      std::to_string(children) + " children") + ": rename it, or list it in the skeleton config's collapse");
  }
  collapse_joints({kSimulationBoneName}, skeleton, clip);
}

Clip resample(const Clip& clip, float fps) {
  const double duration = double(clip.frames - 1) / clip.fps;
  Clip out = clip;
  out.fps = fps;
  out.frames = static_cast<int>(std::floor(duration * fps + 1e-4)) + 1;
  out.positions.resize(size_t(out.frames) * clip.joints);
  out.rotations.resize(size_t(out.frames) * clip.joints);
  for (int f = 0; f < out.frames; ++f) {
    const double t = double(f) / fps * clip.fps;
    const int i0 = std::min(static_cast<int>(std::floor(t)), clip.frames - 1);
    const int i1 = std::min(i0 + 1, clip.frames - 1);
    const float a = static_cast<float>(t - i0);
    for (int j = 0; j < clip.joints; ++j) {
      out.position(f, j) = lerp(clip.position(i0, j), clip.position(i1, j), a);
      out.rotation(f, j) = slerp(clip.rotation(i0, j), clip.rotation(i1, j), a);
    }
  }
  return out;
}

LeadingJump find_leading_jump(const Skeleton& skeleton, const Clip& clip, float max_speed) {
  LeadingJump jump;
  const int last = std::min(kMaxLeadingPoseFrames, clip.frames - 1);
  std::vector<Vec3> previous(size_t(clip.joints)), current(size_t(clip.joints));
  std::vector<Quat> rotations(size_t(clip.joints));
  for (int f = 0; f <= last; ++f) {
    forward_kinematics(skeleton.parents.data(), clip.joints, &clip.position(f, 0), &clip.rotation(f, 0),
                       current.data(), rotations.data());
    for (int j = 0; f > 0 && j < clip.joints; ++j) {
      const float speed = length(current[size_t(j)] - previous[size_t(j)]) * clip.fps;
      if (speed > max_speed && speed > jump.speed) jump = LeadingJump{f, j, speed};
    }
    if (jump.frames > 0) return jump;
    std::swap(previous, current);
  }
  return jump;
}

void keep_frames(Clip& clip, int first, int frames) {
  const auto begin = long(first) * long(clip.joints), end = begin + long(frames) * long(clip.joints);
  clip.positions = std::vector<Vec3>(clip.positions.begin() + begin, clip.positions.begin() + end);
  clip.rotations = std::vector<Quat>(clip.rotations.begin() + begin, clip.rotations.begin() + end);
  clip.frames = frames;
}

std::vector<int> mirror_pairs(const Skeleton& skeleton,
                              const std::vector<std::pair<std::string, std::string>>& patterns) {
  std::vector<int> pairs(size_t(skeleton.joint_count()));
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    pairs[size_t(j)] = j;
    const std::string& name = skeleton.names[j];
    for (const auto& pattern : patterns) {
      for (int side = 0; side < 2 && pairs[size_t(j)] == j; ++side) {
        const std::string& from = side == 0 ? pattern.first : pattern.second;
        const std::string& to = side == 0 ? pattern.second : pattern.first;
        const size_t at = name.find(from);
        if (from.empty() || at == std::string::npos) continue;
        const int other = skeleton.find(name.substr(0, at) + to + name.substr(at + from.size()));
        if (other >= 0) pairs[size_t(j)] = other;
      }
    }
  }
  return pairs;
}

MirrorMap mirror_map(const Skeleton& skeleton,
                     const std::vector<std::pair<std::string, std::string>>& patterns,
                     const std::vector<Quat>& reference) {
  MirrorMap map;
  map.pairs = mirror_pairs(skeleton, patterns);
  const int n = skeleton.joint_count();
  for (int j = 0; j < n; ++j) {
    const std::string fault = mirror_pair_fault(skeleton, map.pairs, j);
    if (!fault.empty()) throw InputError("mirror: " + fault);
  }
  map.corrections.assign(size_t(n), Quat{});
  for (int j = 0; j < n; ++j) {
    const int pair = map.pairs[size_t(j)], parent = skeleton.parents[size_t(j)];
    Quat k;
    if (pair < j) {
      k = mirror_rotation(inverse(map.corrections[size_t(pair)]));  // symmetric with the partner
    } else if (parent < 0) {
      k = root_correction(skeleton, map.pairs, j);
    } else {
      // Fitted so that the mirrored reference pose equals the reference pose
      // (inverse(K_parent) * mirror(reference[pair]) * K_j = reference[j]), then turned so that
      // mirrored local positions are the skeleton's offsets.
      k = inverse(mirror_rotation(reference[size_t(pair)])) * map.corrections[size_t(parent)] * reference[size_t(j)];
      k = offset_correction(skeleton, map.pairs, j, k);
    }
    // A joint that is its own partner must satisfy mirror(K) = inverse(K) (no x component),
    // or mirroring twice would not give the clip back.
    if (pair == j) k = normalize(Quat{k.w, 0.0f, k.y, k.z});
    map.corrections[size_t(j)] = k;
  }
  return map;
}

std::vector<Quat> mean_local_rotations(const std::vector<const Clip*>& clips) {
  const int n = clips.empty() ? 0 : clips.front()->joints;
  std::vector<Quat> sum(size_t(n), Quat{0, 0, 0, 0});
  for (int j = 0; j < n; ++j) {
    const Quat first = clips.front()->rotation(0, j);
    Quat& s = sum[size_t(j)];
    for (const Clip* clip : clips) {
      for (int f = 0; f < clip->frames; ++f) {
        const Quat q = clip->rotation(f, j);
        const float sign = dot(q, first) < 0.0f ? -1.0f : 1.0f;
        s = Quat{s.w + sign * q.w, s.x + sign * q.x, s.y + sign * q.y, s.z + sign * q.z};
      }
    }
    s = normalize(s);
  }
  return sum;
}

Clip mirror(const Clip& clip, const Skeleton& skeleton, const MirrorMap& map) {
  Clip out = clip;
  for (int f = 0; f < clip.frames; ++f) {
    for (int j = 0; j < clip.joints; ++j) {
      const int pair = map.pairs[size_t(j)], parent = skeleton.parents[size_t(j)];
      const Quat k_parent = parent < 0 ? Quat{} : map.corrections[size_t(parent)];
      const Vec3 p = mirror_position(clip.position(f, pair));
      out.position(f, j) = parent < 0 ? p : inverse_rotate(k_parent, p);
      out.rotation(f, j) = inverse(k_parent) * mirror_rotation(clip.rotation(f, pair)) * map.corrections[size_t(j)];
    }
  }
  return out;
}

void add_simulation_bone(const SimulationBoneSettings& settings, Skeleton& skeleton, Clip& clip) {
  const std::vector<Vec3> globals = global_positions(skeleton, clip);
  std::vector<Vec3> root(size_t(clip.frames)), facing(size_t(clip.frames));
  for (int f = 0; f < clip.frames; ++f) {
    const Vec3* g = &globals[size_t(f) * clip.joints];
    root[size_t(f)] = Vec3{g[settings.hips].x, 0.0f, g[settings.hips].z};
    Vec3 lateral;
    for (int j : settings.left) lateral = lateral + g[j];
    for (int j : settings.right) lateral = lateral - g[j];
    facing[size_t(f)] = normalize(cross(lateral, kUp));
  }
  smooth_component(root, &Vec3::x, settings.position_sigma * clip.fps);
  smooth_component(root, &Vec3::z, settings.position_sigma * clip.fps);
  smooth_component(facing, &Vec3::x, settings.direction_sigma * clip.fps);
  smooth_component(facing, &Vec3::z, settings.direction_sigma * clip.fps);

  Clip out = clip;
  out.joints = clip.joints + 1;
  out.positions.clear();
  out.rotations.clear();
  for (int f = 0; f < clip.frames; ++f) {
    const Quat sim_rotation = quat_from_heading(facing[size_t(f)]);
    out.positions.push_back(root[size_t(f)]);
    out.rotations.push_back(sim_rotation);
    for (int j = 0; j < clip.joints; ++j) {
      const bool is_root = skeleton.parents[j] < 0;
      out.positions.push_back(is_root ? inverse_rotate(sim_rotation, clip.position(f, j) - root[size_t(f)])
                                      : clip.position(f, j));
      out.rotations.push_back(is_root ? inverse(sim_rotation) * clip.rotation(f, j)
                                      : clip.rotation(f, j));
    }
  }
  Skeleton s;
  s.names.push_back(kSimulationBoneName);
  s.parents.push_back(-1);
  s.offsets.push_back(Vec3{});
  for (int j = 0; j < clip.joints; ++j) {
    s.names.push_back(skeleton.names[j]);
    s.parents.push_back(skeleton.parents[j] + 1);
    s.offsets.push_back(skeleton.offsets[j]);
  }
  skeleton = std::move(s);
  clip = std::move(out);
}

void compute_velocities(const Clip& clip, std::vector<Vec3>& velocities,
                        std::vector<Vec3>& angular_velocities) {
  velocities.assign(clip.positions.size(), Vec3{});
  angular_velocities.assign(clip.positions.size(), Vec3{});
  if (clip.frames < 2) return;
  for (int f = 0; f < clip.frames; ++f) {
    const int prev = std::max(f - 1, 0), next = std::min(f + 1, clip.frames - 1);
    const float inv_dt = clip.fps / float(next - prev);
    for (int j = 0; j < clip.joints; ++j) {
      const size_t i = size_t(f) * clip.joints + j;
      velocities[i] = (clip.position(next, j) - clip.position(prev, j)) * inv_dt;
      angular_velocities[i] =
          to_scaled_angle_axis(clip.rotation(next, j) * inverse(clip.rotation(prev, j))) * inv_dt;
    }
  }
}

JointMotion joint_motion(const Skeleton& skeleton, const Clip& clip, const std::vector<Vec3>& velocities,
                         const std::vector<Vec3>& angular_velocities, const std::vector<int>& joints) {
  JointMotion motion;
  motion.speeds.resize(size_t(clip.frames) * joints.size());
  motion.heights.resize(motion.speeds.size());
  std::vector<Vec3> gp(size_t(clip.joints)), gv(size_t(clip.joints)), ga(size_t(clip.joints));
  std::vector<Quat> gr(size_t(clip.joints));
  for (int f = 0; f < clip.frames; ++f) {
    const size_t i = size_t(f) * clip.joints;
    forward_kinematics_velocity(skeleton.parents.data(), clip.joints, &clip.positions[i],
                                &clip.rotations[i], &velocities[i], &angular_velocities[i],
                                gp.data(), gr.data(), gv.data(), ga.data());
    for (size_t c = 0; c < joints.size(); ++c) {
      motion.speeds[size_t(f) * joints.size() + c] = length(gv[size_t(joints[c])]);
      motion.heights[size_t(f) * joints.size() + c] = gp[size_t(joints[c])].y;
    }
  }
  return motion;
}

std::vector<uint8_t> compute_contacts(const ContactSettings& settings, const Skeleton& skeleton,
                                      const Clip& clip, const std::vector<Vec3>& velocities,
                                      const std::vector<Vec3>& angular_velocities) {
  const size_t count = settings.joints.size();
  const JointMotion motion = joint_motion(skeleton, clip, velocities, angular_velocities, settings.joints);
  std::vector<uint8_t> raw(size_t(clip.frames) * count);
  for (size_t i = 0; i < raw.size(); ++i) {
    const float rest = settings.rest_heights.empty() ? 0.0f : settings.rest_heights[i % count];
    raw[i] = motion.speeds[i] < settings.velocity_threshold && motion.heights[i] < rest + settings.height_threshold;
  }
  const int half = static_cast<int>(std::lround(settings.filter_seconds * clip.fps));
  std::vector<uint8_t> out(raw.size());
  for (int f = 0; f < clip.frames; ++f) {
    for (size_t c = 0; c < count; ++c) {
      int on = 0, total = 0;
      for (int k = std::max(0, f - half); k <= std::min(clip.frames - 1, f + half); ++k, ++total) {
        on += raw[size_t(k) * count + c];
      }
      out[size_t(f) * count + c] = 2 * on > total;
    }
  }
  return out;
}

std::vector<float> joint_heights(const Skeleton& skeleton, const PoseFrames& poses, int joint) {
  std::vector<float> heights(size_t(poses.frames));
  for_each_global_pose(skeleton, poses, [&](int f, const Vec3* globals) { heights[size_t(f)] = globals[joint].y; });
  return heights;
}

float percentile(std::vector<float> values, float fraction) {
  if (values.empty()) return 0.0f;
  const auto rank = values.begin() + long(std::lround(fraction * float(values.size() - 1)));
  std::nth_element(values.begin(), rank, values.end());
  return *rank;
}

SkeletonHeight measure_height(const Skeleton& skeleton, const std::vector<std::pair<std::string, int>>& roles,
                              const PoseFrames& poses) {
  const int count = skeleton.joint_count();
  std::vector<double> summed(size_t(count), 0.0);  // heights summed over the frames
  std::vector<Vec3> mean(static_cast<size_t>(count));  // global positions averaged over the frames
  for_each_global_pose(skeleton, poses, [&](int, const Vec3* globals) {
    for (int j = 0; j < count; ++j) {
      summed[size_t(j)] += globals[j].y;
      mean[size_t(j)] = mean[size_t(j)] + globals[j] / float(poses.frames);
    }
  });
  std::vector<int> top = role_joints(roles, {"head"});
  if (top.empty()) top = {int(std::max_element(summed.begin(), summed.end()) - summed.begin())};
  std::vector<int> feet = role_joints(roles, {"left_foot", "right_foot"});
  if (feet.empty()) feet = role_joints(roles, {"left_toe", "right_toe"});
  if (feet.empty()) feet = {lowest_leaf(skeleton, summed)};
  SkeletonHeight height;
  height.top = skeleton.names[size_t(top[0])];
  for (int foot : feet) {
    const float rest = chain_length(skeleton, foot, top[0]);
    if (!height.foot.empty() && rest <= height.rest) continue;
    height.rest = rest;
    height.foot = skeleton.names[size_t(foot)];
  }
  const std::vector<int> hips = role_joints(roles, {"hips"});
  const int riser = hips.empty() ? top[0] : hips[0];
  if (!height.foot.empty()) height.rise = mean[size_t(riser)] - mean[size_t(skeleton.find(height.foot))];
  height.standing = percentile(joint_heights(skeleton, poses, top[0]), 0.5f);
  return height;
}

std::string up_axis_hint(const SkeletonHeight& height, UpAxis configured) {
  const Vec3 rise = height.rise;
  const bool along_z = std::fabs(rise.z) > 2.0f * std::fabs(rise.y);
  const bool looks_z_up = configured == UpAxis::Y && along_z && rise.z > 0.0f;
  const bool looks_y_up = configured == UpAxis::Z && along_z && rise.z < 0.0f;
  if (!looks_z_up && !looks_y_up) return "";
  const char* other = looks_z_up ? "z" : "y";
  return std::string("the files look ") + (looks_z_up ? "Z" : "Y") + "-up (read as " + (looks_z_up ? "Y" : "Z") +
         "-up, the hips are on average " + format_number(rise.y) + " m above '" + height.foot + "' along +Y and " +
         format_number(rise.z) + " m along +Z): set up_axis = \"" + other +
         "\" in the skeleton config, or run lmm-import with --up-axis " + other;
}

std::vector<float> gaussian_filter(const std::vector<float>& values, float sigma) {
  if (!(sigma <= kMaxFilterSigma)) {
    throw InputError("Gaussian smoothing of " + format_number(sigma) + " samples (smoothing seconds x frame rate) "
                     "is above the limit of " + format_number(kMaxFilterSigma));
  }
  if (!(sigma > 0.0f) || values.empty()) return values;
  const int radius = static_cast<int>(std::ceil(3.0f * sigma));
  std::vector<float> kernel(size_t(2 * radius + 1));
  float sum = 0.0f;
  for (int k = -radius; k <= radius; ++k) {
    kernel[size_t(k + radius)] = std::exp(-0.5f * float(k) * float(k) / (sigma * sigma));
    sum += kernel[size_t(k + radius)];
  }
  const int n = static_cast<int>(values.size());
  std::vector<float> out(values.size());
  for (int i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (int k = -radius; k <= radius; ++k) {
      acc += kernel[size_t(k + radius)] * values[size_t(std::clamp(i + k, 0, n - 1))];
    }
    out[size_t(i)] = acc / sum;
  }
  return out;
}

}  // namespace lmm::pipeline
