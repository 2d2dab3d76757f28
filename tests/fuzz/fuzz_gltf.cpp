// libFuzzer target: the glTF 2.0 reader lmm-import reads .gltf and .glb files with (parse_gltf,
// through tinygltf), and the .glb writer on what it accepted. Malformed files must be an
// InputError; anything else escaping, a crash, a leak or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lmm/import/gltf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    // No base folder: a .gltf naming external buffers finds none.
    const AnimationFile file = parse_gltf(std::string(reinterpret_cast<const char*>(data), size), "fuzz.glb",
                                          "/nonexistent-lmm-fuzz");
    write_glb(file.skeleton, file.clips);
  } catch (const InputError&) {
  }
  return 0;
}
