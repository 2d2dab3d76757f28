// lmm-eval: compare a model bundle, run by the runtime, with the ground truth of a motion database.
#include <cstdio>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/engines/evaluation.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

cxxopts::Options make_options() {
  cxxopts::Options o(
      "lmm-eval",
      "Evaluate a model bundle (exported with --with-encoder) against the database it was trained on:\n"
      "decoder reconstruction of every frame, stepper rollouts from seeded random starts (clean and noisy),\n"
      "projector retrieval vs the exact nearest neighbour, and the learned vs the database controller on\n"
      "the same seeded random input.\n"
      "  lmm-eval --db X.mmdb --model X.lmmw [--baseline Y.lmmw] [--json PATH] [--svg PATH] [--thresholds T.toml]");
  o.add_options()
      ("db", "motion database (*.mmdb) the model was trained on", cxxopts::value<std::string>())
      ("model", "model bundle (*.lmmw, with the encoder)", cxxopts::value<std::string>())
      ("baseline", "second bundle (e.g. the FFN baseline) evaluated the same way", cxxopts::value<std::string>())
      ("json", "write the model's metrics (and baseline_* keys) as JSON", cxxopts::value<std::string>())
      ("svg", "write stepper error vs horizon as an SVG plot", cxxopts::value<std::string>())
      ("thresholds", "TOML with [max] / [min] metric limits: exit 3 when the model crosses one",
       cxxopts::value<std::string>())
      ("starts", "stepper rollout starts", cxxopts::value<int>()->default_value("1000"))
      ("queries", "projector queries", cxxopts::value<int>()->default_value("1000"))
      ("scripts", "random input scripts for the controller comparison", cxxopts::value<int>()->default_value("4"))
      ("input", "input script (CSV, as lmm-sim --input) for the controller comparison instead of random ones; repeatable",
       cxxopts::value<std::vector<std::string>>())
      ("random-strafe", "random scripts with strafe requests (as lmm-sim --random-strafe)")
      ("seconds", "seconds per controller script", cxxopts::value<float>()->default_value("30"))
      ("seed", "random seed", cxxopts::value<uint32_t>()->default_value("12345"))
      ("controller", "controller config (TOML, docs/configs.md) for both controllers; speeds left out are "
       "measured from --db", cxxopts::value<std::string>()->default_value(""))
      ("h,help", "show this help");
  return o;
}

Evaluation evaluate(const std::string& path, const std::shared_ptr<const Database>& db, const EvalOptions& options) {
  std::string error;
  const std::shared_ptr<const Model> model = Model::load_file(path, error);
  if (model == nullptr) throw InputError(error);
  spdlog::info("evaluating {} (preset '{}')", path, model->preset());
  try {
    return evaluate_model(model, db, options);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

void write_metrics_json(const std::string& path, const Evaluation& model, const Evaluation* baseline) {
  JsonObject json;
  for (const auto& [key, value] : model.metrics) json.number(key, value);
  if (baseline) {
    for (const auto& [key, value] : baseline->metrics) json.number("baseline_" + key, value);
  }
  write_json(path, json);
}

int run(int argc, char** argv) {
  cxxopts::Options options = make_options();
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (!args.count("db") || !args.count("model")) {
    spdlog::error("lmm-eval: need --db FILE and --model FILE (see --help)");
    return 2;
  }
  EvalOptions o;
  o.rollout_starts = args["starts"].as<int>();
  o.projector_queries = args["queries"].as<int>();
  o.controller_scripts = args["scripts"].as<int>();
  o.controller_seconds = args["seconds"].as<float>();
  o.seed = args["seed"].as<uint32_t>();
  if (args.count("input")) o.input_scripts = args["input"].as<std::vector<std::string>>();
  o.random_strafe = args.count("random-strafe") > 0;
  o.controller_config = args["controller"].as<std::string>();
  if (o.rollout_starts < 1 || o.projector_queries < 1 || o.controller_scripts < 1 || !(o.controller_seconds >= 1.0f)) {
    throw InputError("--starts, --queries and --scripts must be >= 1 and --seconds >= 1");
  }
  o.log = [](const std::string& line) { spdlog::info("{}", line); };
  const std::vector<Threshold> thresholds =
      args.count("thresholds") ? load_thresholds(args["thresholds"].as<std::string>()) : std::vector<Threshold>{};
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(args["db"].as<std::string>(), error);
  if (db == nullptr) throw InputError(error);
  const std::string model_path = args["model"].as<std::string>();
  const Evaluation model = evaluate(model_path, db, o);
  Evaluation baseline;
  const bool has_baseline = args.count("baseline") > 0;
  if (has_baseline) baseline = evaluate(args["baseline"].as<std::string>(), db, o);
  std::fputs(format_evaluation(model, has_baseline ? &baseline : nullptr).c_str(), stdout);
  if (args.count("json")) write_metrics_json(args["json"].as<std::string>(), model, has_baseline ? &baseline : nullptr);
  if (args.count("svg")) {
    write_rollout_svg(args["svg"].as<std::string>(), model, model_path, has_baseline ? &baseline : nullptr,
                      has_baseline ? args["baseline"].as<std::string>() : "");
  }
  const std::vector<std::string> failures = threshold_failures(model, thresholds);
  for (const std::string& f : failures) spdlog::error("threshold crossed: {}", f);
  if (!thresholds.empty() && failures.empty()) spdlog::info("all {} thresholds met", thresholds.size());
  return failures.empty() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-eval", [&] { return run(argc, argv); });
}
