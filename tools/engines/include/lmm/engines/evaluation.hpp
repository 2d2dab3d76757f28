// lmm-eval's engine: a model bundle evaluated by the runtime against the ground truth of a
// motion database (Kleanthous & Martini 2023 Sec. 6.3): decoder reconstruction, stepper rollouts, projector
// retrieval, and the learned controller against the database controller on the same input.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/asset/model.hpp"

namespace lmm::pipeline {

// What to measure and how much.
struct EvalOptions {
  int rollout_starts = 1000;    // seeded random stepper starts
  float start_noise = 0.15f;    // noisy starts: x per-dimension state std (Kleanthous & Martini 2023 Sec. 5.9, lambda_scale)
  int projector_queries = 1000; // noisy queries (Kleanthous & Martini 2023 Sec. 5.6: features + U(0,1) N(0,1))
  int controller_scripts = 4;   // seeded random input scripts run on both controllers
  float controller_seconds = 30.0f;
  std::vector<std::string> input_scripts;  // CSV input scripts to run instead (lmm-sim --input format)
  bool random_strafe = false;   // random scripts with strafe requests (lmm-sim --random-strafe)
  std::string controller_config;  // --controller file ("" = speeds measured from the database)
  uint32_t seed = 12345;
  std::function<void(const std::string&)> log;  // progress lines
};

// Stepper error (cm) against the horizon.
struct RolloutCurve {
  std::vector<double> seconds, clean_cm, noisy_cm;
};

// Metrics in report order (JSON keys) and the rollout curve.
struct Evaluation {
  std::vector<std::pair<std::string, double>> metrics;
  RolloutCurve curve;

  // The metric called `key`; NaN when absent.
  double value(const std::string& key) const;
};

// Evaluates `model` on `db` (both not null). Throws InputError when the bundle does not match
// the database (naming the difference) or was exported without the encoder.
Evaluation evaluate_model(const std::shared_ptr<const Model>& model, const std::shared_ptr<const Database>& db,
                          const EvalOptions& options);

// A readable table of the metrics, with a baseline column when `baseline` is not null.
std::string format_evaluation(const Evaluation& model, const Evaluation* baseline);

// Writes an SVG plot of stepper error against horizon (clean and noisy starts) for the model
// and, when given, the baseline.
void write_rollout_svg(const std::string& path, const Evaluation& model, const std::string& model_name,
                       const Evaluation* baseline, const std::string& baseline_name);

// Messages for every threshold `evaluation` crosses (a missing or NaN metric fails).
std::vector<std::string> threshold_failures(const Evaluation& evaluation, const std::vector<Threshold>& thresholds);

}  // namespace lmm::pipeline
