// A skeleton and its animations read from a glTF or FBX file (gltf.hpp, fbx.hpp), and reading
// either by its extension.
#pragma once

#include <string>
#include <vector>

#include "lmm/asset/skeleton.hpp"
#include "lmm/import/motion.hpp"

namespace lmm::pipeline {

// Limits of the glTF and FBX readers (docs/hardening.md, "glTF and FBX files"); a file outside
// them is an InputError naming the file and the node or animation at fault.
constexpr int kSceneMaxJoints = 1024;
constexpr double kSceneMaxSeconds = 3600.0;  // one animation's duration
constexpr uint64_t kSceneMaxFileBytes = uint64_t(2) << 30;  // 2 GiB
// Keys closer to evenly spaced than this share of their mean spacing set the sampling rate.
constexpr double kEvenKeyTolerance = 0.01;
// Sampling rate of animations whose keys are not evenly spaced (Hz).
constexpr float kIrregularKeyFps = 60.0f;

// A skeleton and its animations read from a glTF or FBX file, in metres and Y-up.
struct AnimationFile {
  Skeleton skeleton;        // rest offsets in metres
  std::vector<Clip> clips;  // one per animation, named after it (or after the file and its index)
  std::string units;        // how the file's units and axes were read, for the import log
};

// True when `path`'s extension is one of `extensions` (lower case, with the dot), in any case.
bool has_extension(const std::string& path, const std::vector<std::string>& extensions);
// True when `path` ends in .gltf, .glb or .fbx (any case).
bool is_animation_file_path(const std::string& path);
// Reads a .gltf, .glb (read_gltf) or .fbx (read_fbx) file. Throws InputError.
AnimationFile read_animation_file(const std::string& path);

}  // namespace lmm::pipeline
