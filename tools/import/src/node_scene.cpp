#include "node_scene.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "lmm/common/errors.hpp"

namespace lmm::pipeline {
namespace {

// A joint's transform: translation, rotation and a uniform scale.
struct Transform {
  Vec3 translation;
  Quat rotation;
  float scale = 1.0f;
};

[[noreturn]] void fail(const NodeScene& scene, const std::string& message) { throw InputError(scene.source + ": " + message); }

std::string node_name(const NodeScene& scene, int node) {
  const std::string& name = scene.nodes[size_t(node)].name;
  return name.empty() ? "node_" + std::to_string(node) : name;
}

// Throws unless `s` is a uniform, positive scale (within 1e-4 relative) in [kSceneMinScale,
// kSceneMaxScale].
float uniform_scale(const NodeScene& scene, int node, Vec3 s) {
  const float tolerance = 1e-4f * std::max({std::fabs(s.x), std::fabs(s.y), std::fabs(s.z)});
  if (std::fabs(s.x - s.y) > tolerance || std::fabs(s.x - s.z) > tolerance || !(s.x > 0.0f)) {
    fail(scene, node_text(scene, node) + " has the scale (" + format_number(s.x) + ", " + format_number(s.y) + ", " +
                    format_number(s.z) + "): joints may only scale uniformly and positively");
  }
  if (!(s.x >= kSceneMinScale && s.x <= kSceneMaxScale)) {
    fail(scene, node_text(scene, node) + " has the scale " + format_number(s.x) +
                    ": the nodes of a skeleton and above it scale within " +
                    range_text(kSceneMinScale, kSceneMaxScale));
  }
  return s.x;
}

// The rest transform of `node`; throws when it cannot be a joint's.
Transform rest_transform(const NodeScene& scene, int node) {
  const SceneNode& n = scene.nodes[size_t(node)];
  if (!n.transform_error.empty()) fail(scene, node_text(scene, node) + " " + n.transform_error);
  if (!is_finite(n.translation) || !std::isfinite(n.rotation.w + n.rotation.x + n.rotation.y + n.rotation.z)) {
    fail(scene, node_text(scene, node) + " has a non-finite transform");
  }
  const std::string problem = rotation_problem(n.rotation);
  if (!problem.empty()) fail(scene, node_text(scene, node) + " has the rotation " + problem);
  return Transform{n.translation, normalize(n.rotation), uniform_scale(scene, node, n.scale)};
}

// Throws on a parent index out of range or a cycle of nodes.
void check_parents(const NodeScene& scene) {
  const size_t count = scene.nodes.size();
  for (size_t n = 0; n < count; ++n) {
    size_t steps = 0;
    for (int p = scene.nodes[n].parent; p >= 0; p = scene.nodes[size_t(p)].parent) {
      if (size_t(p) >= count) fail(scene, node_text(scene, int(n)) + " has a parent index out of range");
      if (++steps > count) fail(scene, node_text(scene, int(n)) + " is its own ancestor (a cycle of nodes)");
    }
  }
}

// The deepest node that is `a` or an ancestor of it and also `b` or an ancestor of it, or -1.
int common_ancestor(const NodeScene& scene, int a, int b) {
  std::vector<int> chain;
  for (int n = a; n >= 0; n = scene.nodes[size_t(n)].parent) chain.push_back(n);
  for (int n = b; n >= 0; n = scene.nodes[size_t(n)].parent) {
    if (std::find(chain.begin(), chain.end(), n) != chain.end()) return n;
  }
  return -1;
}

// The skeleton's nodes, depth first from the seeds' common root (children in node order).
std::vector<int> skeleton_nodes(const NodeScene& scene) {
  if (scene.seeds.empty()) fail(scene, "no skeleton: the file has no skin and no animated node");
  for (int node : scene.seeds) {
    if (node < 0 || size_t(node) >= scene.nodes.size()) fail(scene, "a skin joint or animation target names node " + std::to_string(node) + ", which does not exist");
  }
  int root = scene.seeds.front();
  for (int node : scene.seeds) {
    const int common = common_ancestor(scene, root, node);
    if (common < 0) {
      fail(scene, "the skeleton has two roots, " + node_text(scene, root) + " and " + node_text(scene, node) +
                      ", with no common parent: lmmkit reads one skeleton per file");
    }
    root = common;
  }
  std::vector<char> in(scene.nodes.size(), 0);
  for (int node : scene.seeds) {
    for (int n = node; n != root; n = scene.nodes[size_t(n)].parent) in[size_t(n)] = 1;
  }
  std::vector<std::vector<int>> children(scene.nodes.size());
  for (size_t n = 0; n < scene.nodes.size(); ++n) {
    if (in[n] != 0) children[size_t(scene.nodes[n].parent)].push_back(int(n));
  }
  std::vector<int> order, stack{root};
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    order.push_back(node);
    stack.insert(stack.end(), children[size_t(node)].rbegin(), children[size_t(node)].rend());
  }
  if (order.size() > size_t(kSceneMaxJoints)) {
    fail(scene, "the skeleton has " + std::to_string(order.size()) + " joints, more than " + std::to_string(kSceneMaxJoints));
  }
  return order;
}

// The world transform above `root`: the world transform of the file, then the nodes above it.
Transform above_root(const NodeScene& scene, int root) {
  Transform world;
  std::vector<int> chain;
  for (int n = scene.nodes[size_t(root)].parent; n >= 0; n = scene.nodes[size_t(n)].parent) chain.push_back(n);
  chain.push_back(-1);  // the file's world transform, outermost
  for (int n : chain) {
    const Transform t = n >= 0 ? rest_transform(scene, n) : Transform{scene.world_translation, scene.world_rotation, scene.world_scale};
    world.translation = t.translation + rotate(t.rotation, world.translation * t.scale);
    world.rotation = normalize(t.rotation * world.rotation);
    world.scale *= t.scale;
  }
  return world;
}

// The value of `track` (`width` floats per key) at `time` into `out`.
void sample_track(const KeyTrack& t, size_t w, float time, float* out) {
  const bool cubic = t.interpolation == KeyInterpolation::CubicSpline;
  const size_t stride = cubic ? 3 * w : w;
  const float* values = t.values.data() + (cubic ? w : 0);  // the values (cubic: between the tangents)
  const size_t next = size_t(std::upper_bound(t.times.begin(), t.times.end(), time) - t.times.begin());
  if (next == 0 || next == t.times.size()) {
    std::copy_n(values + (next == 0 ? 0 : (next - 1) * stride), w, out);
    return;
  }
  const size_t k = next - 1;
  const float dt = t.times[next] - t.times[k], u = (time - t.times[k]) / dt;
  const float* a = values + k * stride;
  const float* b = values + next * stride;
  if (t.interpolation == KeyInterpolation::Step) {
    std::copy_n(a, w, out);
  } else if (cubic) {
    const float u2 = u * u, u3 = u2 * u;
    const float* out_tangent = a + w;  // of key k
    const float* in_tangent = b - w;   // of key k + 1
    for (size_t i = 0; i < w; ++i) {
      out[i] = (2 * u3 - 3 * u2 + 1) * a[i] + (u3 - 2 * u2 + u) * dt * out_tangent[i] + (-2 * u3 + 3 * u2) * b[i] +
               (u3 - u2) * dt * in_tangent[i];
    }
  } else if (w == 4) {
    const Quat q = slerp(Quat{a[3], a[0], a[1], a[2]}, Quat{b[3], b[0], b[1], b[2]}, u);
    out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
  } else {
    for (size_t i = 0; i < w; ++i) out[i] = a[i] + (b[i] - a[i]) * u;
  }
}

size_t track_width(const KeyTrack& t) { return t.path == KeyPath::Rotation ? 4 : 3; }

// Throws unless `t` has increasing key times in [0, kSceneMaxSeconds], finite values and as many
// values as times.
void check_track(const NodeScene& scene, const KeyTrack& t, const std::string& what) {
  const size_t per_key = track_width(t) * (t.interpolation == KeyInterpolation::CubicSpline ? 3 : 1);
  if (t.times.empty() || t.values.size() != t.times.size() * per_key) fail(scene, what + " has no keys, or not as many values as key times");
  for (size_t k = 1; k < t.times.size(); ++k) {
    if (!(t.times[k] > t.times[k - 1])) fail(scene, what + " has key times that do not increase (key " + std::to_string(k) + ")");
  }
  if (!(t.times.front() >= 0.0f) || !(t.times.back() <= kSceneMaxSeconds)) {
    fail(scene, what + " has key times outside [0, " + format_number(kSceneMaxSeconds) + "] s");
  }
  if (!all_finite(t.values.data(), t.values.size())) fail(scene, what + " holds a non-finite value");
}

// Per joint and path, the index of its track in `animation` (-1: none), tracks checked.
struct JointTracks {
  std::vector<int> translation, rotation, scale;
};

JointTracks joint_tracks(const NodeScene& scene, int animation, const std::map<int, int>& joint_of) {
  const SceneAnimation& a = scene.animations[size_t(animation)];
  JointTracks jt;
  jt.translation.assign(joint_of.size(), -1);
  jt.rotation = jt.scale = jt.translation;
  for (size_t i = 0; i < a.tracks.size(); ++i) {
    const KeyTrack& t = a.tracks[i];
    const auto joint = joint_of.find(t.node);
    if (joint == joint_of.end()) continue;  // not a joint
    const char* path = t.path == KeyPath::Translation ? "translation" : t.path == KeyPath::Rotation ? "rotation" : "scale";
    check_track(scene, t, "animation " + std::to_string(animation) + " '" + printable(a.name) + "', track " + std::to_string(i) +
                              " (" + node_text(scene, t.node) + " " + path + ")");
    std::vector<int>& slot = t.path == KeyPath::Translation ? jt.translation : t.path == KeyPath::Rotation ? jt.rotation : jt.scale;
    slot[size_t(joint->second)] = int(i);
  }
  return jt;
}

// Frames per second of an animation: the rate of its longest track's keys when they are evenly
// spaced (snapped to a whole number within 0.01), else kIrregularKeyFps.
float key_rate(const SceneAnimation& a, const JointTracks& jt) {
  const KeyTrack* longest = nullptr;
  for (const std::vector<int>* slots : {&jt.translation, &jt.rotation}) {
    for (int i : *slots) {
      if (i >= 0 && (longest == nullptr || a.tracks[size_t(i)].times.size() > longest->times.size())) longest = &a.tracks[size_t(i)];
    }
  }
  if (longest == nullptr || longest->times.size() < 2) return kIrregularKeyFps;
  const std::vector<float>& times = longest->times;
  const double step = double(times.back() - times.front()) / double(times.size() - 1);
  for (size_t k = 1; k < times.size(); ++k) {
    if (std::fabs(double(times[k] - times[k - 1]) - step) > kEvenKeyTolerance * step) return kIrregularKeyFps;
  }
  const double fps = 1.0 / step;
  return float(std::fabs(fps - std::round(fps)) < 0.01 ? std::round(fps) : fps);
}

// Throws when an animated scale leaves a joint's rest scale.
void check_static_scale(const NodeScene& scene, const SceneAnimation& a, const JointTracks& jt, const std::vector<int>& nodes,
                        const std::vector<Transform>& rest) {
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (jt.scale[j] < 0) continue;
    for (float v : a.tracks[size_t(jt.scale[j])].values) {
      if (std::fabs(v - rest[j].scale) > 1e-4f * rest[j].scale) {
        fail(scene, node_text(scene, nodes[j]) + " has an animated scale (" + format_number(v) + ", rest " +
                        format_number(rest[j].scale) + "): joints may not scale over time");
      }
    }
  }
}

// The skeleton's joints: their nodes, rest transforms and the scales their translations take.
struct Joints {
  std::vector<int> nodes;
  std::vector<Transform> rest;
  std::vector<float> scales;  // per joint, the product of the scales above it
  Transform above;            // the world transform above the root
};

Clip sample_animation(const NodeScene& scene, int animation, const Joints& joints, const std::string& default_name) {
  std::map<int, int> joint_of;
  for (size_t j = 0; j < joints.nodes.size(); ++j) joint_of[joints.nodes[j]] = int(j);
  const SceneAnimation& a = scene.animations[size_t(animation)];
  const JointTracks jt = joint_tracks(scene, animation, joint_of);
  check_static_scale(scene, a, jt, joints.nodes, joints.rest);
  float start = 1e30f, end = 0.0f;
  for (const std::vector<int>* slots : {&jt.translation, &jt.rotation}) {
    for (int i : *slots) {
      if (i >= 0) start = std::min(start, a.tracks[size_t(i)].times.front()), end = std::max(end, a.tracks[size_t(i)].times.back());
    }
  }
  if (start > end) start = end = 0.0f;  // no joint moves: one frame, the rest pose
  Clip clip;
  clip.name = a.name.empty() ? default_name : a.name;
  clip.fps = key_rate(a, jt);
  clip.joints = int(joints.nodes.size());
  clip.frames = int(std::floor(double(end - start) * clip.fps + 1e-3)) + 1;
  clip.positions.resize(size_t(clip.frames) * joints.nodes.size());
  clip.rotations.resize(clip.positions.size());
  float value[4];
  for (int f = 0; f < clip.frames; ++f) {
    const float time = start + float(f) / clip.fps;
    for (size_t j = 0; j < joints.nodes.size(); ++j) {
      Vec3 p = joints.rest[j].translation;
      Quat q = joints.rest[j].rotation;
      if (jt.translation[j] >= 0) sample_track(a.tracks[size_t(jt.translation[j])], 3, time, value), p = vec3_at(value);
      if (jt.rotation[j] >= 0) {
        sample_track(a.tracks[size_t(jt.rotation[j])], 4, time, value);
        q = normalize(Quat{value[3], value[0], value[1], value[2]});
      }
      p = p * joints.scales[j];
      if (j == 0) p = joints.above.translation + rotate(joints.above.rotation, p), q = normalize(joints.above.rotation * q);
      clip.position(f, int(j)) = p;
      clip.rotation(f, int(j)) = q;
    }
  }
  if (!all_finite(&clip.positions[0].x, clip.positions.size() * 3) || !all_finite(&clip.rotations[0].w, clip.rotations.size() * 4)) {
    fail(scene, "animation " + std::to_string(animation) + " '" + printable(clip.name) + "' samples to a non-finite pose");
  }
  return clip;
}

// Names each joint after its node; throws when two joints share a name or one has a control
// character (databases list joint names one a line).
std::vector<std::string> joint_names(const NodeScene& scene, const std::vector<int>& nodes) {
  std::map<std::string, int> seen;
  std::vector<std::string> names;
  for (int node : nodes) {
    const std::string name = node_name(scene, node);
    if (std::any_of(name.begin(), name.end(),
                    [](char c) { return std::iscntrl(static_cast<unsigned char>(c)) != 0; })) {
      fail(scene, node_text(scene, node) +
                      " has a control character in its name: joint names are one line of text (as in BVH files)");
    }
    const auto [it, fresh] = seen.emplace(name, node);
    if (!fresh) fail(scene, node_text(scene, it->second) + " and " + node_text(scene, node) + " have the same name: joint names must be unique");
    names.push_back(name);
  }
  return names;
}

// The rotation whose matrix has the orthonormal, right-handed columns `x`, `y`, `z`.
Quat rotation_of_basis(Vec3 x, Vec3 y, Vec3 z) {
  const float trace = x.x + y.y + z.z;
  Quat q;
  if (trace > 0.0f) {
    const float s = 0.5f / std::sqrt(trace + 1.0f);
    q = {0.25f / s, (y.z - z.y) * s, (z.x - x.z) * s, (x.y - y.x) * s};
  } else if (x.x > y.y && x.x > z.z) {
    const float s = 2.0f * std::sqrt(1.0f + x.x - y.y - z.z);
    q = {(y.z - z.y) / s, 0.25f * s, (y.x + x.y) / s, (z.x + x.z) / s};
  } else if (y.y > z.z) {
    const float s = 2.0f * std::sqrt(1.0f + y.y - x.x - z.z);
    q = {(z.x - x.z) / s, (y.x + x.y) / s, 0.25f * s, (z.y + y.z) / s};
  } else {
    const float s = 2.0f * std::sqrt(1.0f + z.z - x.x - y.y);
    q = {(x.y - y.x) / s, (z.x + x.z) / s, (z.y + y.z) / s, 0.25f * s};
  }
  return normalize(q);
}

// Appends plain values, strings and float arrays to a byte string (encode_scene).
struct Encoder {
  std::string out;
  template <typename T>
  void value(const T& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void text(const std::string& s) { value(uint64_t(s.size())), out += s; }
  void floats(const std::vector<float>& v) { value(uint64_t(v.size())), out.append(reinterpret_cast<const char*>(v.data()), v.size() * 4); }
};

// Reads what Encoder wrote, throwing InputError past the end (decode_scene).
struct Decoder {
  const std::string& in;
  size_t at = 0;
  void take(void* to, size_t bytes) {
    if (bytes > in.size() - at) throw InputError("a truncated scene from the FBX reader's child process");
    std::memcpy(to, in.data() + at, bytes);
    at += bytes;
  }
  template <typename T>
  T value() { T v; take(&v, sizeof v); return v; }
  size_t count(size_t element) {
    const uint64_t n = value<uint64_t>();
    if (n > (in.size() - at) / element) throw InputError("a truncated scene from the FBX reader's child process");
    return size_t(n);
  }
  std::string text() { std::string s(count(1), '\0'); take(s.data(), s.size()); return s; }
  std::vector<float> floats() { std::vector<float> v(count(4)); take(v.data(), v.size() * 4); return v; }
};

}  // namespace

std::string encode_scene(const NodeScene& scene) {
  Encoder e;
  e.text(scene.source), e.text(scene.units);
  e.value(scene.world_translation), e.value(scene.world_rotation), e.value(scene.world_scale);
  e.value(uint64_t(scene.nodes.size()));
  for (const SceneNode& n : scene.nodes) {
    e.text(n.name), e.text(n.transform_error), e.value(n.parent), e.value(n.translation), e.value(n.rotation), e.value(n.scale);
  }
  e.value(uint64_t(scene.seeds.size()));
  for (int seed : scene.seeds) e.value(seed);
  e.value(uint64_t(scene.animations.size()));
  for (const SceneAnimation& a : scene.animations) {
    e.text(a.name), e.value(uint64_t(a.tracks.size()));
    for (const KeyTrack& t : a.tracks) e.value(t.node), e.value(t.path), e.value(t.interpolation), e.floats(t.times), e.floats(t.values);
  }
  return e.out;
}

NodeScene decode_scene(const std::string& bytes) {
  Decoder d{bytes};
  NodeScene scene;
  scene.source = d.text(), scene.units = d.text();
  scene.world_translation = d.value<Vec3>(), scene.world_rotation = d.value<Quat>(), scene.world_scale = d.value<float>();
  scene.nodes.resize(d.count(1));
  for (SceneNode& n : scene.nodes) {
    n.name = d.text(), n.transform_error = d.text(), n.parent = d.value<int>();
    n.translation = d.value<Vec3>(), n.rotation = d.value<Quat>(), n.scale = d.value<Vec3>();
  }
  scene.seeds.resize(d.count(sizeof(int)));
  for (int& seed : scene.seeds) seed = d.value<int>();
  scene.animations.resize(d.count(1));
  for (SceneAnimation& a : scene.animations) {
    a.name = d.text();
    a.tracks.resize(d.count(1));
    for (KeyTrack& t : a.tracks) {
      t.node = d.value<int>(), t.path = d.value<KeyPath>(), t.interpolation = d.value<KeyInterpolation>();
      t.times = d.floats(), t.values = d.floats();
    }
  }
  return scene;
}

SceneNode node_from_matrix(const float m[16]) {
  SceneNode node;
  const Vec3 x{m[0], m[1], m[2]}, y{m[4], m[5], m[6]}, z{m[8], m[9], m[10]};
  node.translation = {m[12], m[13], m[14]};
  node.scale = {length(x), length(y), length(z)};
  if (!(node.scale.x > 0.0f && node.scale.y > 0.0f && node.scale.z > 0.0f)) {
    node.transform_error = "has a matrix with a zero scale";
    return node;
  }
  const Vec3 ux = x / node.scale.x, uy = y / node.scale.y, uz = z / node.scale.z;
  if (std::fabs(dot(ux, uy)) > 1e-3f || std::fabs(dot(ux, uz)) > 1e-3f || dot(cross(ux, uy), uz) < 0.999f) {
    node.transform_error = "has a matrix with shear or a reflection: joints take rotation, translation and uniform scale";
  }
  node.rotation = rotation_of_basis(ux, uy, uz);
  return node;
}

std::string rotation_problem(Quat q) {
  const float length = std::sqrt(dot(q, q));
  if (length >= kSceneMinRotationLength) return "";
  return "(" + format_number(q.x) + ", " + format_number(q.y) + ", " + format_number(q.z) + ", " + format_number(q.w) +
         ") (x, y, z, w) of length " + format_number(length) +
         ": a rotation is a unit quaternion; lmmkit normalises ones of length " +
         format_number(kSceneMinRotationLength) + " or more and refuses shorter ones";
}

std::string node_text(const NodeScene& scene, int node) {
  return "node " + std::to_string(node) + " '" + printable(node_name(scene, node)) + "'";
}

AnimationFile sample_scene(const NodeScene& scene) {
  if (scene.animations.empty()) fail(scene, "no animation: lmmkit imports a file's animations");
  check_parents(scene);
  Joints joints;
  joints.nodes = skeleton_nodes(scene);
  joints.above = above_root(scene, joints.nodes.front());
  AnimationFile file;
  std::map<int, int> joint_of;
  for (size_t j = 0; j < joints.nodes.size(); ++j) {
    joint_of[joints.nodes[j]] = int(j);
    const int parent = j == 0 ? -1 : joint_of.at(scene.nodes[size_t(joints.nodes[j])].parent);
    joints.rest.push_back(rest_transform(scene, joints.nodes[j]));
    joints.scales.push_back(parent < 0 ? joints.above.scale : joints.scales[size_t(parent)] * joints.rest[size_t(parent)].scale);
    file.skeleton.parents.push_back(parent);
    file.skeleton.offsets.push_back(joints.rest.back().translation * joints.scales.back());
  }
  file.skeleton.names = joint_names(scene, joints.nodes);
  file.skeleton.offsets[0] = joints.above.translation + rotate(joints.above.rotation, file.skeleton.offsets[0]);
  const std::string stem = std::filesystem::path(scene.source).stem().string();
  for (size_t a = 0; a < scene.animations.size(); ++a) {
    file.clips.push_back(sample_animation(scene, int(a), joints, stem + "_" + std::to_string(a)));
  }
  file.units = scene.units + "; " + std::to_string(joints.nodes.size()) + " joints under " + node_text(scene, joints.nodes.front()) +
               ", " + std::to_string(scene.animations.size()) + " animation" + (scene.animations.size() == 1 ? "" : "s");
  if (joints.above.scale != 1.0f) file.units += "; scaled by " + format_number(joints.above.scale) + " to metres";
  return file;
}

}  // namespace lmm::pipeline
