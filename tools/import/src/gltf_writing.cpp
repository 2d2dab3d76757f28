// write_glb: a skeleton, its clips and a skinned mesh as a glTF 2.0 binary (tinygltf's writer), and
// bone_spindles, the mesh lmmkit generates around a skeleton.
#include <tiny_gltf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "lmm/common/errors.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/core/version.hpp"

namespace lmm::pipeline {
namespace {

// Builds the model's one buffer and its views and accessors.
class GlbBuilder {
 public:
  GlbBuilder() {
    model_.asset.version = "2.0";
    model_.asset.generator = std::string("lmmkit ") + kVersion;
    model_.buffers.emplace_back();
  }

  // Appends `values` (`components` floats per element) as an accessor; returns its index.
  // `with_bounds` stores min and max (glTF requires them on animation key times and positions).
  int add_floats(const std::vector<float>& values, int components, bool with_bounds) {
    const int type = components == 1 ? TINYGLTF_TYPE_SCALAR : components == 3 ? TINYGLTF_TYPE_VEC3 : components == 4 ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_MAT4;
    tinygltf::Accessor& accessor = add(values.data(), values.size() * sizeof(float), TINYGLTF_COMPONENT_TYPE_FLOAT, type, values.size() / size_t(components));
    for (int c = 0; with_bounds && c < components; ++c) {
      accessor.minValues.push_back(1e30), accessor.maxValues.push_back(-1e30);
      for (size_t i = size_t(c); i < values.size(); i += size_t(components)) {
        accessor.minValues.back() = std::min(accessor.minValues.back(), double(values[i]));
        accessor.maxValues.back() = std::max(accessor.maxValues.back(), double(values[i]));
      }
    }
    return int(model_.accessors.size()) - 1;
  }

  // Appends integers of `component_type` (`type`, `count` elements) as an accessor; returns its index.
  template <typename T>
  int add_integers(const std::vector<T>& values, int component_type, int type, size_t count) {
    add(values.data(), values.size() * sizeof(T), component_type, type, count);
    return int(model_.accessors.size()) - 1;
  }

  tinygltf::Model& model() { return model_; }

 private:
  // Appends `bytes` at `data` as a buffer view (4-byte aligned) and an accessor of it.
  tinygltf::Accessor& add(const void* data, size_t bytes, int component_type, int type, size_t count) {
    std::vector<unsigned char>& buffer = model_.buffers[0].data;
    buffer.resize((buffer.size() + 3) / 4 * 4);
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = buffer.size();
    view.byteLength = bytes;
    buffer.resize(buffer.size() + bytes);
    std::memcpy(buffer.data() + view.byteOffset, data, bytes);
    model_.bufferViews.push_back(view);
    tinygltf::Accessor accessor;
    accessor.bufferView = int(model_.bufferViews.size()) - 1;
    accessor.componentType = component_type;
    accessor.count = count;
    accessor.type = type;
    model_.accessors.push_back(accessor);
    return model_.accessors.back();
  }

  tinygltf::Model model_;
};

// `text` with every byte that does not start or continue a valid UTF-8 sequence replaced by '?'
// (glTF's JSON is UTF-8, and tinygltf's writer aborts on anything else: a BVH or FBX joint name in
// Latin-1 did).
std::string utf8_or_marked(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
    const unsigned lead = byte(i);
    size_t length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
    const unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;   // no overlong forms
    const unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;  // no surrogates, nothing past U+10FFFF
    for (size_t k = 1; k < length; ++k) {
      const unsigned next = byte(i + k);
      if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xBF)) length = 0;
    }
    if (length == 0) {
      out += '?';
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

// One node per joint, with its rest offset and the clips' first rotation (or identity).
void add_nodes(tinygltf::Model& model, const Skeleton& skeleton, const std::vector<Clip>& clips) {
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    tinygltf::Node node;
    node.name = utf8_or_marked(skeleton.names[size_t(j)]);
    const Vec3 o = skeleton.offsets[size_t(j)];
    node.translation = {o.x, o.y, o.z};
    if (!clips.empty()) {
      const Quat q = clips.front().rotation(0, j);
      node.rotation = {q.x, q.y, q.z, q.w};
    }
    model.nodes.push_back(node);
    if (skeleton.parents[size_t(j)] >= 0) model.nodes[size_t(skeleton.parents[size_t(j)])].children.push_back(j);
  }
  tinygltf::Scene scene;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    if (skeleton.parents[size_t(j)] < 0) scene.nodes.push_back(j);
  }
  model.scenes.push_back(scene);
  model.defaultScene = 0;
}

// True when joint `j` of `clip` leaves its rest offset on some frame.
bool translation_moves(const Skeleton& skeleton, const Clip& clip, int j) {
  for (int f = 0; f < clip.frames; ++f) {
    if (length(clip.position(f, j) - skeleton.offsets[size_t(j)]) > 0.0f) return true;
  }
  return false;
}

// Adds a linear channel on joint `j`'s `path` with the keys `values`.
void add_channel(GlbBuilder& b, tinygltf::Animation& a, int times, int j, const char* path, const std::vector<float>& values) {
  tinygltf::AnimationSampler sampler;
  sampler.input = times;
  sampler.output = b.add_floats(values, std::strcmp(path, "rotation") == 0 ? 4 : 3, false);
  sampler.interpolation = "LINEAR";
  a.samplers.push_back(sampler);
  tinygltf::AnimationChannel channel;
  channel.sampler = int(a.samplers.size()) - 1;
  channel.target_node = j;
  channel.target_path = path;
  a.channels.push_back(channel);
}

void add_animation(GlbBuilder& b, const Skeleton& skeleton, const Clip& clip) {
  tinygltf::Animation animation;
  animation.name = utf8_or_marked(clip.name);
  std::vector<float> times(size_t(clip.frames));
  for (int f = 0; f < clip.frames; ++f) times[size_t(f)] = float(f) / clip.fps;
  const int time_accessor = b.add_floats(times, 1, true);
  for (int j = 0; j < clip.joints; ++j) {
    std::vector<float> rotations, positions;
    for (int f = 0; f < clip.frames; ++f) {
      const Quat q = clip.rotation(f, j);
      const Vec3 p = clip.position(f, j);
      rotations.insert(rotations.end(), {q.x, q.y, q.z, q.w});
      positions.insert(positions.end(), {p.x, p.y, p.z});
    }
    if (translation_moves(skeleton, clip, j)) add_channel(b, animation, time_accessor, j, "translation", positions);
    add_channel(b, animation, time_accessor, j, "rotation", rotations);
  }
  b.model().animations.push_back(animation);
}

// Adds `mesh` as a mesh node skinned to every joint (inverse bind matrices: the rest pose's).
void add_skinned_mesh(GlbBuilder& b, const Skeleton& skeleton, const SkinnedMesh& mesh) {
  tinygltf::Model& model = b.model();
  std::vector<float> positions, normals, inverse_binds;
  for (size_t v = 0; v < mesh.positions.size(); ++v) {
    positions.insert(positions.end(), {mesh.positions[v].x, mesh.positions[v].y, mesh.positions[v].z});
    normals.insert(normals.end(), {mesh.normals[v].x, mesh.normals[v].y, mesh.normals[v].z});
  }
  for (const Vec3& p : rest_positions(skeleton)) {
    inverse_binds.insert(inverse_binds.end(), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -p.x, -p.y, -p.z, 1});
  }
  tinygltf::Primitive primitive;
  primitive.mode = TINYGLTF_MODE_TRIANGLES;
  primitive.attributes["POSITION"] = b.add_floats(positions, 3, true);
  primitive.attributes["NORMAL"] = b.add_floats(normals, 3, false);
  primitive.attributes["JOINTS_0"] = b.add_integers(mesh.joints, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT, TINYGLTF_TYPE_VEC4, mesh.joints.size() / 4);
  primitive.attributes["WEIGHTS_0"] = b.add_floats(mesh.weights, 4, false);
  primitive.indices = b.add_integers(mesh.indices, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT, TINYGLTF_TYPE_SCALAR, mesh.indices.size());
  primitive.material = 0;
  tinygltf::Material material;
  material.name = "lmmkit";
  material.pbrMetallicRoughness.baseColorFactor = {0.75, 0.72, 0.68, 1.0};
  material.pbrMetallicRoughness.metallicFactor = 0.0;
  material.pbrMetallicRoughness.roughnessFactor = 0.8;
  model.materials.push_back(material);
  tinygltf::Mesh gltf_mesh;
  gltf_mesh.name = "body";
  gltf_mesh.primitives.push_back(primitive);
  model.meshes.push_back(gltf_mesh);
  tinygltf::Skin skin;
  skin.inverseBindMatrices = b.add_floats(inverse_binds, 16, false);
  for (int j = 0; j < skeleton.joint_count(); ++j) skin.joints.push_back(j);
  model.skins.push_back(skin);
  tinygltf::Node node;
  node.name = "body";
  node.mesh = 0;
  node.skin = 0;
  model.nodes.push_back(node);
  model.scenes[0].nodes.push_back(int(model.nodes.size()) - 1);
}

}  // namespace

std::vector<Vec3> rest_positions(const Skeleton& skeleton) {
  std::vector<Vec3> world(skeleton.offsets.size());
  for (size_t j = 0; j < world.size(); ++j) {
    const int parent = skeleton.parents[j];
    world[j] = skeleton.offsets[j] + (parent >= 0 ? world[size_t(parent)] : Vec3{});
  }
  return world;
}

SkinnedMesh bone_spindles(const Skeleton& skeleton) {
  constexpr int kSides = 8;
  const std::vector<Vec3> world = rest_positions(skeleton);
  SkinnedMesh mesh;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const int parent = skeleton.parents[size_t(j)];
    if (parent < 0 || (skeleton.parents[size_t(parent)] < 0 && skeleton.names[size_t(parent)] == kSimulationBoneName)) continue;
    const Vec3 a = world[size_t(parent)], b = world[size_t(j)];
    const float bone = length(b - a);
    if (bone < 0.01f) continue;
    const Vec3 axis = (b - a) / bone;
    const Vec3 side = normalize(cross(axis, std::fabs(axis.y) < 0.9f ? Vec3{0, 1, 0} : Vec3{1, 0, 0}));
    const Vec3 up = cross(side, axis);
    const float radius = std::clamp(0.1f * bone, 0.015f, 0.06f);
    const uint32_t first = uint32_t(mesh.positions.size());
    const auto add_vertex = [&](Vec3 p, Vec3 n) {
      mesh.positions.push_back(p);
      mesh.normals.push_back(n);
      mesh.joints.insert(mesh.joints.end(), {uint16_t(parent), 0, 0, 0});
      mesh.weights.insert(mesh.weights.end(), {1.0f, 0.0f, 0.0f, 0.0f});
    };
    add_vertex(a, -axis);  // tips, then two rings at a fifth and four fifths of the bone
    add_vertex(b, axis);
    for (const float along : {0.2f, 0.8f}) {
      for (int k = 0; k < kSides; ++k) {
        const float angle = 6.2831853f * float(k) / kSides;
        const Vec3 out = side * std::cos(angle) + up * std::sin(angle);
        add_vertex(a + (b - a) * along + out * radius, out);
      }
    }
    for (uint32_t k = 0; k < kSides; ++k) {
      const uint32_t next = (k + 1) % kSides, r1 = first + 2, r2 = first + 2 + kSides;
      mesh.indices.insert(mesh.indices.end(), {first, r1 + k, r1 + next});            // the cap at the parent
      mesh.indices.insert(mesh.indices.end(), {r1 + k, r2 + next, r1 + next, r1 + k, r2 + k, r2 + next});
      mesh.indices.insert(mesh.indices.end(), {first + 1, r2 + next, r2 + k});        // the cap at the joint
    }
  }
  return mesh;
}

std::string write_glb(const Skeleton& skeleton, const std::vector<Clip>& clips, const SkinnedMesh* mesh) {
  GlbBuilder builder;
  add_nodes(builder.model(), skeleton, clips);
  for (const Clip& clip : clips) {
    if (clip.joints != skeleton.joint_count()) throw InputError("write_glb: clip '" + clip.name + "' does not fit the skeleton");
    add_animation(builder, skeleton, clip);
  }
  if (mesh != nullptr && !mesh->indices.empty()) add_skinned_mesh(builder, skeleton, *mesh);
  std::vector<tinygltf::Buffer>& buffers = builder.model().buffers;
  if (buffers[0].data.empty()) buffers.clear();  // no clips: a GLB without a BIN chunk

  std::ostringstream out;
  tinygltf::TinyGLTF writer;
  if (!writer.WriteGltfSceneToStream(&builder.model(), out, false, true)) throw InputError("write_glb: tinygltf could not write the file");
  return out.str();
}

void check_mesh_option(const std::string& value) {
  if (value != "none" && value != "spindles" && !is_gltf_path(value)) {
    throw InputError("--mesh: '" + printable(value) + "' is not none, spindles or a .glb / .gltf file");
  }
}

SkinnedMesh output_mesh(const std::string& value, const Skeleton& skeleton) {
  check_mesh_option(value);
  if (value == "none") return SkinnedMesh{};
  if (value == "spindles") return bone_spindles(skeleton);
  try {
    return read_skinned_mesh(value, skeleton);
  } catch (const InputError& e) {
    throw InputError(std::string("--mesh: ") + e.what());
  }
}

}  // namespace lmm::pipeline
