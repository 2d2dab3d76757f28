// libFuzzer target: the input-script CSV parser of lmm-sim --input (load_input_script), then a
// lookup of the input at every key's time. Bad rows must be an InputError.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/engines/simulation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmm::pipeline;
  try {
    const InputScript script = load_input_script(lmm::fuzz::scratch_file(data, size));
    for (const InputKey& key : script.keys) script.at(key.time);
  } catch (const InputError&) {
  }
  return 0;
}
