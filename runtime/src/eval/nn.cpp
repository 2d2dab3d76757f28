#include "lmm/eval/nn.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "eval/nn_kernels.hpp"
#include "lmm/core/cpu_features.hpp"

namespace lmm {
namespace detail {

float gelu_scalar(float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); }

namespace {

// The float with these bits.
float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A weight as f32: f32 weights as they are, f16 weights (bits) by half_to_float's rule.
float widen(float w) { return w; }
// half_to_float for finite halves (the loader rejects others), without branches so the loops
// over a weight row vectorise: the bits moved into place and the exponent rebased; zero and
// subnormal halves (exponent 0) get exponent 1 and then lose its 2^-14, exactly.
inline float widen(uint16_t h) {
  const uint32_t moved = uint32_t(h & 0x7fffu) << 13;
  const uint32_t small = uint32_t((moved & 0x0f800000u) == 0);  // 1 for zero and subnormals
  const float magnitude = bits_to_float(moved + ((112u + small) << 23)) - bits_to_float(small * (113u << 23));
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  return bits_to_float(bits | uint32_t(h & 0x8000u) << 16);
}

// dense_scalar with the weights `weight` (layer.weight or layer.weight_half).
template <typename W>
void dense_scalar_of(const DenseLayer& l, const W* weight, const float* x, int xs, int rows, float* y, int ys,
                     bool gelu, const RowMap& map) {
  for (int r = 0; r < rows; ++r) {
    const auto [xr, yr, weights, bias] = dense_row(l, weight, x, xs, y, ys, r, map);
    if (map.out_rows != nullptr) {  // one output at a time, then scaled into the target row
      for (int o = 0; o < l.out; ++o) {
        float sum = bias[o];
        for (int i = 0; i < l.in; ++i) sum += xr[i] * widen(weights[size_t(i) * l.out + o]);
        yr[o] += map.out_scale[r] * (gelu ? gelu_scalar(sum) : sum);
      }
      continue;
    }
    std::copy(bias, bias + l.out, yr);
    for (int i = 0; i < l.in; ++i) {
      const float xi = xr[i];
      const W* w = weights + size_t(i) * l.out;
      for (int o = 0; o < l.out; ++o) yr[o] += xi * widen(w[o]);
    }
    if (!gelu) continue;
    for (int o = 0; o < l.out; ++o) yr[o] = gelu_scalar(yr[o]);
  }
}

}  // namespace

void dense_scalar(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, bool gelu,
                  const RowMap& map) {
  if (l.weight_half != nullptr) {
    dense_scalar_of(l, l.weight_half, x, xs, rows, y, ys, gelu, map);
  } else {
    dense_scalar_of(l, l.weight, x, xs, rows, y, ys, gelu, map);
  }
}

void top_k_scalar(const float* logits, int count, int k, float* best, int32_t* experts) {
  for (int j = 0; j < k; ++j) {
    best[j] = -INFINITY;
    experts[j] = j;
  }
  for (int e = 0; e < count; ++e) {
    const float v = logits[e];
    if (!(v > best[k - 1])) continue;
    int at = k - 1;
    for (; at > 0 && best[at - 1] < v; --at) {
      best[at] = best[at - 1];
      experts[at] = experts[at - 1];
    }
    best[at] = v;
    experts[at] = e;
  }
}

}  // namespace detail

namespace {

// Expert `e`'s copy of a stacked expert layer.
DenseLayer expert_layer(const DenseLayer& stacked, int e) {
  DenseLayer layer = stacked;
  const size_t weights = size_t(e) * stacked.in * stacked.out;
  if (layer.weight_half != nullptr) {
    layer.weight_half += weights;
  } else {
    layer.weight += weights;
  }
  layer.bias += size_t(e) * stacked.out;
  return layer;
}

// out row r = raw row r * scale + offset, for `rows` rows of `size` values.
void scale_rows(const float* raw, int rows, int size, const float* scale, const float* offset, float* out) {
  for (int r = 0; r < rows; ++r) {
    const size_t row = size_t(r) * size;
    for (int i = 0; i < size; ++i) out[row + i] = raw[row + i] * scale[i] + offset[i];
  }
}

}  // namespace

namespace detail {

DenseKernel dense_kernel_for(KernelPath path) {
  switch (path) {
    case KernelPath::Avx512: return dense_avx512_kernel(cpu_splits_512_bit_vectors());
    case KernelPath::Avx2: return dense_avx2_kernel();
    case KernelPath::Simd128: return dense_simd128_kernel();
    default: return &dense_scalar;
  }
}

namespace {

// Whether `path` runs the x86 SIMD kernels (AVX-512 uses the AVX2 top-k kernel).
bool x86_simd(KernelPath path) { return path == KernelPath::Avx2 || path == KernelPath::Avx512; }

}  // namespace

TopKKernel top_k_kernel_for(KernelPath path) { return x86_simd(path) ? top_k_avx2_kernel() : &top_k_scalar; }

GruWindowKernel gru_window_kernel_for(KernelPath path, int padded) {
  GruWindowKernel kernel = path == KernelPath::Avx512 ? gru_window_avx512_kernel(padded) : nullptr;
  if (kernel == nullptr && x86_simd(path)) kernel = gru_window_avx2_kernel(padded);
  return kernel != nullptr ? kernel : &gru_window_scalar;
}

}  // namespace detail

bool ModelEvaluator::init(std::shared_ptr<const Model> bundle, int batch_capacity, KernelPath path,
                          std::string& error) {
  if (bundle == nullptr) {
    error = "no model (null pointer)";
    return false;
  }
  const Model& model = *bundle;
  if (batch_capacity <= 0 || batch_capacity > kMaxBatchCapacity) {
    error = "batch capacity " + std::to_string(batch_capacity) + " is not in 1.." + std::to_string(kMaxBatchCapacity);
    return false;
  }
  if (!detail::resolve_kernel_path(path, error)) return false;
  const NetworkWeights* nets[] = {&model.decoder(), &model.stepper(), &model.projector(), &model.encoder()};
  int width = 1, experts = 1, top_k = 1;
  for (const NetworkWeights* net : nets) {
    width = std::max(width, net->max_width());
    experts = std::max(experts, net->experts);
    top_k = std::max(top_k, net->top_k);
  }
  model_ = bundle;
  path_ = path;
  capacity_ = batch_capacity;
  const size_t rows = size_t(batch_capacity), entries = rows * size_t(top_k);
  ping_.assign(entries * width, 0.0f);
  pong_.assign(entries * width, 0.0f);
  logits_.assign(rows * experts, 0.0f);
  mix_.assign(rows * width, 0.0f);
  route_weight_.assign(entries, 0.0f);
  slot_weight_.assign(entries, 0.0f);
  result_.assign(rows * width, 0.0f);
  standardised_.assign(size_t(model.encoder().in), 0.0f);
  route_expert_.assign(entries, 0);
  expert_start_.assign(size_t(top_k) * size_t(experts) + 1, 0);
  slot_row_.assign(entries, 0);
  return true;
}

bool ModelEvaluator::ready() const { return model_ != nullptr; }

void ModelEvaluator::route(const NetworkWeights& net, const float* logits, float* weights, int32_t* experts) const {
  // Kleanthous & Martini 2023 Eq. 2-3: softmax, top-k, renormalised; the softmax's denominator cancels in the
  // renormalisation, so the weights come straight from the k largest logits.
  float best[kMaxTopK];
  detail::top_k_kernel_for(path_)(logits, net.experts, net.top_k, best, experts);
  float sum = 0.0f;
  for (int j = 0; j < net.top_k; ++j) sum += weights[j] = std::exp(best[j] - best[0]);
  for (int j = 0; j < net.top_k; ++j) weights[j] /= sum;
}

int ModelEvaluator::route_row(const NetworkWeights& net, const float* in, int32_t* experts, float* weights) {
  if (!ready() || net.experts == 0) return 0;
  detail::dense_kernel_for(path_)(net.gate, in, net.in, 1, logits_.data(), net.experts, false, detail::RowMap{});
  route(net, logits_.data(), weights, experts);
  return net.top_k;
}

const float* ModelEvaluator::run_mlp(const std::vector<DenseLayer>& layers, const float* in, int rows, float* out) {
  const detail::DenseKernel dense = detail::dense_kernel_for(path_);
  const float* src = in;
  int src_stride = layers.empty() ? 0 : layers.front().in;
  for (size_t l = 0; l < layers.size(); ++l) {
    const bool last = l + 1 == layers.size();
    float* dst = last ? out : (src == ping_.data() ? pong_.data() : ping_.data());
    dense(layers[l], src, src_stride, rows, dst, layers[l].out, !last, detail::RowMap{});
    src = dst;
    src_stride = layers[l].out;
  }
  return src;
}

void ModelEvaluator::run_single(const NetworkWeights& net, const float* in, float* out) {
  if (net.experts == 0) {
    run_mlp(net.mlp, in, 1, out);
    return;
  }
  const detail::DenseKernel dense = detail::dense_kernel_for(path_);
  dense(net.gate, in, net.in, 1, logits_.data(), net.experts, false, detail::RowMap{});
  float weights[kMaxTopK];
  int32_t experts[kMaxTopK];
  route(net, logits_.data(), weights, experts);
  const int width = net.expert_out();
  float* mix = net.mlp.empty() ? out : mix_.data();
  std::fill(mix, mix + width, 0.0f);
  // The routed experts side by side in pairs (independent work that hides each layer's latency),
  // adding into mix in routing order as one at a time would.
  const int32_t row0[detail::kExpertPairRows] = {};
  int j = 0;
  for (; j + detail::kExpertPairRows <= net.top_k; j += detail::kExpertPairRows) {
    run_expert(net, 0, &experts[j], in, row0, 0, detail::kExpertPairRows, row0, &weights[j], mix);
  }
  for (; j < net.top_k; ++j) run_expert(net, experts[j], nullptr, in, nullptr, 0, 1, row0, &weights[j], mix);
  if (!net.mlp.empty()) run_mlp(net.mlp, mix, 1, out);
}

void ModelEvaluator::run_experts_grouped(const NetworkWeights& net, const float* in, int rows, float* mix) {
  const detail::DenseKernel dense = detail::dense_kernel_for(path_);
  const int k = net.top_k, width = net.expert_out(), groups = k * net.experts;
  dense(net.gate, in, net.in, rows, logits_.data(), net.experts, false, detail::RowMap{});
  // Slots are grouped by (routing rank, expert): every row adds its best expert's output first,
  // then its second, as run_single does, so a batched row equals the same row alone bit for bit.
  auto group_of = [&](int entry) { return (entry % k) * net.experts + route_expert_[entry]; };
  std::fill(expert_start_.begin(), expert_start_.begin() + groups + 1, 0);
  for (int r = 0; r < rows; ++r) {
    route(net, logits_.data() + size_t(r) * net.experts, route_weight_.data() + size_t(r) * k,
          route_expert_.data() + size_t(r) * k);
    for (int j = 0; j < k; ++j) ++expert_start_[group_of(r * k + j) + 1];
  }
  for (int g = 0; g < groups; ++g) expert_start_[g + 1] += expert_start_[g];
  // Counting sort of the (row, choice) entries by group: slot_row_ / slot_weight_ hold each
  // slot's input row and routing weight, expert_start_[g] the first slot of group g.
  for (int entry = 0; entry < rows * k; ++entry) {
    const int slot = expert_start_[group_of(entry)]++;
    slot_row_[slot] = entry / k;
    slot_weight_[slot] = route_weight_[entry];
  }
  for (int g = groups; g > 0; --g) expert_start_[g] = expert_start_[g - 1];
  expert_start_[0] = 0;
  std::fill(mix, mix + size_t(rows) * width, 0.0f);
  for (int g = 0; g < groups; ++g) {
    const int first = expert_start_[g], count = expert_start_[g + 1] - first;
    // A group's rows are distinct (one entry per row and rank), so no two of its slots add into
    // one row of mix.
    if (count > 0) {
      run_expert(net, g % net.experts, nullptr, in, slot_row_.data() + first, first, count, slot_row_.data() + first,
                 slot_weight_.data() + first, mix);
    }
  }
}

void ModelEvaluator::run_expert(const NetworkWeights& net, int e, const int32_t* row_experts, const float* in,
                                const int32_t* in_rows, int first, int count, const int32_t* mix_rows,
                                const float* weights, float* mix) {
  const detail::DenseKernel dense = detail::dense_kernel_for(path_);
  const float* src = in;
  int src_stride = net.in;
  for (size_t l = 0; l < net.expert_layers.size(); ++l) {
    const DenseLayer layer = expert_layer(net.expert_layers[l], e);
    const bool last = l + 1 == net.expert_layers.size();
    detail::RowMap map;
    map.experts = row_experts;
    if (l == 0) map.in_rows = in_rows;
    float* dst = mix;
    int dst_stride = net.expert_out();
    if (last) {
      map.out_rows = mix_rows;
      map.out_scale = weights;
    } else {
      dst = (l % 2 == 0 ? ping_.data() : pong_.data()) + size_t(first) * layer.out;
      dst_stride = layer.out;
    }
    dense(layer, src, src_stride, count, dst, dst_stride, !last, map);
    src = dst;
    src_stride = layer.out;
  }
}

void ModelEvaluator::run_chunk(const NetworkWeights& net, const float* in, int rows, float* out) {
  if (net.experts == 0) {
    run_mlp(net.mlp, in, rows, out);
    return;
  }
  float* mix = net.mlp.empty() ? out : mix_.data();
  run_experts_grouped(net, in, rows, mix);
  if (!net.mlp.empty()) run_mlp(net.mlp, mix, rows, out);
}

template <typename Finish>
void ModelEvaluator::run_chunks(const NetworkWeights& net, const float* in, int count, const Finish& finish) {
  // Each chunk's outputs go to result_ first, so finishing may overwrite the chunk's inputs.
  for (int first = 0; first < count; first += capacity_) {
    const int rows = std::min(capacity_, count - first);
    const float* x = in + size_t(first) * net.in;
    if (rows == 1) {
      run_single(net, x, result_.data());
    } else {
      run_chunk(net, x, rows, result_.data());
    }
    finish(first, rows, result_.data());
  }
}

bool ModelEvaluator::run(const NetworkWeights& net, const float* in, int count, float* out) {
  if (!ready()) return false;
  run_chunks(net, in, count, [&](int first, int rows, const float* y) {
    std::copy(y, y + size_t(rows) * net.out, out + size_t(first) * net.out);
  });
  return true;
}

bool ModelEvaluator::decode_batch(const float* latent_and_features, int count, float* poses) {
  if (!ready()) return false;
  const Model& m = *model_;
  const PoseVectorLayout& layout = m.pose_layout();
  const int size = layout.size();
  run_chunks(m.decoder(), latent_and_features, count, [&](int first, int rows, const float* y) {
    scale_rows(y, rows, size, m.pose_std(), m.pose_mean(), poses + size_t(first) * size);
    for (int r = 0; r < rows; ++r) {
      float* pose = poses + size_t(first + r) * size;
      for (int c = layout.contact(); c < layout.contact() + layout.contacts; ++c) pose[c] = detail::sigmoid(pose[c]);
    }
  });
  return true;
}

bool ModelEvaluator::decode(const float* latent_and_features, float* pose) {
  return decode_batch(latent_and_features, 1, pose);
}

bool ModelEvaluator::step_batch(const float* states, int count, float* next_states) {
  if (!ready()) return false;
  const Model& m = *model_;
  const int size = m.state_size();
  run_chunks(m.stepper(), states, count, [&](int first, int rows, const float* y) {
    for (int r = 0; r < rows; ++r) {
      const size_t row = size_t(first + r) * size;
      const float* delta = y + size_t(r) * size;
      for (int i = 0; i < size; ++i) next_states[row + i] = states[row + i] + delta[i] * m.delta_scale()[i];
    }
  });
  return true;
}

bool ModelEvaluator::step(const float* state, float* next_state) { return step_batch(state, 1, next_state); }

bool ModelEvaluator::project_batch(const float* queries, int count, float* states) {
  if (!ready()) return false;
  const Model& m = *model_;
  const int size = m.state_size();
  run_chunks(m.projector(), queries, count, [&](int first, int rows, const float* y) {
    scale_rows(y, rows, size, m.state_std(), m.state_mean(), states + size_t(first) * size);
  });
  return true;
}

bool ModelEvaluator::project(const float* query, float* state) { return project_batch(query, 1, state); }

bool ModelEvaluator::encode(const float* pose_and_positions, float* latent) {
  if (!ready() || !model_->has_encoder()) return false;
  const Model& m = *model_;
  const int in = m.encoder().in;
  for (int i = 0; i < in; ++i)
    standardised_[size_t(i)] = (pose_and_positions[i] - m.encoder_mean()[i]) / m.encoder_std()[i];
  run_single(m.encoder(), standardised_.data(), result_.data());
  std::copy(result_.data(), result_.data() + m.latent(), latent);
  return true;
}

}  // namespace lmm
