#include "lmm/training/phase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

#include "lmm/training/export.hpp"
#include "lmm/training/pose_data.hpp"
#include "training_loop.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;

constexpr double kTwoPi = 6.283185307179586;
constexpr int64_t kBatchFrames = 4096;        // windows per inference batch
constexpr int64_t kStatisticWindows = 4096;   // windows of the reconstruction metric
constexpr int64_t kMetricFrames = 20000;      // frames (whole clips) of the phase metrics

torch::nn::Conv1d conv(int64_t in, int64_t out, int64_t kernel) {
  return torch::nn::Conv1d(torch::nn::Conv1dOptions(in, out, kernel).padding(kernel / 2));
}

// Per-channel mean and std of every frame's signals into the model's buffers.
void set_input_statistics(PhaseModel& model, const PhaseData& data) {
  torch::NoGradGuard no_grad;
  model->input_mean.copy_(data.velocities.mean(0));
  model->input_std.copy_(data.velocities.std(0).clamp_min(1e-4));
}

// Whole clips, evenly spread over `data`, of about kMetricFrames frames in all, in order.
torch::Tensor metric_frames(const PhaseData& data) {
  const int64_t n = data.velocities.size(0);
  const torch::Tensor starts = torch::nonzero(data.clip_first == torch::arange(n, torch::kInt64)).reshape(-1);
  const int64_t every = std::max<int64_t>(1, (n + kMetricFrames - 1) / kMetricFrames);
  std::vector<torch::Tensor> clips;
  for (int64_t i = 0; i < starts.size(0); i += every) {
    const int64_t first = starts[i].item<int64_t>();
    clips.push_back(torch::arange(first, data.clip_last[first].item<int64_t>() + 1, torch::kInt64));
  }
  return torch::cat(clips);
}

// Mean squared error of the standardised windows of kStatisticWindows seeded random frames.
double reconstruction_error(PhaseModel& model, const PhaseData& data) {
  torch::NoGradGuard no_grad;
  const torch::Generator generator = at::detail::createCPUGenerator(12345);
  const int64_t count = std::min<int64_t>(kStatisticWindows, data.velocities.size(0));
  const torch::Tensor frames = torch::randperm(data.velocities.size(0), generator, torch::kInt64).narrow(0, 0, count);
  const torch::Tensor windows = phase_windows(data, model->window, frames);
  return torch::mse_loss(model->decode(model->encode(windows)), model->standardise(windows)).item<double>();
}

}  // namespace

PhaseData phase_data(const torch::Tensor& velocities, const std::vector<DatabaseRange>& ranges, double fps) {
  if (velocities.dim() != 2 || velocities.size(0) < 1) throw std::runtime_error("phase data: need signals [frames, dims]");
  if (!(fps > 0.0)) throw std::runtime_error("phase data: fps must be positive");
  PhaseData d;
  d.velocities = velocities.to(torch::kFloat32).contiguous();
  d.fps = fps;
  d.clip_first = torch::empty({velocities.size(0)}, torch::kInt64);
  d.clip_last = torch::empty({velocities.size(0)}, torch::kInt64);
  int64_t next = 0;
  for (const DatabaseRange& r : ranges) {
    if (r.start != next || r.stop <= r.start || r.stop > velocities.size(0)) {
      throw std::runtime_error("phase data: clip '" + r.name + "' [" + std::to_string(r.start) + ", " +
                               std::to_string(r.stop) + ") does not follow frame " + std::to_string(next) + " within " +
                               std::to_string(velocities.size(0)) + " frames");
    }
    d.clip_first.narrow(0, r.start, r.stop - r.start).fill_(r.start);
    d.clip_last.narrow(0, r.start, r.stop - r.start).fill_(r.stop - 1);
    next = r.stop;
  }
  if (next != velocities.size(0)) throw std::runtime_error("phase data: the clips end at frame " + std::to_string(next));
  return d;
}

PhaseData make_phase_data(const Database& db) {
  const PoseData pose = make_pose_data(db);
  PhaseData d = phase_data(torch::zeros({db.frame_count(), 1}), db.ranges(), db.fps());
  const torch::Tensor frames = torch::arange(db.frame_count(), torch::kInt64);
  const torch::Tensor before = torch::max(frames - 1, d.clip_first), after = torch::min(frames + 1, d.clip_last);
  const torch::Tensor span = (after - before).clamp_min(1).to(torch::kFloat32).unsqueeze(1);
  const torch::Tensor positions = pose.model_positions.reshape({db.frame_count(), -1});
  d.velocities = ((positions.index_select(0, after) - positions.index_select(0, before)) * float(db.fps()) / span).contiguous();
  return d;
}

PhaseWindow phase_window(const PhaseConfig& c, double fps) {
  PhaseWindow w;
  w.samples = 2 * std::lround(c.window_seconds * c.step_hz / 2.0) + 1;
  w.stride = std::max<int64_t>(1, std::lround(fps / c.step_hz));
  w.sample_seconds = double(w.stride) / fps;
  return w;
}

torch::Tensor phase_windows(const PhaseData& data, const PhaseWindow& window, const torch::Tensor& frames) {
  const torch::Tensor offsets = (torch::arange(window.samples, torch::kInt64) - window.samples / 2) * window.stride;
  const torch::Tensor first = data.clip_first.index_select(0, frames).unsqueeze(1);
  const torch::Tensor last = data.clip_last.index_select(0, frames).unsqueeze(1);
  const torch::Tensor picks = torch::min(torch::max(frames.unsqueeze(1) + offsets.unsqueeze(0), first), last);
  return data.velocities.index_select(0, picks.reshape(-1))
      .reshape({frames.size(0), window.samples, data.velocities.size(1)})
      .permute({0, 2, 1});
}

Spectrum spectral_parameters(const torch::Tensor& curves, double sample_seconds) {
  const int64_t samples = curves.size(-1);
  const torch::Tensor spectrum = torch::view_as_real(torch::fft::rfft(curves, c10::nullopt, -1));  // [..., F, 2]
  const torch::Tensor power = spectrum.pow(2).sum(-1);
  const int64_t positive = power.size(-1) - 1;
  const torch::Tensor frequencies = torch::arange(1, positive + 1, curves.options()) / (double(samples) * sample_seconds);
  const torch::Tensor positive_power = power.narrow(-1, 1, positive);
  const torch::Tensor total = positive_power.sum(-1);
  Spectrum s;
  s.frequency = (positive_power * frequencies).sum(-1) / total.clamp_min(1e-12);
  s.amplitude = 2.0 * torch::sqrt(total + 1e-12) / double(samples);
  s.offset = spectrum.select(-1, 0).select(-1, 0) / double(samples);
  return s;
}

PhaseModelImpl::PhaseModelImpl(int64_t inputs, const PhaseConfig& c, const PhaseWindow& w) : window(w) {
  encoder_in = register_module("encoder_in", conv(inputs, c.hidden, c.kernel));
  encoder_out = register_module("encoder_out", conv(c.hidden, c.channels, c.kernel));
  decoder_in = register_module("decoder_in", conv(c.channels, c.hidden, c.kernel));
  decoder_out = register_module("decoder_out", conv(c.hidden, inputs, c.kernel));
  const double bound = 1.0 / std::sqrt(double(w.samples));  // LibTorch's Linear initialisation
  phase_weight = register_parameter("phase_weight", torch::empty({c.channels, 2, w.samples}).uniform_(-bound, bound));
  phase_bias = register_parameter("phase_bias", torch::empty({c.channels, 2}).uniform_(-bound, bound));
  input_mean = register_buffer("input_mean", torch::zeros({inputs}));
  input_std = register_buffer("input_std", torch::ones({inputs}));
  times = (torch::arange(w.samples, torch::kFloat32) - double(w.samples / 2)) * w.sample_seconds;
}

torch::Tensor PhaseModelImpl::standardise(const torch::Tensor& windows) const {
  return (windows - input_mean.view({1, -1, 1})) / input_std.view({1, -1, 1});
}

torch::Tensor PhaseModelImpl::curves(const torch::Tensor& windows) {
  return encoder_out->forward(torch::elu(encoder_in->forward(standardise(windows))));
}

PhaseParameters PhaseModelImpl::encode(const torch::Tensor& windows) {
  const torch::Tensor latent = curves(windows);
  PhaseParameters p;
  static_cast<Spectrum&>(p) = spectral_parameters(latent, window.sample_seconds);
  const torch::Tensor shift = torch::einsum("bct,cst->bcs", {latent, phase_weight}) + phase_bias;  // (sx, sy)
  p.phase = torch::atan2(shift.select(-1, 1), shift.select(-1, 0)) / kTwoPi;
  return p;
}

torch::Tensor PhaseModelImpl::sinusoids(const PhaseParameters& p) const {
  const torch::Tensor t = times.view({1, 1, -1});
  return p.amplitude.unsqueeze(-1) * torch::sin(kTwoPi * (p.frequency.unsqueeze(-1) * t + p.phase.unsqueeze(-1))) +
         p.offset.unsqueeze(-1);
}

torch::Tensor PhaseModelImpl::decode(const PhaseParameters& p) {
  return decoder_out->forward(torch::elu(decoder_in->forward(sinusoids(p))));
}

TrainReport fit_phase(const TrainingConfig& preset, const PhaseData& data, PhaseModel& model, const TrainOptions& o) {
  const PhaseConfig& pc = preset.phase;
  TrainingConfig c = with_schedule(preset, pc.steps, pc.batch, pc.learning_rate);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  const int64_t frames = data.velocities.size(0);
  if (o.log) {
    char line[200];
    std::snprintf(line, sizeof line, "phase: %lld frames of %lld signals; windows of %lld samples every %lld frames "
                  "(%.2f s), %lld phase channels", static_cast<long long>(frames),
                  static_cast<long long>(data.velocities.size(1)), static_cast<long long>(model->window.samples),
                  static_cast<long long>(model->window.stride),
                  double(model->window.samples - 1) * model->window.sample_seconds, static_cast<long long>(pc.channels));
    o.log(line);
  }
  set_input_statistics(model, data);
  LoopSpec spec;
  spec.model = "phase";
  spec.net = model.ptr().get();
  spec.samples_per_step = c.batch;
  spec.adam = true;  // DeepPhase: MSE reconstruction, Adam
  spec.step = [&]() -> Terms {
    const torch::Tensor windows = phase_windows(data, model->window, torch::randint(frames, {c.batch}, torch::kInt64));
    return {{"total", torch::mse_loss(model->decode(model->encode(windows)), model->standardise(windows))}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  for (const auto& [name, value] : phase_metrics(model, data)) report.metrics[name] = value;
  return report;
}

TrainReport train_phase(const TrainingConfig& config, const Database& db, const TrainOptions& options) {
  const PhaseData data = make_phase_data(db);
  torch::manual_seed(config.seed);
  PhaseModel model(data.velocities.size(1), config.phase, phase_window(config.phase, data.fps));
  return fit_phase(config, data, model, options);
}

PhaseParameters frame_phases(PhaseModel& model, const PhaseData& data, const torch::Tensor& frames) {
  const torch::Tensor all = frames.defined() ? frames : torch::arange(data.velocities.size(0), torch::kInt64);
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> phase, frequency, amplitude, offset;
  for (int64_t s = 0; s < all.size(0); s += kBatchFrames) {
    const torch::Tensor part = all.narrow(0, s, std::min<int64_t>(kBatchFrames, all.size(0) - s));
    const PhaseParameters p = model->encode(phase_windows(data, model->window, part));
    phase.push_back(p.phase);
    frequency.push_back(p.frequency);
    amplitude.push_back(p.amplitude);
    offset.push_back(p.offset);
  }
  PhaseParameters p;
  p.phase = torch::cat(phase);
  p.frequency = torch::cat(frequency);
  p.amplitude = torch::cat(amplitude);
  p.offset = torch::cat(offset);
  return p;
}

torch::Tensor phase_embedding(const PhaseParameters& p) {
  const torch::Tensor angle = kTwoPi * p.phase;
  return torch::stack({p.amplitude * torch::sin(angle), p.amplitude * torch::cos(angle)}, -1).flatten(-2);
}

std::map<std::string, double> phase_metrics(PhaseModel& model, const PhaseData& data) {
  std::map<std::string, double> m;
  m["phase_reconstruction_error"] = reconstruction_error(model, data);
  const torch::Tensor frames = metric_frames(data);
  const PhaseParameters p = frame_phases(model, data, frames);
  const int64_t dominant = p.amplitude.mean(0).argmax().item<int64_t>();
  m["phase_dominant_channel"] = double(dominant);
  m["phase_dominant_frequency_hz"] = p.frequency.select(1, dominant).median().item<double>();
  const torch::Tensor phase = p.phase.select(1, dominant);
  const torch::Tensor step = torch::remainder(phase.narrow(0, 1, phase.size(0) - 1) - phase.narrow(0, 0, phase.size(0) - 1) + 0.5, 1.0) - 0.5;
  const torch::Tensor consecutive = frames.narrow(0, 1, frames.size(0) - 1) == frames.narrow(0, 0, frames.size(0) - 1) + 1;
  const torch::Tensor same_clip = data.clip_first.index_select(0, frames).narrow(0, 1, frames.size(0) - 1) ==
                                  data.clip_first.index_select(0, frames).narrow(0, 0, frames.size(0) - 1);
  const torch::Tensor pairs = consecutive & same_clip;
  const double count = pairs.sum().item<double>();
  m["phase_backward_share"] = count > 0 ? (step.lt(0.0) & pairs).sum().item<double>() / count : NAN;
  m["phase_dominant_advance_hz"] = count > 0 ? step.masked_select(pairs).median().item<double>() * data.fps : NAN;
  return m;
}

PhaseModel load_phase_model(const std::string& dir, const PhaseData& data) {
  const RunManifest manifest = read_run_manifest(dir);
  const TrainingConfig config = load_training_config(manifest.preset, "");
  PhaseModel model(data.velocities.size(1), config.phase, phase_window(config.phase, data.fps));
  load_checkpoint_module(*model, checkpoint_path(dir, "phase"));
  model->eval();
  return model;
}

}  // namespace lmm::training
