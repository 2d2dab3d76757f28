#include "lmm/training/direction.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "lmm/blob_writer.hpp"
#include "lmm/core/math.hpp"
#include "lmm/training/export.hpp"
#include "training_loop.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;

constexpr double kSidewaysDegrees = 45.0;  // a step whose path tangent is this far from the facing is sideways
constexpr double kMovingSpeed = 0.5;       // m/s: slower steps have no meaningful tangent
constexpr int64_t kMetricWindows = 20000;  // held-out windows evaluated at most
constexpr int64_t kStatisticWindows = 4096;

// Rows of [B, 2] (or [B, T, 2]) scaled to unit length.
torch::Tensor unit(const torch::Tensor& v) { return v / v.norm(2, -1, true).clamp_min(1e-6); }

// Angles in degrees between unit vectors a and b [..., 2].
torch::Tensor degrees_between(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::acos((a * b).sum(-1).clamp(-1.0, 1.0)) * (180.0 / M_PI);
}

// `v` [B, T, 2] rotated from the world into the frame whose +Z is `forward` [B, 2].
torch::Tensor into_frame(const torch::Tensor& v, const torch::Tensor& forward) {
  const torch::Tensor s = forward.select(1, 0).unsqueeze(1), c = forward.select(1, 1).unsqueeze(1);
  const torch::Tensor x = v.select(2, 0), z = v.select(2, 1);
  return torch::stack({x * c - z * s, x * s + z * c}, 2);
}

bool held_out(const std::string& clip, const std::vector<std::string>& holdout) {
  return std::any_of(holdout.begin(), holdout.end(), [&](const std::string& h) { return clip.find(h) != std::string::npos; });
}

// Per frame the root's ground position and unit facing (x, z).
void root_tracks(const Database& db, torch::Tensor& root, torch::Tensor& facing) {
  const int64_t n = db.frame_count();
  root = torch::empty({n, 2});
  facing = torch::empty({n, 2});
  auto r = root.accessor<float, 2>();
  auto f = facing.accessor<float, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const Vec3 p = db.positions(int(i))[0];
    Vec3 forward = rotate(db.rotations(int(i))[0], Vec3{0.0f, 0.0f, 1.0f});
    forward.y = 0.0f;
    const float length = std::sqrt(forward.x * forward.x + forward.z * forward.z);
    r[i][0] = p.x, r[i][1] = p.z;
    f[i][0] = length > 1e-6f ? forward.x / length : 0.0f;
    f[i][1] = length > 1e-6f ? forward.z / length : 1.0f;
  }
}

// Mean and std of the four inputs (point, previous facing) over up to kStatisticWindows training windows.
void set_input_statistics(DirectionModel& model, const DirectionData& d) {
  const int64_t count = std::min<int64_t>(kStatisticWindows, d.train_present.size(0));
  const torch::Tensor pick = torch::randperm(d.train_present.size(0)).narrow(0, 0, count);
  torch::Tensor points, facings;
  direction_windows(d, d.train_present.index_select(0, pick), d.train_start.index_select(0, pick), points, facings);
  const torch::Tensor inputs = torch::cat({points, facings}, 2).reshape({-1, 4});
  torch::NoGradGuard no_grad;
  model->input_mean.copy_(inputs.mean(0));
  model->input_std.copy_(inputs.std(0).clamp_min(1e-3));
}

// Sums of one kind of step (sideways or forward) for the metrics.
struct ErrorSums {
  double net = 0.0, tangent = 0.0, hold = 0.0;
  int64_t count = 0;
};

}  // namespace

DirectionModelImpl::DirectionModelImpl(int64_t hidden, int64_t window, int64_t present, double seconds) {
  cell = register_module("cell", torch::nn::GRUCell(torch::nn::GRUCellOptions(4, hidden)));
  output = register_module("output", torch::nn::Linear(hidden, 2));
  input_mean = register_buffer("input_mean", torch::zeros({4}));
  input_std = register_buffer("input_std", torch::ones({4}));
  shape = register_buffer("shape", torch::tensor({window, present}, torch::kInt64));
  step_seconds = register_buffer("step_seconds", torch::tensor({seconds}, torch::kFloat64));
}

torch::Tensor DirectionModelImpl::forward(const torch::Tensor& points, const torch::Tensor& facings) {
  const int64_t steps = window(), now = present();
  torch::Tensor h = torch::zeros({points.size(0), cell->options.hidden_size()});
  std::vector<torch::Tensor> out;
  for (int64_t t = 0; t < steps; ++t) {
    const torch::Tensor previous = t == 0 ? facings.select(1, 0)
                                          : (t <= now + 1 ? facings.select(1, t - 1) : unit(out.back()));
    const torch::Tensor x = (torch::cat({points.select(1, t), previous}, 1) - input_mean) / input_std;
    h = cell->forward(x, h);
    out.push_back(output->forward(h));
  }
  return torch::stack(out, 1);
}

DirectionData make_direction_data(const Database& db, const DirectionConfig& c) {
  DirectionData d;
  root_tracks(db, d.root, d.facing);
  d.stride = std::max<int64_t>(1, std::lround(db.fps() / c.step_hz));
  d.window = std::lround(c.window_seconds * c.step_hz);
  const int64_t future = std::lround(c.future_seconds * c.step_hz);
  d.present = d.window - 1 - future;
  d.step_seconds = double(d.stride) / db.fps();
  for (int offset : db.schema().trajectory_offsets) {
    if (offset > 0) d.query_steps.push_back(std::clamp<int64_t>(std::lround(double(offset) / double(d.stride)), 1, future));
  }
  std::vector<int64_t> train_present, train_start, held_present, held_start;
  for (const DatabaseRange& r : db.ranges()) {
    const bool held = held_out(r.name, c.holdout);
    for (int64_t f = r.start; f + future * d.stride < r.stop; ++f) {
      (held ? held_present : train_present).push_back(f);
      (held ? held_start : train_start).push_back(r.start);
    }
  }
  if (train_present.empty()) {
    throw std::runtime_error("DirectionNet: no training clip is longer than " + std::to_string(c.future_seconds) +
                             " s (the predicted future) outside the held-out clips");
  }
  d.train_present = torch::tensor(train_present, torch::kInt64);
  d.train_start = torch::tensor(train_start, torch::kInt64);
  d.held_present = torch::tensor(held_present, torch::kInt64);
  d.held_start = torch::tensor(held_start, torch::kInt64);
  return d;
}

void direction_windows(const DirectionData& d, const torch::Tensor& present, const torch::Tensor& start,
                       torch::Tensor& points, torch::Tensor& facings) {
  const torch::Tensor steps = torch::arange(d.window, torch::kInt64) - d.present;
  // Frames before the clip's start repeat its first frame (Lee, Kwon & Lee 2023, Sec. VIII: padding).
  const torch::Tensor frames = torch::max(present.unsqueeze(1) + steps.unsqueeze(0) * d.stride, start.unsqueeze(1));
  const int64_t b = present.size(0);
  const torch::Tensor flat = frames.reshape(-1);
  const torch::Tensor forward = d.facing.index_select(0, present);
  const torch::Tensor origin = d.root.index_select(0, present).unsqueeze(1);
  points = into_frame(d.root.index_select(0, flat).reshape({b, d.window, 2}) - origin, forward);
  facings = into_frame(d.facing.index_select(0, flat).reshape({b, d.window, 2}), forward);
}

std::map<std::string, double> direction_metrics(DirectionModel& model, const DirectionData& d) {
  torch::NoGradGuard no_grad;
  model->eval();
  const int64_t all = d.held_present.size(0), every = std::max<int64_t>(1, all / kMetricWindows);
  const torch::Tensor pick = torch::arange(0, all, every, torch::kInt64);
  ErrorSums sideways, forward;
  for (int64_t s = 0; s < pick.size(0); s += 2048) {
    const torch::Tensor part = pick.narrow(0, s, std::min<int64_t>(2048, pick.size(0) - s));
    torch::Tensor points, facings;
    direction_windows(d, d.held_present.index_select(0, part), d.held_start.index_select(0, part), points, facings);
    const torch::Tensor out = model->forward(points, facings);
    for (int64_t k : d.query_steps) {
      const int64_t t = d.present + k, next = std::min(t + 1, d.window - 1), before = next - 1;
      const torch::Tensor step = points.select(1, next) - points.select(1, before);  // Eq. 2's tangent
      const torch::Tensor moving = step.norm(2, -1) / d.step_seconds > kMovingSpeed;
      const torch::Tensor recorded = facings.select(1, t), tangent = unit(step);
      const torch::Tensor net_error = degrees_between(unit(out.select(1, t)), recorded);
      const torch::Tensor tangent_error = degrees_between(tangent, recorded);
      const torch::Tensor hold_error = degrees_between(facings.select(1, d.present), recorded);
      const torch::Tensor is_sideways = moving & (tangent_error > kSidewaysDegrees);
      const torch::Tensor is_forward = moving & (tangent_error <= kSidewaysDegrees);
      for (auto& [sums, mask] : {std::pair<ErrorSums*, torch::Tensor>{&sideways, is_sideways}, {&forward, is_forward}}) {
        sums->net += net_error.masked_select(mask).sum().item<double>();
        sums->tangent += tangent_error.masked_select(mask).sum().item<double>();
        sums->hold += hold_error.masked_select(mask).sum().item<double>();
        sums->count += mask.sum().item<int64_t>();
      }
    }
  }
  model->train();
  std::map<std::string, double> m;
  for (const auto& [name, sums] : {std::pair<const char*, ErrorSums*>{"sideways", &sideways}, {"forward", &forward}}) {
    const double n = double(sums->count);
    m[std::string("direction_error_deg_") + name + "_net"] = n > 0 ? sums->net / n : NAN;
    m[std::string("direction_error_deg_") + name + "_tangent"] = n > 0 ? sums->tangent / n : NAN;
    m[std::string("direction_error_deg_") + name + "_hold"] = n > 0 ? sums->hold / n : NAN;
    m[std::string("direction_samples_") + name] = n;
  }
  return m;
}

TrainReport train_direction(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const DirectionConfig& dc = preset.direction;
  TrainingConfig c = with_schedule(preset, dc.steps, dc.batch, dc.learning_rate);
  torch::manual_seed(c.seed);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  const DirectionData d = make_direction_data(db, dc);
  if (o.log) {
    o.log("direction: " + std::to_string(d.train_present.size(0)) + " training windows, " +
          std::to_string(d.held_present.size(0)) + " held out; " + std::to_string(d.window) + " steps of " +
          std::to_string(d.step_seconds) + " s, present step " + std::to_string(d.present));
    if (d.held_present.size(0) == 0) {
      o.log("direction: no held-out window, so no held-out metrics (hold out clips longer than " +
            std::to_string(dc.future_seconds) + " s with [direction] holdout)");
    }
  }
  DirectionModel model(dc.hidden, d.window, d.present, d.step_seconds);
  set_input_statistics(model, d);
  LoopSpec spec;
  spec.model = "direction";
  spec.net = model.ptr().get();
  spec.samples_per_step = c.batch;
  spec.adam = true;  // Lee, Kwon & Lee 2023, Sec. VIII: L1 loss, Adam
  spec.step = [&]() -> Terms {
    const torch::Tensor pick = torch::randint(d.train_present.size(0), {c.batch}, torch::kInt64);
    torch::Tensor points, facings;
    direction_windows(d, d.train_present.index_select(0, pick), d.train_start.index_select(0, pick), points, facings);
    const torch::Tensor error = (model->forward(points, facings) - facings).abs();
    const torch::Tensor future = error.narrow(1, d.present + 1, d.window - d.present - 1).mean();
    return {{"total", error.mean()}, {"future", future}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (d.held_present.size(0) > 0) {
    for (const auto& [name, value] : direction_metrics(model, d)) report.metrics[name] = value;
  }
  return report;
}

DirectionValues direction_values(DirectionModel& model) {
  torch::NoGradGuard no_grad;
  DirectionValues v;
  v.hidden = int(model->cell->options.hidden_size());
  v.window = int(model->window());
  v.present = int(model->present());
  v.step_seconds = float(model->step_seconds[0].item<double>());
  v.input_mean = float_values(model->input_mean);
  v.input_std = float_values(model->input_std);
  v.input_weight = float_values(model->cell->weight_ih.t());
  v.input_bias = float_values(model->cell->bias_ih);
  v.hidden_weight = float_values(model->cell->weight_hh.t());
  v.hidden_bias = float_values(model->cell->bias_hh);
  v.output_weight = float_values(model->output->weight.t());
  v.output_bias = float_values(model->output->bias);
  return v;
}

void export_direction(const std::string& in_dir, const std::string& out_path) {
  const RunManifest manifest = read_run_manifest(in_dir);
  const TrainingConfig config = load_training_config(manifest.preset, "");
  DirectionModel model(config.direction.hidden, 2, 0, 1.0);  // window and step come from the checkpoint
  load_checkpoint_module(*model, checkpoint_path(in_dir, "direction"));
  std::vector<uint8_t> bytes;
  std::string error;
  if (!build_direction_bundle(direction_values(model), bytes, error) ||
      !write_file_atomic(out_path, bytes.data(), bytes.size(), error) ||
      !file_holds(out_path, bytes.data(), bytes.size(), error)) {
    throw std::runtime_error(out_path + ": " + error);
  }
}

}  // namespace lmm::training
