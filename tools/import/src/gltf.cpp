#include "lmm/import/gltf.hpp"

#include <tiny_gltf.h>

#include <algorithm>
#include <cctype>
#include <cmath>
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

// The floats of accessor `index` (`components` per element), bounds-checked against its buffer
// view and buffer; `what` says what reads it in errors.
std::vector<float> read_accessor(const Reader& r, int index, int components, const std::string& what) {
  const auto& m = r.model;
  const std::string at = what + ": accessor " + std::to_string(index);
  if (index < 0 || size_t(index) >= m.accessors.size()) r.fail(at + " does not exist");
  const tinygltf::Accessor& a = m.accessors[size_t(index)];
  if (a.sparse.isSparse) r.fail(at + " is sparse, which lmmkit does not read");
  if (type_components(a.type) != components) {
    r.fail(at + " has the wrong type (" + std::to_string(components) + " components expected)");
  }
  const size_t bytes = component_bytes(a.componentType, a.normalized);
  if (bytes == 0) r.fail(at + " has component type " + std::to_string(a.componentType) + " (float or normalized integers expected)");
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
  std::vector<float> out(count * size_t(components));
  for (size_t i = 0; i < count; ++i) {
    for (int c = 0; c < components; ++c) {
      out[i * size_t(components) + size_t(c)] = component_value(a.componentType, &data[begin + i * stride + size_t(c) * bytes]);
    }
  }
  if (!all_finite(out.data(), out.size())) r.fail(at + " holds a non-finite value");
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

// The key track of channel `c` of animation `a` (index `animation`).
KeyTrack key_track(const Reader& r, const tinygltf::Animation& a, int animation, size_t channel) {
  const tinygltf::AnimationChannel& c = a.channels[channel];
  const std::string what = "animation " + std::to_string(animation) + " channel " + std::to_string(channel) + " (" +
                           printable(c.target_path) + ")";
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

bool is_gltf_path(const std::string& path) { return has_extension(path, {".gltf", ".glb"}); }

}  // namespace lmm::pipeline
