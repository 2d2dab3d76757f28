// FBX animation reading through assimp: a skeleton and one clip per animation stack, converted
// from the file's unit (UnitScaleFactor) and axis system (UpAxis, FrontAxis, CoordAxis) to
// lmmkit's metres and Y-up.
#pragma once

#include <string>

#include "lmm/import/animation_file.hpp"

namespace lmm::pipeline {

// Parses an FBX file (binary or ASCII) held in `bytes`; `source` names it in errors. The skeleton
// is the meshes' bones (or, without them, the animated nodes) and the nodes between them and their
// common root, as for glTF (parse_gltf); pivots are folded into the nodes' transforms; keys are
// sampled linearly at their rate. Throws InputError naming the file and node: not an FBX file, no
// animation or skeleton, non-uniform, negative or animated scale on a joint, a left-handed axis
// system, non-finite values.
AnimationFile parse_fbx(const std::string& bytes, const std::string& source);
// Reads and parses an .fbx file (parse_fbx). Throws InputError.
AnimationFile read_fbx(const std::string& path);

// True when `path` ends in .fbx (any case).
bool is_fbx_path(const std::string& path);

}  // namespace lmm::pipeline
