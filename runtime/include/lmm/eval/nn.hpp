// Dependency-free inference of a model bundle's networks (Kleanthous & Martini 2023 Sec. 3): dense layers, GELU
// (erf form, as torch::gelu), sigmoid contacts and sparse mixtures of experts that evaluate only
// the gate and the top-k routed experts. One evaluator per thread; no allocation per call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/model.hpp"
#include "lmm/eval/kernel_support.hpp"

namespace lmm {

// Largest batch_capacity ModelEvaluator::init accepts.
constexpr int kMaxBatchCapacity = 16384;

// Evaluates the networks of one Model with preallocated scratch. The Model must outlive the
// evaluator; after the Model is reloaded, calls return false until init is called again (the
// scratch was sized for the old contents). Not thread-safe: use one evaluator per thread (any
// number of characters each). Every evaluation returns false, computing nothing, when the
// evaluator is not initialised for the model's current contents. Outputs may be the same
// pointer as inputs (e.g. step(state, state)); other overlaps are not allowed.
class ModelEvaluator {
 public:
  // Holds `model` (shared) and sizes the scratch for it and batches of up to `batch_capacity`
  // rows per internal chunk (allocates; larger batches are processed in chunks). False with a
  // message when the model is null, the kernel path is unavailable or the capacity is not in
  // 1..kMaxBatchCapacity.
  bool init(std::shared_ptr<const Model> model, int batch_capacity, KernelPath path, std::string& error);
  // The kernel path in use (never Auto after init).
  KernelPath path() const { return path_; }
  // The model given to init (null before).
  const std::shared_ptr<const Model>& model() const { return model_; }

  // Decoder: latent ++ normalised features (model.latent() + feature_dims() floats) -> pose
  // vector (pose_layout().size() floats): denormalised, contact slots as probabilities.
  bool decode(const float* latent_and_features, float* pose);
  // Stepper: state -> the state one frame later (state_size() floats each).
  bool step(const float* state, float* next_state);
  // Projector: normalised feature query (feature_dims() floats) -> state (state_size() floats).
  bool project(const float* query, float* state);
  // Encoder (bundles exported with it): raw pose vector ++ model-space joint positions ->
  // latent. Also false when the bundle has no encoder.
  bool encode(const float* pose_and_positions, float* latent);

  // Batched forms for crowds: `count` rows, row-major, same sizes as above. Rows are grouped
  // by routed expert (and routing rank) so each expert's weights are read once per chunk and
  // rank; every row's output equals the single-row call's bit for bit.
  bool decode_batch(const float* latent_and_features, int count, float* poses);
  bool step_batch(const float* states, int count, float* next_states);
  bool project_batch(const float* queries, int count, float* states);

  // Raw network output (no denormalisation) for `count` rows of `net.in` floats into
  // `count` rows of `net.out` floats; `net` must belong to the model given to init.
  bool run(const NetworkWeights& net, const float* in, int count, float* out);
  // The experts the gate of `net` (of the model given to init) routes the row `in` to: top_k
  // indices, best first, and their weights (Kleanthous & Martini 2023 Eq. 2-3, as the evaluation
  // routes). Returns top_k; 0 for a plain MLP or before init. No allocation.
  int route_row(const NetworkWeights& net, const float* in, int32_t* experts, float* weights);

 private:
  bool ready() const;
  template <typename Finish>
  void run_chunks(const NetworkWeights& net, const float* in, int count, const Finish& finish);
  void run_single(const NetworkWeights& net, const float* in, float* out);
  void run_chunk(const NetworkWeights& net, const float* in, int rows, float* out);
  void route(const NetworkWeights& net, const float* logits, float* weights, int32_t* experts) const;
  void run_experts_grouped(const NetworkWeights& net, const float* in, int rows, float* mix);
  // Expert e (row r: expert row_experts[r] when given, with e = 0 and count 2) on `count` rows
  // of `in` (rows in_rows[r], or r when null): hidden layers go through ping_ / pong_ at slot
  // offset `first`; the last adds weights[r] x its output to row mix_rows[r] of mix.
  void run_expert(const NetworkWeights& net, int e, const int32_t* row_experts, const float* in, const int32_t* in_rows,
                  int first, int count, const int32_t* mix_rows, const float* weights, float* mix);
  const float* run_mlp(const std::vector<DenseLayer>& layers, const float* in, int rows, float* out);

  std::shared_ptr<const Model> model_;
  KernelPath path_ = KernelPath::Scalar;
  int capacity_ = 0;
  // Scratch (capacity_ x top_k rows where experts are concerned); result_ holds a chunk's
  // network outputs before they are combined into the caller's output.
  std::vector<float> ping_, pong_, logits_, mix_, route_weight_, slot_weight_, result_, standardised_;
  std::vector<int32_t> route_expert_, expert_start_, slot_row_;
};

}  // namespace lmm
