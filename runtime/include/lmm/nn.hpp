// Dependency-free inference of a model bundle's networks (seed 004 Sec. 3): dense layers, GELU
// (erf form, as torch::gelu), sigmoid contacts and sparse mixtures of experts that evaluate only
// the gate and the top-k routed experts. One evaluator per thread; no allocation per call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/model.hpp"

namespace lmm {

// Which kernels evaluate the dense layers.
enum class KernelPath {
  Auto,    // AVX2/FMA when this build and CPU support it, else Scalar
  Scalar,  // portable C++ (GELU through std::erf)
  Avx2,    // AVX2 + FMA intrinsics (GELU through a polynomial erf, |error| < 2e-7)
};

// Whether this build and this CPU can run KernelPath::Avx2.
bool avx2_available();

// Evaluates the networks of one Model with preallocated scratch. The Model must outlive the
// evaluator. Not thread-safe: use one evaluator per thread (any number of characters each).
class ModelEvaluator {
 public:
  // Sizes the scratch for `model` and batches of up to `batch_capacity` rows per internal
  // chunk (allocates; larger batches are processed in chunks). False with a message when the
  // kernel path is unavailable or the capacity is not positive.
  bool init(const Model& model, int batch_capacity, KernelPath path, std::string& error);
  // The kernel path in use (never Auto after init).
  KernelPath path() const { return path_; }

  // Decoder: latent ++ normalised features (model.latent() + feature_dims() floats) -> pose
  // vector (pose_layout().size() floats): denormalised, contact slots as probabilities.
  void decode(const float* latent_and_features, float* pose);
  // Stepper: state -> the state one frame later (state_size() floats each).
  void step(const float* state, float* next_state);
  // Projector: normalised feature query (feature_dims() floats) -> state (state_size() floats).
  void project(const float* query, float* state);
  // Encoder (bundles exported with it): raw pose vector ++ model-space joint positions ->
  // latent. False when the bundle has no encoder.
  bool encode(const float* pose_and_positions, float* latent);

  // Batched forms for crowds: `count` rows, row-major, same sizes as above. Rows are grouped
  // by routed expert so each expert's weights are read once per chunk.
  void decode_batch(const float* latent_and_features, int count, float* poses);
  void step_batch(const float* states, int count, float* next_states);
  void project_batch(const float* queries, int count, float* states);

  // Raw network output (no denormalisation) for `count` rows of `net.in` floats into
  // `count` rows of `net.out` floats; `net` must belong to the model given to init.
  void run(const NetworkWeights& net, const float* in, int count, float* out);

 private:
  void run_single(const NetworkWeights& net, const float* in, float* out);
  void run_chunk(const NetworkWeights& net, const float* in, int rows, float* out);
  void route(const NetworkWeights& net, const float* logits, float* weights, int32_t* experts) const;
  void run_experts_grouped(const NetworkWeights& net, const float* in, int rows, float* mix);
  const float* run_mlp(const std::vector<DenseLayer>& layers, const float* in, int rows, float* out);
  void decode_rows(const float* in, int count, float* poses);

  const Model* model_ = nullptr;
  KernelPath path_ = KernelPath::Scalar;
  int capacity_ = 0;
  int width_ = 0;  // widest activation of any network
  // Scratch (capacity_ x top_k rows where experts are concerned).
  std::vector<float> ping_, pong_, logits_, mix_, gathered_, expert_out_, route_weight_;
  std::vector<int32_t> route_expert_, expert_start_, order_;
};

}  // namespace lmm
