// lmm-train: train the autoencoder, stepper or projector of learned motion matching, DirectionNet or
// the periodic autoencoder of phase features.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <map>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/pipeline/bvh.hpp"
#include "lmm/pipeline/config.hpp"
#include "lmm/pipeline/report.hpp"
#include "lmm/training/direction.hpp"
#include "lmm/training/export.hpp"
#include "lmm/training/phase.hpp"
#include "lmm/training/trainer.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::training;

namespace {

std::atomic<bool> g_stop{false};

// SIGINT / SIGTERM: finish the current step, write a checkpoint and exit normally.
void request_stop(int) { g_stop = true; }

JsonObject report_json(const std::string& model, const TrainingConfig& config, const TrainReport& r) {
  JsonObject json;
  json.text("model", model).text("preset", config.name).number("steps", double(r.steps)).boolean("finished", r.finished);
  for (const auto& [name, value] : r.metrics) json.number(name, value);
  std::vector<JsonObject> losses;
  for (const auto& [name, last] : r.last_losses) {
    losses.push_back(JsonObject().text("term", name).number("first_epoch", r.first_losses.at(name)).number("last_epoch", last));
  }
  return json.objects("losses", losses);
}

int run(int argc, char** argv) {
  cxxopts::Options options("lmm-train",
                           "Train a learned motion matching model (Kleanthous & Martini 2023) or DirectionNet (Lee, Kwon & "
                           "Lee 2023) or the periodic autoencoder of phase features (Starke, Mason & Komura 2022): lmm-train "
                           "MODEL --db X.mmdb --config PRESET --out DIR\nMODEL: autoencoder | stepper | projector | "
                           "direction | phase. PRESET: a name in "
                           "configs/training (tiny, quick, standard, paper, ffn-...) or a path to a TOML file "
                           "(a value containing '/' or ending in .toml).");
  options.add_options()
      ("model", "autoencoder, stepper, projector, direction or phase", cxxopts::value<std::string>())
      ("db", "motion database (*.mmdb)", cxxopts::value<std::string>())
      ("config", "preset name, or a TOML file given as a path (with '/' or .toml)", cxxopts::value<std::string>()->default_value("tiny"))
      ("out", "output folder (checkpoints)", cxxopts::value<std::string>())
      ("resume", "continue from the checkpoint in --out")
      ("stop-after", "stop after this many steps of this run (writes a checkpoint)", cxxopts::value<int64_t>()->default_value("-1"))
      ("max-minutes", "also stop (with a checkpoint) after this much wall time", cxxopts::value<double>()->default_value("0"))
      ("threads", "LibTorch threads (overrides the preset)", cxxopts::value<int>()->default_value("0"))
      ("json", "write the final metrics as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  options.parse_positional({"model"});
  options.positional_help("MODEL");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (!args.count("model") || !args.count("db") || !args.count("out")) {
    spdlog::error("lmm-train: need MODEL, --db and --out (see --help)");
    return 2;
  }
  const std::string model = args["model"].as<std::string>();
  using Trainer = TrainReport (*)(const TrainingConfig&, const Database&, const TrainOptions&);
  const std::map<std::string, Trainer> trainers{
      {"autoencoder", train_autoencoder}, {"stepper", train_stepper}, {"projector", train_projector},
      {"direction", train_direction}, {"phase", train_phase}};
  const auto trainer = trainers.find(model);
  if (trainer == trainers.end()) {  // before anything is read or written
    spdlog::error("lmm-train: unknown model '{}' (autoencoder, stepper, projector, direction, phase)", model);
    return 2;
  }
  TrainingConfig config = load_training_config(args["config"].as<std::string>(), default_config_dir());
  if (args["threads"].as<int>() > 0) config.threads = args["threads"].as<int>();
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_file(args["db"].as<std::string>(), error);
  if (database == nullptr) throw InputError(error);
  const Database& db = *database;
  TrainOptions o;
  o.out_dir = args["out"].as<std::string>();
  write_run_manifest(o.out_dir, config, args["db"].as<std::string>());  // for lmm-export
  o.resume = args.count("resume") > 0;
  o.stop_after = args["stop-after"].as<int64_t>();
  o.max_minutes = args["max-minutes"].as<double>();
  o.stop_requested = &g_stop;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  o.log = [](const std::string& line) { spdlog::info("{}", line); };
  const TrainReport report = trainer->second(config, db, o);
  if (!report.finished) {
    spdlog::warn("stopped at step {}; continue with --resume", report.steps);
  }
  for (const auto& [name, value] : report.metrics) spdlog::info("{} = {:.4f}", name, value);
  if (args.count("json")) write_json(args["json"].as<std::string>(), report_json(model, config, report));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-train", [&] { return run(argc, argv); });
}
