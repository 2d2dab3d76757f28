// glTF 2.0 (.gltf, .glb) animation reading through tinygltf, and .glb writing: a skeleton and one
// clip per animation, in lmmkit's metres and Y-up (which are glTF's own).
#pragma once

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

// A glTF 2.0 binary (.glb) of `skeleton` (one node per joint, rest offsets as translations) and
// `clips` (one animation each: a key per frame, linear, rotations for every joint and
// translations for the joints that move), in metres and Y-up; parse_gltf reads it back.
std::string write_glb(const Skeleton& skeleton, const std::vector<Clip>& clips);

// True when `path` ends in .gltf or .glb (either case).
bool is_gltf_path(const std::string& path);

}  // namespace lmm::pipeline
