// write_glb: a skeleton and its clips as a glTF 2.0 binary (tinygltf's writer).
#include <tiny_gltf.h>

#include <algorithm>
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
  // `with_bounds` stores min and max (glTF requires them on animation key times).
  int add_floats(const std::vector<float>& values, int components, bool with_bounds) {
    std::vector<unsigned char>& data = model_.buffers[0].data;
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = data.size();
    view.byteLength = values.size() * sizeof(float);
    data.resize(data.size() + view.byteLength);
    std::memcpy(data.data() + view.byteOffset, values.data(), view.byteLength);
    model_.bufferViews.push_back(view);
    tinygltf::Accessor accessor;
    accessor.bufferView = int(model_.bufferViews.size()) - 1;
    accessor.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    accessor.count = values.size() / size_t(components);
    accessor.type = components == 1 ? TINYGLTF_TYPE_SCALAR : components == 3 ? TINYGLTF_TYPE_VEC3 : TINYGLTF_TYPE_VEC4;
    if (with_bounds) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      accessor.minValues = {double(*lo)};
      accessor.maxValues = {double(*hi)};
    }
    model_.accessors.push_back(accessor);
    return int(model_.accessors.size()) - 1;
  }

  tinygltf::Model& model() { return model_; }

 private:
  tinygltf::Model model_;
};

// One node per joint, with its rest offset and the clips' first rotation (or identity).
void add_nodes(tinygltf::Model& model, const Skeleton& skeleton, const std::vector<Clip>& clips) {
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    tinygltf::Node node;
    node.name = skeleton.names[size_t(j)];
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
  animation.name = clip.name;
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

}  // namespace

std::string write_glb(const Skeleton& skeleton, const std::vector<Clip>& clips) {
  GlbBuilder builder;
  add_nodes(builder.model(), skeleton, clips);
  for (const Clip& clip : clips) {
    if (clip.joints != skeleton.joint_count()) throw InputError("write_glb: clip '" + clip.name + "' does not fit the skeleton");
    add_animation(builder, skeleton, clip);
  }
  std::vector<tinygltf::Buffer>& buffers = builder.model().buffers;
  if (buffers[0].data.empty()) buffers.clear();  // no clips: a GLB without a BIN chunk

  std::ostringstream out;
  tinygltf::TinyGLTF writer;
  if (!writer.WriteGltfSceneToStream(&builder.model(), out, false, true)) throw InputError("write_glb: tinygltf could not write the file");
  return out.str();
}

}  // namespace lmm::pipeline
