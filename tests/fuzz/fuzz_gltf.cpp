// libFuzzer target: the glTF 2.0 reader lmm-import reads .gltf and .glb files with (parse_gltf,
// through tinygltf), the skinned-mesh reader of --mesh on the skeleton it read (parse_skinned_mesh),
// and the .glb writer on what they accepted. Malformed files must be an InputError; anything else
// escaping, a crash, a leak or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lmm/import/gltf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    // No base folder: a .gltf naming external buffers finds none.
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    const AnimationFile file = parse_gltf(bytes, "fuzz.glb", "/nonexistent-lmm-fuzz");
    write_glb(file.skeleton, file.clips);
    const SkinnedMesh mesh = parse_skinned_mesh(bytes, "fuzz.glb", "/nonexistent-lmm-fuzz", file.skeleton);
    write_glb(file.skeleton, file.clips, &mesh);
  } catch (const InputError&) {
  }
  return 0;
}
