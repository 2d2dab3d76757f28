// Periodic autoencoder (Starke, Mason & Komura 2022, DeepPhase): the spectral parameters of exact
// sinusoids, the windows' clip padding, training on known sums of sinusoids, saving and loading, and
// the [phase] preset table. The real-data check (phase advance through steady walks) takes minutes of
// training: scripts/phase-walk-check.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "lmm/import/config.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/export.hpp"
#include "lmm/training/phase.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::training;

namespace {

constexpr double kTwoPi = 6.283185307179586;

// Phase differences (cycles) wrapped into [-0.5, 0.5).
torch::Tensor wrapped(const torch::Tensor& cycles) { return torch::remainder(cycles + 0.5, 1.0) - 0.5; }

// Wrapped phase steps between consecutive entries of phases [M].
torch::Tensor phase_steps(const torch::Tensor& phase) {
  return wrapped(phase.narrow(0, 1, phase.size(0) - 1) - phase.narrow(0, 0, phase.size(0) - 1));
}

// The error message of load_training_config on a preset with `phase_table` as its [phase] table.
std::string phase_table_error(const std::string& phase_table) {
  const std::string path = test::write_text(test::temp_folder("preset") + "/p.toml", "name = \"p\"\n[phase]\n" + phase_table);
  try {
    load_training_config(path, "");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PhaseSpectrum, ExactSinusoidGivesItsFrequencyAmplitudeAndOffset) {
  // k whole cycles over T samples: all the positive-frequency power is in bin k, at k / (T dt) Hz.
  const int64_t samples = 61;
  const double dt = 1.0 / 30.0;
  const std::vector<double> cycles = {1, 3, 7}, amplitudes = {0.5, 2.0, 1.25}, offsets = {-0.3, 0.0, 4.0};
  const torch::Tensor t = torch::arange(samples, torch::kFloat64);
  std::vector<torch::Tensor> curves;
  for (size_t c = 0; c < cycles.size(); ++c) {
    curves.push_back(amplitudes[c] * torch::sin(kTwoPi * cycles[c] * t / double(samples) + 0.7 * double(c)) + offsets[c]);
  }
  const Spectrum s = spectral_parameters(torch::stack(curves).unsqueeze(0), dt);
  for (size_t c = 0; c < cycles.size(); ++c) {
    SCOPED_TRACE(c);
    EXPECT_NEAR(s.frequency[0][int64_t(c)].item<double>(), cycles[c] / (double(samples) * dt), 1e-9);
    EXPECT_NEAR(s.amplitude[0][int64_t(c)].item<double>(), amplitudes[c], 1e-9);
    EXPECT_NEAR(s.offset[0][int64_t(c)].item<double>(), offsets[c], 1e-9);
  }
}

TEST(PhaseData, WindowsRepeatTheClipsEdgeFrames) {
  // Two clips of 10 frames; signal = frame index. Windows of 5 samples every 2 frames.
  const torch::Tensor signal = torch::arange(20, torch::kFloat32).unsqueeze(1);
  const PhaseData d = phase_data(signal, {{0, 10, false, "a"}, {10, 20, false, "b"}}, 30.0);
  PhaseWindow w;
  w.samples = 5, w.stride = 2, w.sample_seconds = 2.0 / 30.0;
  const torch::Tensor windows = phase_windows(d, w, torch::tensor({1, 9, 12}, torch::kInt64));
  const std::vector<std::vector<float>> expected = {{0, 0, 1, 3, 5}, {5, 7, 9, 9, 9}, {10, 10, 12, 14, 16}};
  for (int b = 0; b < 3; ++b) {
    for (int i = 0; i < 5; ++i) EXPECT_EQ(windows[b][0][i].item<float>(), expected[size_t(b)][size_t(i)]) << b << " " << i;
  }
  EXPECT_THROW(phase_data(signal, {{0, 10, false, "a"}, {11, 20, false, "b"}}, 30.0), std::runtime_error);
}

TEST(PhaseTraining, RecoversTheDominantFrequencyAndPhaseAdvanceOfKnownSinusoids) {
  // Six gait-like signals at 30 fps, one minute: each a 1.25 Hz sinusoid with its own amplitude and
  // phase, four with a weaker 2.5 Hz harmonic added; a PAE with 2 channels and windows of 2 s (61 samples).
  const double fps = 30.0, fundamental = 1.25, harmonic = 2.5;
  const std::vector<double> amplitude = {1.0, 0.6, 0.8, 0.7, 1.2, 0.5}, phase = {0.0, 0.3, 0.55, 0.1, 0.4, 0.8};
  const std::vector<double> harmonic_amplitude = {0.3, 0.0, 0.4, 0.2, 0.0, 0.5};
  const int64_t frames = 1800;
  const torch::Tensor t = torch::arange(frames, torch::kFloat64) / fps;
  std::vector<torch::Tensor> signals;
  for (size_t i = 0; i < amplitude.size(); ++i) {
    signals.push_back(amplitude[i] * torch::sin(kTwoPi * (fundamental * t + phase[i])) +
                      harmonic_amplitude[i] * torch::sin(kTwoPi * (harmonic * t + 0.37 * double(i))));
  }
  const PhaseData data = phase_data(torch::stack(signals, 1), {{0, int(frames), false, "sines"}}, fps);
  const std::string dir = test::temp_folder("phase");
  const TrainingConfig c = load_training_config(
      test::write_text(dir + "/sines.toml", "name = \"sines\"\n[train]\nthreads = 2\n[phase]\nchannels = 2\nhidden = 16\n"
                                            "kernel = 31\nsteps = 600\nbatch = 32\nlearning_rate = 0.003\n"),
      "");
  torch::manual_seed(1);
  PhaseModel model(data.velocities.size(1), c.phase, phase_window(c.phase, fps));
  TrainOptions o;
  o.out_dir = dir;
  const TrainReport report = fit_phase(c, data, model, o);
  ASSERT_TRUE(report.finished);
  const double error = report.metrics.at("phase_reconstruction_error");
  std::printf("[ phase ] reconstruction error %.4f of the standardised signals' variance, %.0f windows/s\n", error,
              report.metrics.at("samples_per_s"));
  EXPECT_LT(error, 0.05) << "more than 5% of the signals' variance is not reconstructed";

  // Frames whose whole window lies inside the clip (no edge padding).
  const int64_t half = (model->window.samples / 2) * model->window.stride;
  const torch::Tensor inner = torch::arange(half, frames - half, torch::kInt64);
  const PhaseParameters p = frame_phases(model, data, inner);
  // The spectrum resolves frequencies to a bin of 1 / window (0.49 Hz): half a bin is the tolerance,
  // and over one frame the phase then advances by f / fps within half a bin / fps.
  const double bin = 1.0 / (double(model->window.samples) * model->window.sample_seconds);
  const torch::Tensor median = std::get<0>(p.frequency.median(0));
  const int64_t ch = (median - fundamental).abs().argmin().item<int64_t>();
  const torch::Tensor steps = phase_steps(p.phase.select(1, ch));
  const double backward = steps.lt(0.0).to(torch::kFloat64).mean().item<double>();
  std::printf("[ phase ] channel %lld: %.3f Hz, %.4f cycles per frame (expected %.4f), %.1f%% backward\n",
              static_cast<long long>(ch), median[ch].item<double>(), steps.mean().item<double>(), fundamental / fps,
              100.0 * backward);
  EXPECT_NEAR(median[ch].item<double>(), fundamental, bin / 2.0);
  EXPECT_NEAR(steps.mean().item<double>(), fundamental / fps, bin / 2.0 / fps);
  EXPECT_LE(backward, 0.02) << "phases must advance (issue 17: at most 2% backward)";

  // The embedding: per channel amplitude x (sin, cos) of the phase.
  const torch::Tensor embedding = phase_embedding(p);
  ASSERT_EQ(embedding.sizes(), (std::vector<int64_t>{inner.size(0), 4}));
  EXPECT_TRUE(torch::allclose(embedding.select(1, 2).hypot(embedding.select(1, 3)), p.amplitude.select(1, 1), 1e-4, 1e-5));
  const torch::Tensor angle = torch::atan2(embedding.select(1, 0), embedding.select(1, 1)) / kTwoPi;
  EXPECT_LT(wrapped(angle - p.phase.select(1, 0)).abs().max().item<double>(), 1e-4);

  // Saved and loaded: the same phases.
  write_run_manifest(dir, c, dir + "/sines.mmdb");
  PhaseModel loaded = load_phase_model(dir, data);
  const PhaseParameters q = frame_phases(loaded, data, inner);
  EXPECT_TRUE(torch::equal(q.phase, p.phase));
  EXPECT_TRUE(torch::equal(q.amplitude, p.amplitude));
  const PhaseData more_signals = phase_data(torch::zeros({frames, 7}), {{0, int(frames), false, "sines"}}, fps);
  try {
    load_phase_model(dir, more_signals);
    FAIL() << "a model of 6 signals loaded for 7";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("phase.pt"), std::string::npos) << e.what();
  }
}

TEST(PhaseTraining, ResumedRunEqualsUninterruptedRun) {
  // 40 steps in one run vs 15 steps, a checkpoint and --resume: the same weights.
  const double fps = 30.0;
  const torch::Tensor t = torch::arange(600, torch::kFloat64) / fps;
  const torch::Tensor signals = torch::stack({torch::sin(kTwoPi * 1.25 * t), torch::cos(kTwoPi * 2.5 * t)}, 1);
  const PhaseData data = phase_data(signals, {{0, 600, false, "sines"}}, fps);
  const std::string dir = test::temp_folder("phase-resume");
  const TrainingConfig c = load_training_config(
      test::write_text(dir + "/p.toml", "name = \"p\"\n[train]\nthreads = 2\n[phase]\nchannels = 2\nhidden = 8\n"
                                        "kernel = 15\nsteps = 40\nbatch = 16\nlearning_rate = 0.003\n"),
      "");
  // The final weights from a fixed initialisation; with stop_after > 0 the run stops there and a
  // differently initialised model resumes it from the checkpoint.
  const auto trained = [&](const std::string& out, int stop_after) {
    torch::manual_seed(3);
    PhaseModel model(signals.size(1), c.phase, phase_window(c.phase, fps));
    TrainOptions o;
    o.out_dir = out;
    o.stop_after = stop_after;
    TrainReport report = fit_phase(c, data, model, o);
    if (stop_after > 0) {
      EXPECT_FALSE(report.finished);
      o.stop_after = -1;
      o.resume = true;
      torch::manual_seed(99);  // a different initialisation: the checkpoint must replace it
      model = PhaseModel(signals.size(1), c.phase, phase_window(c.phase, fps));
      report = fit_phase(c, data, model, o);
    }
    EXPECT_TRUE(report.finished);
    EXPECT_EQ(report.steps, 40);
    return model->parameters();
  };
  const std::vector<torch::Tensor> whole = trained(dir + "/whole", -1), resumed = trained(dir + "/part", 15);
  ASSERT_EQ(whole.size(), resumed.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_LE((whole[i] - resumed[i]).abs().max().item<double>(), 1e-6) << "parameter " << i;
  }
}

TEST(PhaseConfig, BadValuesAreRefusedNamingTheKey) {
  const PhaseConfig defaults;
  EXPECT_EQ(defaults.channels, 5);
  EXPECT_EQ(phase_window(defaults, 30.0).samples, 61);  // DeepPhase's 2 s at 30 Hz
  EXPECT_EQ(phase_window(defaults, 60.0).stride, 2);
  EXPECT_EQ(phase_table_error("channels = 5\nwindow_seconds = 1.5\n"), "");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"channels = 0\n", "'channels'"},          {"channels = 65\n", "'channels'"},
      {"window_seconds = 0.1\n", "'window_seconds'"}, {"step_hz = 0\n", "'step_hz'"},
      {"hidden = 0\n", "'hidden'"},              {"kernel = 4\n", "'kernel'"},
      {"kernel = 257\n", "'kernel'"},            {"steps = 0\n", "'steps'"},
      {"batch = 0\n", "'batch'"},                {"learning_rate = -1\n", "'learning_rate'"},
      {"channels = \"five\"\n", "'channels'"},   {"chanels = 5\n", "unknown key 'chanels'"}};
  for (const auto& [table, key] : bad) {
    const std::string error = phase_table_error(table);
    EXPECT_NE(error.find(key), std::string::npos) << table << " gave: " << error;
    EXPECT_NE(error.find("[phase]"), std::string::npos) << error;
  }
  for (const char* preset : {"tiny", "quick", "standard", "paper"}) {
    SCOPED_TRACE(preset);
    const TrainingConfig c = load_training_config(preset, pipeline::default_config_dir());
    EXPECT_EQ(c.phase.channels, 5) << "Kleanthous & Martini 2023 Table 10: a 10-dim phase embedding";
  }
}
