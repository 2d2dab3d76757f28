// Writing DirectionNet bundles (*.lmdn, lmm/asset/direction_net.hpp) for lmm-export, training and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmm {

// The values of a DirectionNet: sizes and, input-major ([in, out]), its layers.
struct DirectionValues {
  int hidden = 0, window = 0, present = 0;
  float step_seconds = 0.0f;
  std::vector<float> input_mean, input_std;       // 4 each
  std::vector<float> input_weight, input_bias;    // 4 x 3 hidden, 3 hidden
  std::vector<float> hidden_weight, hidden_bias;  // hidden x 3 hidden, 3 hidden
  std::vector<float> output_weight, output_bias;  // hidden x 2, 2
};

// Serialises `values` as a DirectionNet bundle into `out` and loads it back (the runtime's checks);
// false with a message naming the value or tensor at fault.
bool build_direction_bundle(const DirectionValues& values, std::vector<uint8_t>& out, std::string& error);

}  // namespace lmm
