// libFuzzer target: the model bundle loader (lmm::Model::load_buffer, as load_file uses it) on
// the fuzzer's bytes, then one evaluation of each network on a zero input (outputs may be
// anything, but must not crash). Built raw and with LMM_FUZZ_RESEAL (size and hash fields
// rewritten after mutation), like fuzz_mmdb.cpp.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"

namespace {

// Runs the decoder, stepper, projector (and encoder) once each on zeros.
void evaluate_once(const std::shared_ptr<const lmm::Model>& bundle) {
  const lmm::Model& model = *bundle;
  lmm::ModelEvaluator evaluator;
  std::string error;
  if (!evaluator.init(bundle, 1, lmm::KernelPath::Auto, error)) return;
  const lmm::PoseVectorLayout& layout = model.pose_layout();
  // Large enough for every network's input and output.
  const std::vector<float> zeros(size_t(model.state_size() + layout.size() + 3 * layout.joints), 0.0f);
  std::vector<float> out(zeros.size());
  evaluator.decode(zeros.data(), out.data());
  evaluator.step(zeros.data(), out.data());
  evaluator.project(zeros.data(), out.data());
  if (model.has_encoder()) evaluator.encode(zeros.data(), out.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lmm::fuzz::load_blob_input<lmm::Model>(data, size, evaluate_once);
  return 0;
}
