// glTF 2.0 (.gltf, .glb) animation reading through tinygltf, and .glb writing: a skeleton and one
// clip per animation, in lmmkit's metres and Y-up (which are glTF's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/import/animation_file.hpp"

namespace lmm::pipeline {

// Parses a glTF 2.0 file (JSON or binary) held in `bytes`; `source` names it in errors and
// `base_dir` holds its external buffers. The skeleton is the first skin's joints (or, without a
// skin, the animated nodes) and the nodes between them and their common root; the transform of
// the nodes above that root is applied to it; animations are sampled at their keys' rate
// (kEvenKeyTolerance) or kIrregularKeyFps, with LINEAR, STEP and CUBICSPLINE keys. Throws
// InputError naming the file and the node, animation or accessor at fault: no animation or
// skeleton, non-uniform, negative or animated scale on a joint, sparse accessors, out-of-range
// indices, non-finite values.
AnimationFile parse_gltf(const std::string& bytes, const std::string& source, const std::string& base_dir);
// Reads and parses a .gltf or .glb file (parse_gltf). Throws InputError.
AnimationFile read_gltf(const std::string& path);

// A skinned triangle mesh bound to a skeleton's rest pose (its offsets, identity rotations).
struct SkinnedMesh {
  std::vector<Vec3> positions, normals;  // rest pose, metres
  std::vector<uint16_t> joints;          // four joint indices per vertex
  std::vector<float> weights;            // four weights per vertex, summing to 1
  std::vector<uint32_t> indices;         // three per triangle, counter-clockwise seen from outside
};

// World positions of `skeleton`'s rest pose (offsets, identity rotations).
std::vector<Vec3> rest_positions(const Skeleton& skeleton);

// A mesh generated around the bones of `skeleton`'s rest pose: for each joint with a parent (but
// the simulation bone's children), a closed eight-sided spindle from the parent to the joint, as
// thick as a tenth of its length (1.5 to 6 cm), rigidly bound to the parent.
SkinnedMesh bone_spindles(const Skeleton& skeleton);

// The first skinned mesh (a node with a mesh and a skin) of the glTF 2.0 file in `bytes` (`source`
// names it in errors, `base_dir` holds its external buffers), bound to `skeleton`'s rest pose: each
// skin joint becomes the skeleton's joint of the same name (ignoring case), else that of its
// nearest ancestor with one. The file's bind pose must put every joint of a shared name within
// kMeshBindTolerance of the rest pose. Triangles only; normals are computed when the file has
// none. Throws InputError naming the file and the joint, primitive or vertex at fault.
SkinnedMesh parse_skinned_mesh(const std::string& bytes, const std::string& source, const std::string& base_dir,
                               const Skeleton& skeleton);
// Reads and parses the skinned mesh of a .gltf or .glb file (parse_skinned_mesh).
SkinnedMesh read_skinned_mesh(const std::string& path, const Skeleton& skeleton);
constexpr float kMeshBindTolerance = 0.02f;  // m

// A glTF 2.0 binary (.glb) of `skeleton` (one node per joint, rest offsets as translations) and
// `clips` (one animation each: a key per frame, linear, rotations for every joint and
// translations for the joints that move), in metres and Y-up, with `mesh` (when given) as a
// skinned mesh whose skin joins every joint; parse_gltf reads it back. Names that are not UTF-8
// have their stray bytes written as '?'.
std::string write_glb(const Skeleton& skeleton, const std::vector<Clip>& clips, const SkinnedMesh* mesh = nullptr);

// Throws InputError naming --mesh unless `value` is "none", "spindles" or a .glb / .gltf path.
void check_mesh_option(const std::string& value);
// The skinned mesh the tools write into a .glb for `--mesh VALUE` (check_mesh_option): "none"
// (empty: no mesh), "spindles" (bone_spindles of `skeleton`) or a glTF file's skinned mesh bound
// to `skeleton` by joint names (read_skinned_mesh). Throws InputError naming --mesh.
SkinnedMesh output_mesh(const std::string& value, const Skeleton& skeleton);

// True when `path` ends in .gltf or .glb (either case).
bool is_gltf_path(const std::string& path);

}  // namespace lmm::pipeline
