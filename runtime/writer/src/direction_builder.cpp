#include "lmm/direction_builder.hpp"

#include "lmm/asset/direction_net.hpp"
#include "lmm/blob_writer.hpp"

namespace lmm {
namespace {

// Checks that `v` holds `size` values; else a message naming it.
bool has_size(const char* name, const std::vector<float>& v, size_t size, std::string& error) {
  if (v.size() == size) return true;
  error = std::string("DirectionNet values '") + name + "' hold " + std::to_string(v.size()) + " values, expected " +
          std::to_string(size);
  return false;
}

}  // namespace

bool build_direction_bundle(const DirectionValues& v, std::vector<uint8_t>& out, std::string& error) {
  const size_t hidden = size_t(v.hidden > 0 ? v.hidden : 0), gates = 3 * hidden;
  const std::pair<const char*, std::pair<const std::vector<float>*, size_t>> arrays[] = {
      {direction_tensor::kInputMean, {&v.input_mean, kDirectionInputs}},
      {direction_tensor::kInputStd, {&v.input_std, kDirectionInputs}},
      {direction_tensor::kInputWeight, {&v.input_weight, kDirectionInputs * gates}},
      {direction_tensor::kInputBias, {&v.input_bias, gates}},
      {direction_tensor::kHiddenWeight, {&v.hidden_weight, hidden * gates}},
      {direction_tensor::kHiddenBias, {&v.hidden_bias, gates}},
      {direction_tensor::kOutputWeight, {&v.output_weight, hidden * kDirectionOutputs}},
      {direction_tensor::kOutputBias, {&v.output_bias, kDirectionOutputs}}};
  for (const auto& [name, values] : arrays) {
    if (!has_size(name, *values.first, values.second, error)) return false;
  }
  const int32_t config[3] = {v.hidden, v.window, v.present};
  BlobBuilder blob;
  blob.add(direction_tensor::kConfig, DType::I32, {3}, config);
  blob.add(direction_tensor::kStepSeconds, DType::F32, {1}, &v.step_seconds);
  blob.add(direction_tensor::kInputMean, DType::F32, {kDirectionInputs}, v.input_mean.data());
  blob.add(direction_tensor::kInputStd, DType::F32, {kDirectionInputs}, v.input_std.data());
  blob.add(direction_tensor::kInputWeight, DType::F32, {kDirectionInputs, gates}, v.input_weight.data());
  blob.add(direction_tensor::kInputBias, DType::F32, {gates}, v.input_bias.data());
  blob.add(direction_tensor::kHiddenWeight, DType::F32, {hidden, gates}, v.hidden_weight.data());
  blob.add(direction_tensor::kHiddenBias, DType::F32, {gates}, v.hidden_bias.data());
  blob.add(direction_tensor::kOutputWeight, DType::F32, {hidden, kDirectionOutputs}, v.output_weight.data());
  blob.add(direction_tensor::kOutputBias, DType::F32, {kDirectionOutputs}, v.output_bias.data());
  if (!blob.build(kDirectionKind, kDirectionVersion, true, out, error)) return false;
  AlignedBuffer copy(out.size());
  std::copy(out.begin(), out.end(), copy.data());
  return DirectionNet::load_buffer(copy.data(), copy.size(), error) != nullptr;
}

}  // namespace lmm
