// Internal to the pipeline library: the node tree and keyed animations that the glTF (gltf.cpp)
// and FBX (fbx.cpp) readers fill, and its sampling into a skeleton and clips.
#pragma once

#include <string>
#include <vector>

#include "lmm/import/animation_file.hpp"

namespace lmm::pipeline {

// Rest scales a node of the skeleton or above it may have (and the file's unit, as a scale to
// metres): beyond them a skeleton has no size or no finite one (docs/hardening.md).
constexpr float kSceneMinScale = 1e-6f;
constexpr float kSceneMaxScale = 1e6f;
// A rotation (a rest rotation or a rotation key) shorter than this is no rotation: it is refused,
// not normalised.
constexpr float kSceneMinRotationLength = 1e-6f;

// A node of the file: its name, parent and rest transform (translation, rotation, scale).
struct SceneNode {
  std::string name;  // "" names it node_<index>
  int parent = -1;
  Vec3 translation;
  Quat rotation;
  Vec3 scale{1.0f, 1.0f, 1.0f};
  std::string transform_error;  // why its transform cannot be a joint's (shear, reflection), or ""
};

// What a key track animates.
enum class KeyPath { Translation, Rotation, Scale };
// How a track interpolates between keys (glTF 2.0 Sec. 3.11; FBX keys are sampled linearly).
enum class KeyInterpolation { Linear, Step, CubicSpline };

// One node's keys of one path: `times` (s, increasing), `values` (3 floats per key, rotations 4
// as x, y, z, w; cubic splines hold in-tangent, value and out-tangent per key).
struct KeyTrack {
  int node = -1;
  KeyPath path = KeyPath::Rotation;
  KeyInterpolation interpolation = KeyInterpolation::Linear;
  std::vector<float> times, values;
};

// One animation of the file.
struct SceneAnimation {
  std::string name;
  std::vector<KeyTrack> tracks;
};

// A file's nodes and animations, as its reader found them.
struct NodeScene {
  std::string source;        // the file, for errors
  std::vector<SceneNode> nodes;
  std::vector<int> seeds;    // the nodes the skeleton is made of (skin joints, or animated nodes)
  std::vector<SceneAnimation> animations;
  Vec3 world_translation;    // applied above the top node: the file's units and axes to metres, Y-up
  Quat world_rotation;
  float world_scale = 1.0f;
  std::string units;         // what the reader found, for AnimationFile::units
};

// A node whose rest transform is the column-major 4x4 matrix `m` (translation, rotation and
// per-axis scale; a matrix with shear or a reflection sets transform_error).
SceneNode node_from_matrix(const float m[16]);

// `scene` as bytes for decode_scene (the FBX reader hands its scene from a child process).
std::string encode_scene(const NodeScene& scene);
// The scene encode_scene wrote; throws InputError when `bytes` are not such a scene.
NodeScene decode_scene(const std::string& bytes);

// Why `q` is no rotation (shorter than kSceneMinRotationLength), in words that follow "the
// rotation" in an error, or "" when it is one.
std::string rotation_problem(Quat q);

// "node N 'name'" for errors.
std::string node_text(const NodeScene& scene, int node);

// The skeleton (the seeds, their common root and the nodes between, depth first) and one clip
// per animation, sampled at its keys' rate (kEvenKeyTolerance) or kIrregularKeyFps, with the
// transforms of the nodes above the root and the world transform applied to the root. Throws
// InputError naming the file and node: no animation or seed, two roots, non-uniform, negative,
// animated or out-of-range scale on a joint or above it, a rotation shorter than
// kSceneMinRotationLength, a transform error, bad key times, duplicate joint names or names with
// control characters.
AnimationFile sample_scene(const NodeScene& scene);

}  // namespace lmm::pipeline
