// DirectionEvaluator: runs a DirectionNet (Lee, Kwon & Lee 2023, Sec. VI-G) over path windows with
// the GRU window kernel of its kernel path, without allocating.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/direction_net.hpp"
#include "lmm/core/kernel_path.hpp"

namespace lmm {

// Runs a DirectionNet over windows. Not thread-safe itself: one per thread (or per character).
class DirectionEvaluator {
 public:
  // Holds `net` and sizes the scratch (allocates). False with a message when `net` is null or
  // the kernels are not available.
  bool init(std::shared_ptr<const DirectionNet> net, KernelPath kernels, std::string& error);
  // One window, every value in the present frame (origin at the desired position, +Z the
  // character's facing there): `points` holds window() path points as (x, z) pairs, one per step;
  // `facings` the present() + 1 facings (x, z) of steps 0..present(). Steps up to the present
  // one read the previous step's given facing (step 0 its own); later steps read the facing
  // predicted for the step before. Writes future_steps() unit facings (x, z) into `future`.
  // False (with `future` untouched) when not initialised or a value is not finite. No allocation.
  bool predict(const float* points, const float* facings, float* future);
  // The asset this evaluator runs (nullptr before init).
  const DirectionNet* net() const { return net_.get(); }

 private:
  void pad_weights();
  float* hidden_weights();
  void standardised_inputs(const float* points, const float* facings);

  std::shared_ptr<const DirectionNet> net_;
  KernelPath path_ = KernelPath::Scalar;
  int padded_ = 0;  // units per gate block, rounded up to 8 for the SIMD kernel
  // The weights in the GRU window kernel's layout (nn_kernels.hpp GruWindow): input [4][3 padded]
  // (+ bias), hidden [hidden][3 padded] (64-byte aligned, + bias), the fed-back facing's rows
  // [2][3 padded] and the output columns [2][padded].
  std::vector<float> input_weight_, input_bias_, hidden_bias_, feedback_weight_, output_weight_;
  AlignedBuffer hidden_weight_;
  std::vector<float> inputs_;           // [window][4] standardised inputs (future steps with a zero facing)
  std::vector<float> gates_;            // [window][3 padded] input gate pre-activations
  std::vector<float> state_, scratch_;  // scalar kernel scratch: hidden state [padded], [3 padded]
};

}  // namespace lmm
