// Random model bundles on top of SyntheticDatabase, and an independent double-precision
// reference evaluation of their networks (full softmax over every expert, std::erf GELU).
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/model_builder.hpp"
#include "support/synthetic_database.hpp"

namespace lmm::test {

// Uniform values in [-scale, scale), from mt19937's raw output (which the standard fixes), so
// every standard library produces the same values (the golden bundle depends on them).
inline std::vector<float> random_values(size_t n, float scale, std::mt19937& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * (float(rng() >> 8) * (2.0f / 16777216.0f) - 1.0f);
  return v;
}

// `stack` random in -> out layers (weights ~ 1.5 / sqrt(in), so activations stay O(1)).
inline LayerValues random_layer(int in, int out, int stack, std::mt19937& rng) {
  const float scale = 1.5f / std::sqrt(float(in));
  return {in, out, random_values(size_t(stack) * in * out, scale, rng), random_values(size_t(stack) * out, 0.3f, rng)};
}

// Shape of a random network: experts == 0 gives a plain MLP with `hidden` layers.
struct NetworkShape {
  int experts = 0;
  int top_k = 2;
  std::vector<int> hidden;       // expert hidden sizes (SMoE) or MLP hidden sizes
  int expert_out = 0;            // SMoE with post layers: expert output size (0 = network out)
  std::vector<int> post_hidden;  // post layers' hidden sizes
};

inline NetworkValues random_network(int in, int out, const NetworkShape& shape, std::mt19937& rng) {
  NetworkValues net;
  net.experts = shape.experts;
  net.top_k = shape.experts > 0 ? shape.top_k : 0;
  auto chain = [&](std::vector<LayerValues>& layers, int from, const std::vector<int>& hidden, int to, int stack) {
    std::vector<int> sizes{from};
    sizes.insert(sizes.end(), hidden.begin(), hidden.end());
    sizes.push_back(to);
    for (size_t l = 0; l + 1 < sizes.size(); ++l) layers.push_back(random_layer(sizes[l], sizes[l + 1], stack, rng));
  };
  if (shape.experts == 0) {
    chain(net.mlp, in, shape.hidden, out, 1);
    return net;
  }
  net.gate = random_layer(in, shape.experts, 1, rng);
  const int expert_out = shape.expert_out > 0 ? shape.expert_out : out;
  chain(net.expert_layers, in, shape.hidden, expert_out, shape.experts);
  if (shape.expert_out > 0) chain(net.mlp, expert_out, shape.post_hidden, out, 1);
  return net;
}

// Sizes of SyntheticDatabase: 2 animated joints, 1 contact, 5 features.
constexpr int kSyntheticPose = 9 * 2 + 6 + 1;
constexpr int kSyntheticFeatures = 5;

// Random model values for SyntheticDatabase: SMoE networks (decoder with post layers) or, with
// `plain`, FFNs; optionally the encoder.
inline ModelValues random_model_values(int latent, uint32_t seed, bool plain = false, bool encoder = false) {
  std::mt19937 rng(seed);
  const int state = latent + kSyntheticFeatures;
  ModelValues v;
  v.preset = plain ? "synthetic-ffn" : "synthetic";
  v.latent = latent;
  // Widths from 8 to 130 reach every kernel block shape (1-3 row tails, 24- and 32-wide column
  // blocks, masked tails, single rows with up to 8 vectors).
  const NetworkShape decoder = plain ? NetworkShape{0, 0, {70}, 0, {}} : NetworkShape{6, 2, {8, 70}, 8, {130}};
  const NetworkShape stepper = plain ? NetworkShape{0, 0, {16, 100}, 0, {}} : NetworkShape{5, 2, {8}, 0, {}};
  const NetworkShape projector = plain ? NetworkShape{0, 0, {16, 16, 16}, 0, {}} : NetworkShape{4, 3, {12, 64}, 0, {}};
  v.decoder = random_network(state, kSyntheticPose, decoder, rng);
  v.stepper = random_network(state, state, stepper, rng);
  v.projector = random_network(kSyntheticFeatures, state, projector, rng);
  auto positive = [&](size_t n) {
    std::vector<float> s = random_values(n, 0.4f, rng);
    for (float& x : s) x = 0.6f + x;
    return s;
  };
  v.pose_mean = random_values(kSyntheticPose, 0.5f, rng);
  v.pose_std = positive(kSyntheticPose);
  v.delta_scale = positive(size_t(state));
  v.state_mean = random_values(size_t(state), 0.5f, rng);
  v.state_std = positive(size_t(state));
  if (encoder) {
    const int in = kSyntheticPose + 3 * 2;
    v.encoder = random_network(in, latent, NetworkShape{0, 0, {16}, 0, {}}, rng);
    v.encoder_mean = random_values(size_t(in), 0.5f, rng);
    v.encoder_std = positive(size_t(in));
  }
  return v;
}

// Names of the tags of tagged_model_values' states.
inline const std::vector<std::string> kSyntheticTags{"calm", "loud"};

// Seconds of "calm" left in a state tagged_model_values' projector makes under a constraint
// requiring it.
constexpr float kSyntheticCalmSeconds = 0.5f;

// random_model_values whose state ends in the two kSyntheticTags and the seconds left of "calm"
// (an action tag), with a plain one-layer projector whose tag outputs follow the constraint code
// exactly: tag "calm" is 0.25 + require - exclude (so a constraint on it is always met), tag
// "loud" 0.25 whatever the constraint (so requiring it is never met), calm's seconds left
// kSyntheticCalmSeconds x require; other outputs random. The stepper moves "calm" by `calm_step`
// per frame, keeps "loud" and changes calm's seconds left by `left_step` a frame (by default it
// counts them down by a frame's 1 / 60 s).
inline ModelValues tagged_model_values(int latent, uint32_t seed, float calm_step = 0.0f, float left_step = -1.0f / 60.0f) {
  ModelValues v = random_model_values(latent, seed, true, false);
  std::mt19937 rng(seed + 1);
  const int tags = int(kSyntheticTags.size()), features = kSyntheticFeatures, state = latent + features + tags + 1;
  const int inputs = features + 3 * tags + 1;  // the code of calm's run start last
  v.tag_names = kSyntheticTags;
  v.action_tag_names = {kSyntheticTags[0]};
  v.decoder = random_network(state, kSyntheticPose, NetworkShape{0, 0, {70}, 0, {}}, rng);
  v.stepper = random_network(state, state, NetworkShape{0, 0, {16}, 0, {}}, rng);
  LayerValues& last = v.stepper.mlp.back();
  for (int t = 0; t <= tags; ++t) {  // tag outputs: a constant change (the delta scale is 1 there)
    for (int i = 0; i < last.in; ++i) last.weight[size_t(i * state + latent + features + t)] = 0.0f;
    last.bias[size_t(latent + features + t)] = t == 0 ? calm_step : t == tags ? left_step : 0.0f;
  }
  v.projector = random_network(inputs, state, NetworkShape{0, 0, {}, 0, {}}, rng);
  LayerValues& projector = v.projector.mlp.front();
  const int calm = latent + features, loud = calm + 1, calm_left = calm + 2;
  for (int i = 0; i < inputs; ++i) {
    projector.weight[size_t(i * state + calm)] = i == features ? 1.0f : i == features + 2 ? -1.0f : 0.0f;
    projector.weight[size_t(i * state + loud)] = 0.0f;
    projector.weight[size_t(i * state + calm_left)] = i == features ? kSyntheticCalmSeconds : 0.0f;
  }
  projector.bias[size_t(calm)] = projector.bias[size_t(loud)] = 0.25f;
  projector.bias[size_t(calm_left)] = 0.0f;
  const auto extend = [&](std::vector<float>& values, float tag_value) { values.resize(size_t(state), tag_value); };
  extend(v.delta_scale, 1.0f);
  extend(v.state_mean, 0.0f);
  extend(v.state_std, 1.0f);
  return v;
}

// A SyntheticDatabase loaded as a Database (its buffer kept alive alongside).
struct LoadedSyntheticDatabase {
  AlignedBuffer buffer = aligned_copy(SyntheticDatabase().build());
  std::shared_ptr<const Database> db;
  LoadedSyntheticDatabase() {
    std::string error;
    db = Database::load_buffer(buffer.data(), buffer.size(), error);
  }
};

// Bundle bytes of `values` on SyntheticDatabase's skeleton and schema.
inline std::vector<uint8_t> synthetic_bundle(const ModelValues& values, bool half, std::string& error) {
  const LoadedSyntheticDatabase data;
  std::vector<uint8_t> bytes;
  build_model_bundle(values, data.db->blob(), half, bytes, error);
  return bytes;
}

// y = x W + b (W input-major) in double precision for stacked layer `e`.
inline std::vector<double> reference_dense(const LayerValues& l, int e, const std::vector<double>& x, bool gelu) {
  std::vector<double> y(size_t(l.out));
  for (int o = 0; o < l.out; ++o) {
    double sum = l.bias[size_t(e) * l.out + o];
    for (int i = 0; i < l.in; ++i) sum += x[size_t(i)] * l.weight[(size_t(e) * l.in + i) * l.out + o];
    y[size_t(o)] = gelu ? 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0))) : sum;
  }
  return y;
}

inline std::vector<double> reference_chain(const std::vector<LayerValues>& layers, int e, std::vector<double> x) {
  for (size_t l = 0; l < layers.size(); ++l) x = reference_dense(layers[l], e, x, l + 1 < layers.size());
  return x;
}

// Network output: softmax over all gate logits, the top_k largest renormalised (Kleanthous & Martini 2023
// Eq. 2-3), weighted sum of those experts, then the MLP.
inline std::vector<double> reference_network(const NetworkValues& net, const float* in, int size) {
  std::vector<double> x(in, in + size);
  if (net.experts > 0) {
    const std::vector<double> logits = reference_dense(net.gate, 0, x, false);
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    for (size_t e = 0; e < p.size(); ++e) p[e] = std::exp(logits[e] - top);
    const double total = std::accumulate(p.begin(), p.end(), 0.0);
    for (double& v : p) v /= total;
    std::vector<int> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + net.top_k, order.end(), [&](int a, int b) { return p[a] > p[b]; });
    double kept = 0.0;
    for (int j = 0; j < net.top_k; ++j) kept += p[size_t(order[j])];
    std::vector<double> mix;
    for (int j = 0; j < net.top_k; ++j) {
      const std::vector<double> y = reference_chain(net.expert_layers, order[j], x);
      if (mix.empty()) mix.assign(y.size(), 0.0);
      for (size_t o = 0; o < y.size(); ++o) mix[o] += p[size_t(order[j])] / kept * y[o];
    }
    x = mix;
  }
  return net.mlp.empty() ? x : reference_chain(net.mlp, 0, x);
}

}  // namespace lmm::test
