// libFuzzer target: the path reader of lmm-path --path (load_path: CSV with a t,x,z header or
// JSON [[t, x, z], ...]). Bad input must be an InputError.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/engines/path_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    load_path(lmm::fuzz::scratch_file(data, size));
  } catch (const InputError&) {
  }
  return 0;
}
