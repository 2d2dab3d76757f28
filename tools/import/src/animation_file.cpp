#include "lmm/import/animation_file.hpp"

#include <algorithm>
#include <filesystem>

#include "lmm/common/report.hpp"
#include "lmm/import/fbx.hpp"
#include "lmm/import/gltf.hpp"

namespace lmm::pipeline {

bool has_extension(const std::string& path, const std::vector<std::string>& extensions) {
  const std::string ext = lowercase(std::filesystem::path(path).extension().string());
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

bool is_animation_file_path(const std::string& path) { return is_gltf_path(path) || is_fbx_path(path); }

AnimationFile read_animation_file(const std::string& path) { return is_fbx_path(path) ? read_fbx(path) : read_gltf(path); }

}  // namespace lmm::pipeline
