// libFuzzer target: the FBX reader lmm-import reads .fbx files with (parse_fbx, through assimp),
// and the .glb writer on what it accepted. Malformed files must be an InputError; anything else
// escaping, a crash, a leak or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lmm/import/fbx.hpp"
#include "lmm/import/gltf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    const AnimationFile file = parse_fbx(std::string(reinterpret_cast<const char*>(data), size), "fuzz.fbx");
    write_glb(file.skeleton, file.clips);
  } catch (const InputError&) {
  }
  return 0;
}
