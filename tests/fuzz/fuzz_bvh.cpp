// libFuzzer target: the BVH parser lmm-import reads every motion file with (parse_bvh), and the
// writer on what it accepted. Malformed text must be an InputError; anything else escaping,
// a crash, a leak or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lmm/import/bvh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    const BvhFile file = parse_bvh(std::string(reinterpret_cast<const char*>(data), size), "fuzz.bvh");
    write_bvh(file);
  } catch (const InputError&) {
  }
  return 0;
}
