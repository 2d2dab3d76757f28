#include "lmm/import/gltf.hpp"

#include <tiny_gltf.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"

#include "node_scene.hpp"

namespace lmm::pipeline {
namespace {

// The reader's context: the model, and the file's name for errors.
struct Reader {
  const tinygltf::Model& model;
  std::string source;

  [[noreturn]] void fail(const std::string& message) const { throw InputError(source + ": " + message); }
};

// Components per element of an accessor type, or 0 for one the reader does not take.
int type_components(int type) {
  if (type == TINYGLTF_TYPE_SCALAR) return 1;
  if (type == TINYGLTF_TYPE_VEC3) return 3;
  if (type == TINYGLTF_TYPE_VEC4) return 4;
  if (type == TINYGLTF_TYPE_MAT4) return 16;
  return 0;
}

// A component of type `type` at `p` as a float (normalized integers as glTF defines them).
float component_value(int type, const unsigned char* p) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: { float v; std::memcpy(&v, p, 4); return v; }
    case TINYGLTF_COMPONENT_TYPE_BYTE: return std::max(float(int8_t(*p)) / 127.0f, -1.0f);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return float(*p) / 255.0f;
    case TINYGLTF_COMPONENT_TYPE_SHORT: { int16_t v; std::memcpy(&v, p, 2); return std::max(float(v) / 32767.0f, -1.0f); }
    default: { uint16_t v; std::memcpy(&v, p, 2); return float(v) / 65535.0f; }  // UNSIGNED_SHORT
  }
}

// Bytes of a component of type `type` the reader takes (float or normalized 8/16-bit), or 0.
size_t component_bytes(int type, bool normalized) {
  if (type == TINYGLTF_COMPONENT_TYPE_FLOAT) return 4;
  if (!normalized) return 0;
  if (type == TINYGLTF_COMPONENT_TYPE_BYTE || type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE) return 1;
  if (type == TINYGLTF_COMPONENT_TYPE_SHORT || type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) return 2;
  return 0;
}

// Bytes of an unsigned integer component (not normalized) of type `type`, or 0.
size_t integer_bytes(int type) {
  if (type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE) return 1;
  if (type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) return 2;
  if (type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT) return 4;
  return 0;
}

// Where the elements of an accessor lie in its buffer, bounds-checked.
struct AccessorBytes {
  const unsigned char* first = nullptr;  // the first element's first component
  size_t stride = 0, count = 0, component_bytes = 0;
  int component_type = 0;
};

// The elements of accessor `index` (`components` per element; unsigned integers when `integers`,
// else floats or normalized integers), checked against its buffer view and buffer; `what` says
// what reads it in errors.
AccessorBytes accessor_bytes(const Reader& r, int index, int components, bool integers, const std::string& what) {
  const auto& m = r.model;
  const std::string at = what + ": accessor " + std::to_string(index);
  if (index < 0 || size_t(index) >= m.accessors.size()) r.fail(at + " does not exist");
  const tinygltf::Accessor& a = m.accessors[size_t(index)];
  if (a.sparse.isSparse) r.fail(at + " is sparse, which lmmkit does not read");
  if (type_components(a.type) != components) {
    r.fail(at + " has the wrong type (" + std::to_string(components) + " components expected)");
  }
  const size_t bytes = integers ? (a.normalized ? 0 : integer_bytes(a.componentType)) : component_bytes(a.componentType, a.normalized);
  if (bytes == 0) {
    r.fail(at + " has component type " + std::to_string(a.componentType) +
           (integers ? " (unsigned integers expected)" : " (float or normalized integers expected)"));
  }
  if (a.bufferView < 0 || size_t(a.bufferView) >= m.bufferViews.size()) r.fail(at + " has no valid buffer view");
  const tinygltf::BufferView& view = m.bufferViews[size_t(a.bufferView)];
  if (view.buffer < 0 || size_t(view.buffer) >= m.buffers.size()) r.fail(at + ": its buffer view has no valid buffer");
  const std::vector<unsigned char>& data = m.buffers[size_t(view.buffer)].data;
  const size_t element = bytes * size_t(components);
  const size_t stride = view.byteStride == 0 ? element : view.byteStride;
  const size_t count = a.count;
  const size_t begin = view.byteOffset + a.byteOffset;
  const size_t view_end = std::min(data.size(), size_t(view.byteOffset + view.byteLength));
  if (count == 0 || stride < element || begin > view_end || view_end - begin < element ||
      (view_end - begin - element) / stride < count - 1) {
    r.fail(at + " runs past its buffer view (" + std::to_string(count) + " elements)");
  }
  return AccessorBytes{&data[begin], stride, count, bytes, a.componentType};
}

// The floats of accessor `index` (accessor_bytes), all finite.
std::vector<float> read_accessor(const Reader& r, int index, int components, const std::string& what) {
  const AccessorBytes a = accessor_bytes(r, index, components, false, what);
  std::vector<float> out(a.count * size_t(components));
  for (size_t i = 0; i < a.count; ++i) {
    for (int c = 0; c < components; ++c) {
      out[i * size_t(components) + size_t(c)] = component_value(a.component_type, a.first + i * a.stride + size_t(c) * a.component_bytes);
    }
  }
  if (!all_finite(out.data(), out.size())) r.fail(what + ": accessor " + std::to_string(index) + " holds a non-finite value");
  return out;
}

// The unsigned integers of accessor `index` (accessor_bytes).
std::vector<uint32_t> read_integers(const Reader& r, int index, int components, const std::string& what) {
  const AccessorBytes a = accessor_bytes(r, index, components, true, what);
  std::vector<uint32_t> out(a.count * size_t(components));
  for (size_t i = 0; i < a.count; ++i) {
    for (int c = 0; c < components; ++c) {
      const unsigned char* p = a.first + i * a.stride + size_t(c) * a.component_bytes;
      uint32_t v = 0;
      if (a.component_bytes == 1) v = *p;
      if (a.component_bytes == 2) { uint16_t h; std::memcpy(&h, p, 2); v = h; }
      if (a.component_bytes == 4) std::memcpy(&v, p, 4);
      out[i * size_t(components) + size_t(c)] = v;
    }
  }
  return out;
}

// A node's rest transform from its matrix or its TRS.
SceneNode scene_node(const tinygltf::Node& n) {
  if (n.matrix.size() == 16) {
    float m[16];
    std::copy(n.matrix.begin(), n.matrix.end(), m);
    SceneNode node = node_from_matrix(m);
    node.name = n.name;
    return node;
  }
  SceneNode node;
  node.name = n.name;
  if (n.translation.size() == 3) node.translation = {float(n.translation[0]), float(n.translation[1]), float(n.translation[2])};
  if (n.rotation.size() == 4) node.rotation = Quat{float(n.rotation[3]), float(n.rotation[0]), float(n.rotation[1]), float(n.rotation[2])};
  if (n.scale.size() == 3) node.scale = {float(n.scale[0]), float(n.scale[1]), float(n.scale[2])};
  return node;
}

// The model's nodes into `scene` with their parents; throws on a node with two parents or a bad
// child index.
void scene_nodes(const Reader& r, NodeScene& scene) {
  const auto& nodes = r.model.nodes;
  for (const tinygltf::Node& n : nodes) scene.nodes.push_back(scene_node(n));
  for (size_t p = 0; p < nodes.size(); ++p) {
    for (int child : nodes[p].children) {
      if (child < 0 || size_t(child) >= nodes.size()) r.fail(node_text(scene, int(p)) + " has a child index out of range");
      if (scene.nodes[size_t(child)].parent >= 0) r.fail(node_text(scene, child) + " has two parents");
      scene.nodes[size_t(child)].parent = int(p);
    }
  }
}

// The first skin's joints (and its skeleton root), or without a skin every animated node.
std::vector<int> seed_joints(const tinygltf::Model& m) {
  std::vector<int> seeds;
  if (!m.skins.empty()) {
    seeds = m.skins[0].joints;
    if (m.skins[0].skeleton >= 0) seeds.push_back(m.skins[0].skeleton);
    return seeds;
  }
  for (const tinygltf::Animation& a : m.animations) {
    for (const tinygltf::AnimationChannel& c : a.channels) {
      if (c.target_path != "weights") seeds.push_back(c.target_node);
    }
  }
  return seeds;
}

// Throws unless each rotation key of `t` (a cubic spline's value, not its tangents) is a rotation
// (rotation_problem); `what` names the accessor.
void check_rotation_keys(const Reader& r, const KeyTrack& t, const std::string& what) {
  const bool cubic = t.interpolation == KeyInterpolation::CubicSpline;
  const size_t stride = cubic ? 12 : 4;
  for (size_t k = 0; (k + 1) * stride <= t.values.size(); ++k) {
    const float* v = &t.values[k * stride + (cubic ? 4 : 0)];
    const std::string problem = rotation_problem(Quat{v[3], v[0], v[1], v[2]});
    if (!problem.empty()) r.fail(what + " key " + std::to_string(k) + " is the rotation " + problem);
  }
}

// The key track of channel `c` of animation `a` (index `animation`).
KeyTrack key_track(const Reader& r, const tinygltf::Animation& a, int animation, size_t channel) {
  const tinygltf::AnimationChannel& c = a.channels[channel];
  const std::string what = "animation " + std::to_string(animation) + " '" + printable(a.name) + "' channel " +
                           std::to_string(channel) + " (" + printable(c.target_path) + ")";
  KeyTrack t;
  t.node = c.target_node;
  if (c.target_path == "translation") t.path = KeyPath::Translation;
  else if (c.target_path == "rotation") t.path = KeyPath::Rotation;
  else if (c.target_path == "scale") t.path = KeyPath::Scale;
  else r.fail(what + ": unknown target path");
  if (c.sampler < 0 || size_t(c.sampler) >= a.samplers.size()) r.fail(what + " has no valid sampler");
  const tinygltf::AnimationSampler& s = a.samplers[size_t(c.sampler)];
  const std::string interpolation = s.interpolation.empty() ? "LINEAR" : s.interpolation;
  if (interpolation == "STEP") t.interpolation = KeyInterpolation::Step;
  else if (interpolation == "CUBICSPLINE") t.interpolation = KeyInterpolation::CubicSpline;
  else if (interpolation != "LINEAR") r.fail(what + " has interpolation '" + printable(interpolation) + "' (LINEAR, STEP or CUBICSPLINE expected)");
  t.times = read_accessor(r, s.input, 1, what + " key times");
  t.values = read_accessor(r, s.output, t.path == KeyPath::Rotation ? 4 : 3, what + " key values");
  if (t.path == KeyPath::Rotation) {
    check_rotation_keys(r, t, what + " key values: accessor " + std::to_string(s.output));
  }
  return t;
}

// The animations' tracks on nodes (morph weights are skipped).
std::vector<SceneAnimation> scene_animations(const Reader& r) {
  std::vector<SceneAnimation> out;
  for (size_t i = 0; i < r.model.animations.size(); ++i) {
    const tinygltf::Animation& a = r.model.animations[i];
    SceneAnimation animation;
    animation.name = a.name;
    for (size_t c = 0; c < a.channels.size(); ++c) {
      if (a.channels[c].target_path != "weights") animation.tracks.push_back(key_track(r, a, int(i), c));
    }
    out.push_back(std::move(animation));
  }
  return out;
}

// Skips image decoding: lmmkit reads no textures.
bool ignore_image(tinygltf::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int, void*) {
  return true;
}

// The glTF model in `bytes` (binary when it starts with "glTF", else JSON); throws InputError.
tinygltf::Model load_model(const std::string& bytes, const std::string& source, const std::string& base_dir) {
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(ignore_image, nullptr);
  tinygltf::Model model;
  std::string error, warning;
  const bool binary = bytes.size() >= 4 && bytes.compare(0, 4, "glTF") == 0;
  const bool ok = binary ? loader.LoadBinaryFromMemory(&model, &error, &warning, reinterpret_cast<const unsigned char*>(bytes.data()),
                                                       unsigned(bytes.size()), base_dir)
                         : loader.LoadASCIIFromString(&model, &error, &warning, bytes.data(), unsigned(bytes.size()), base_dir);
  if (!ok) {
    while (!error.empty() && std::isspace(static_cast<unsigned char>(error.back()))) error.pop_back();
    throw InputError(source + ": not a readable glTF 2.0 file: " + printable(error.empty() ? warning : error));
  }
  return model;
}

// Index of the joint of `skeleton` called `name` ignoring case, or -1.
int find_ignoring_case(const Skeleton& skeleton, const std::string& name) {
  const std::string wanted = lowercase(name);
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    if (lowercase(skeleton.names[size_t(j)]) == wanted) return j;
  }
  return -1;
}

// The first node with both a mesh and a skin; throws when there is none.
const tinygltf::Node& skinned_node(const Reader& r) {
  const auto& m = r.model;
  for (const tinygltf::Node& n : m.nodes) {
    if (n.mesh < 0 || n.skin < 0) continue;
    if (size_t(n.mesh) >= m.meshes.size() || size_t(n.skin) >= m.skins.size()) {
      r.fail("node '" + printable(n.name) + "' names a mesh or skin that does not exist");
    }
    return n;
  }
  r.fail("no skinned mesh (a node with both a mesh and a skin) to use as --mesh");
}

// The skeleton joint each joint of a skin drives (-1: none), whether it has that joint's own name,
// and how errors name it.
struct SkinTargets {
  std::vector<int> joint;
  std::vector<bool> own_name;
  std::vector<std::string> text;
};

// The skeleton joint of each joint of `skin`: the one of its name, else the one of its nearest
// ancestor's, else none (-1). Throws when no skin joint shares a name with the skeleton.
SkinTargets skin_targets(const Reader& r, const NodeScene& scene, const tinygltf::Skin& skin, const Skeleton& skeleton) {
  SkinTargets t{std::vector<int>(skin.joints.size(), -1), std::vector<bool>(skin.joints.size(), false), {}};
  for (size_t k = 0; k < skin.joints.size(); ++k) {
    const int node = skin.joints[k];
    if (node < 0 || size_t(node) >= scene.nodes.size()) r.fail("skin joint " + std::to_string(k) + " is not a node");
    t.text.push_back(node_text(scene, node));
    t.joint[k] = find_ignoring_case(skeleton, scene.nodes[size_t(node)].name);
    t.own_name[k] = t.joint[k] >= 0;
    int up = scene.nodes[size_t(node)].parent;
    for (size_t steps = 0; t.joint[k] < 0 && up >= 0 && steps < scene.nodes.size(); ++steps) {
      t.joint[k] = find_ignoring_case(skeleton, scene.nodes[size_t(up)].name);
      up = scene.nodes[size_t(up)].parent;
    }
  }
  if (std::find(t.own_name.begin(), t.own_name.end(), true) == t.own_name.end()) {
    r.fail("no joint of its skin is named as a joint of the skeleton (" + skeleton.joined_names() + ")");
  }
  return t;
}

// The solution x of the column-major 3x3 system m x = b (Cramer's rule); false when m is singular.
bool solve3(const float* m, Vec3 b, Vec3& x) {
  const Vec3 c0{m[0], m[1], m[2]}, c1{m[3], m[4], m[5]}, c2{m[6], m[7], m[8]};
  const float det = dot(c0, cross(c1, c2));
  if (!(std::fabs(det) > 1e-12f)) return false;
  x = Vec3{dot(b, cross(c1, c2)), dot(c0, cross(b, c2)), dot(c0, cross(c1, b))} / det;
  return true;
}

// Where each joint of `skin` is in the bind pose: the translation of the inverse of its inverse
// bind matrix (the origin without matrices: glTF's identity default).
std::vector<Vec3> bind_positions(const Reader& r, const tinygltf::Skin& skin) {
  std::vector<Vec3> out(skin.joints.size());
  if (skin.inverseBindMatrices < 0) return out;
  const std::vector<float> m = read_accessor(r, skin.inverseBindMatrices, 16, "skin inverse bind matrices");
  if (m.size() / 16 < skin.joints.size()) r.fail("skin inverse bind matrices: fewer than the skin's joints");
  for (size_t k = 0; k < skin.joints.size(); ++k) {
    const float* ibm = &m[16 * k];
    const float linear[9] = {ibm[0], ibm[1], ibm[2], ibm[4], ibm[5], ibm[6], ibm[8], ibm[9], ibm[10]};
    if (!solve3(linear, Vec3{-ibm[12], -ibm[13], -ibm[14]}, out[k])) {
      r.fail("skin joint " + std::to_string(k) + " has a singular inverse bind matrix");
    }
  }
  return out;
}

// Throws unless every skin joint that shares a skeleton joint's name is bound within
// kMeshBindTolerance of that joint's rest position.
void check_bind_pose(const Reader& r, const NodeScene& scene, const tinygltf::Skin& skin, const SkinTargets& targets,
                     const std::vector<Vec3>& binds, const Skeleton& skeleton) {
  const std::vector<Vec3> rest = rest_positions(skeleton);
  const auto text = [](Vec3 p) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "(%.3f, %.3f, %.3f)", p.x, p.y, p.z);
    return std::string(buffer);
  };
  for (size_t k = 0; k < skin.joints.size(); ++k) {
    if (!targets.own_name[k]) continue;
    const int j = targets.joint[k];
    if (length(binds[k] - rest[size_t(j)]) <= kMeshBindTolerance) continue;
    r.fail(node_text(scene, skin.joints[k]) + " is at " + text(binds[k]) + " m in the mesh's bind pose, but the skeleton's '" +
           skeleton.names[size_t(j)] + "' is at " + text(rest[size_t(j)]) +
           " m in its rest pose: --mesh needs a mesh bound in the skeleton's rest pose (offsets, no rotations)");
  }
}

// Vertex `v`'s four joints and weights as skeleton joints (`targets`): pairs of one joint merge,
// the weights are made to sum to 1. Throws on a joint index beyond the skin, a negative weight, no
// positive one, or a weight on a skin joint without a skeleton joint.
void bind_vertex(const Reader& r, const std::string& what, size_t v, const uint32_t* joints, const float* weights,
                 const SkinTargets& targets, SkinnedMesh& mesh) {
  uint16_t joint[4] = {0, 0, 0, 0};
  float weight[4] = {0, 0, 0, 0}, sum = 0.0f;
  int used = 0;
  for (int c = 0; c < 4; ++c) {
    if (weights[c] < 0.0f) r.fail(what + ": vertex " + std::to_string(v) + " has a negative weight");
    if (weights[c] == 0.0f) continue;
    if (joints[c] >= targets.joint.size()) {
      r.fail(what + ": vertex " + std::to_string(v) + " names skin joint " + std::to_string(joints[c]) + " of " +
             std::to_string(targets.joint.size()));
    }
    if (targets.joint[joints[c]] < 0) {
      r.fail(what + ": vertex " + std::to_string(v) + " is weighted to " + targets.text[joints[c]] +
             ", which has no joint of the skeleton's names at or above it");
    }
    const uint16_t j = uint16_t(targets.joint[joints[c]]);
    int slot = 0;
    while (slot < used && joint[slot] != j) ++slot;
    if (slot == used) joint[used++] = j;
    weight[slot] += weights[c];
    sum += weights[c];
  }
  if (!(sum > 0.0f)) r.fail(what + ": vertex " + std::to_string(v) + " has no positive weight");
  for (int c = 0; c < 4; ++c) {
    mesh.joints.push_back(joint[c]);
    mesh.weights.push_back(weight[c] / sum);
  }
}

// Smooth normals for the vertices from `first` on, from the triangles that use them.
void compute_normals(SkinnedMesh& mesh, uint32_t first, size_t first_index) {
  for (size_t i = first_index; i + 2 < mesh.indices.size(); i += 3) {
    const uint32_t a = mesh.indices[i], b = mesh.indices[i + 1], c = mesh.indices[i + 2];
    const Vec3 face = cross(mesh.positions[b] - mesh.positions[a], mesh.positions[c] - mesh.positions[a]);
    for (const uint32_t v : {a, b, c}) mesh.normals[v] = mesh.normals[v] + face;
  }
  for (size_t v = first; v < mesh.normals.size(); ++v) {
    mesh.normals[v] = length(mesh.normals[v]) > 1e-12f ? normalize(mesh.normals[v]) : Vec3{0.0f, 1.0f, 0.0f};
  }
}

// The index of attribute `name` of `primitive`, or -1.
int attribute(const tinygltf::Primitive& primitive, const char* name) {
  const auto it = primitive.attributes.find(name);
  return it == primitive.attributes.end() ? -1 : it->second;
}

// Adds the triangles of `primitive` (`what` in errors) to `mesh`, its skin joints made skeleton
// joints through `targets`.
void add_primitive(const Reader& r, const tinygltf::Primitive& primitive, const std::string& what,
                   const SkinTargets& targets, SkinnedMesh& mesh) {
  if (primitive.mode != -1 && primitive.mode != TINYGLTF_MODE_TRIANGLES) {
    r.fail(what + " has mode " + std::to_string(primitive.mode) + " (triangles only)");
  }
  const int position = attribute(primitive, "POSITION"), joints = attribute(primitive, "JOINTS_0");
  const int weights = attribute(primitive, "WEIGHTS_0"), normal = attribute(primitive, "NORMAL");
  if (position < 0 || joints < 0 || weights < 0) r.fail(what + " lacks POSITION, JOINTS_0 or WEIGHTS_0");
  const std::vector<float> p = read_accessor(r, position, 3, what + " POSITION");
  const std::vector<uint32_t> j = read_integers(r, joints, 4, what + " JOINTS_0");
  const std::vector<float> w = read_accessor(r, weights, 4, what + " WEIGHTS_0");
  const std::vector<float> n = normal >= 0 ? read_accessor(r, normal, 3, what + " NORMAL") : std::vector<float>{};
  const size_t count = p.size() / 3;
  if (j.size() / 4 != count || w.size() / 4 != count || (!n.empty() && n.size() / 3 != count)) {
    r.fail(what + ": POSITION, NORMAL, JOINTS_0 and WEIGHTS_0 have different counts");
  }
  const uint32_t first = uint32_t(mesh.positions.size());
  const size_t first_index = mesh.indices.size();
  for (size_t v = 0; v < count; ++v) {
    mesh.positions.push_back(Vec3{p[3 * v], p[3 * v + 1], p[3 * v + 2]});
    mesh.normals.push_back(n.empty() ? Vec3{} : normalize(Vec3{n[3 * v], n[3 * v + 1], n[3 * v + 2]}));
    bind_vertex(r, what, v, &j[4 * v], &w[4 * v], targets, mesh);
  }
  std::vector<uint32_t> indices;
  if (primitive.indices >= 0) {
    indices = read_integers(r, primitive.indices, 1, what + " indices");
  } else {
    for (uint32_t v = 0; v < count; ++v) indices.push_back(v);
  }
  if (indices.size() % 3 != 0) r.fail(what + ": " + std::to_string(indices.size()) + " indices are not whole triangles");
  for (const uint32_t index : indices) {
    if (index >= count) r.fail(what + ": index " + std::to_string(index) + " is beyond its " + std::to_string(count) + " vertices");
    mesh.indices.push_back(first + index);
  }
  if (n.empty()) compute_normals(mesh, first, first_index);
}

}  // namespace

AnimationFile parse_gltf(const std::string& bytes, const std::string& source, const std::string& base_dir) {
  const tinygltf::Model model = load_model(bytes, source, base_dir);
  const Reader r{model, source};
  NodeScene scene;
  scene.source = source;
  scene.units = "glTF 2.0: metres and Y-up (the format's)";
  scene_nodes(r, scene);
  scene.seeds = seed_joints(model);
  scene.animations = scene_animations(r);
  return sample_scene(scene);
}

AnimationFile read_gltf(const std::string& path) {
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parse_gltf(read_text_file(path, kSceneMaxFileBytes, "glTF file"), path, base.empty() ? "." : base);
}

SkinnedMesh parse_skinned_mesh(const std::string& bytes, const std::string& source, const std::string& base_dir,
                               const Skeleton& skeleton) {
  const tinygltf::Model model = load_model(bytes, source, base_dir);
  const Reader r{model, source};
  NodeScene scene;
  scene.source = source;
  scene_nodes(r, scene);
  const tinygltf::Node& node = skinned_node(r);
  const tinygltf::Skin& skin = model.skins[size_t(node.skin)];
  const SkinTargets targets = skin_targets(r, scene, skin, skeleton);
  check_bind_pose(r, scene, skin, targets, bind_positions(r, skin), skeleton);
  const tinygltf::Mesh& body = model.meshes[size_t(node.mesh)];
  SkinnedMesh mesh;
  for (size_t p = 0; p < body.primitives.size(); ++p) {
    add_primitive(r, body.primitives[p], "mesh '" + printable(body.name) + "' primitive " + std::to_string(p), targets, mesh);
  }
  if (mesh.indices.empty()) r.fail("its skinned mesh has no triangles");
  return mesh;
}

SkinnedMesh read_skinned_mesh(const std::string& path, const Skeleton& skeleton) {
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parse_skinned_mesh(read_text_file(path, kSceneMaxFileBytes, "glTF file"), path, base.empty() ? "." : base, skeleton);
}

bool is_gltf_path(const std::string& path) { return has_extension(path, {".gltf", ".glb"}); }

}  // namespace lmm::pipeline
