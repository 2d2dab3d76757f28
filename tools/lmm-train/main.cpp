// lmm-train: train the autoencoder, stepper or projector of learned motion matching, DirectionNet or
// the periodic autoencoder of phase features.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/config.hpp"
#include "lmm/training/direction.hpp"
#include "lmm/training/export.hpp"
#include "lmm/training/phase.hpp"
#include "lmm/training/shared_data.hpp"
#include "lmm/training/tag_targets.hpp"
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
      ("freeze-encoder", "autoencoder with --resume: keep the checkpoint's encoder and train the decoder alone, "
       "so that the stepper and projector can train on its latents meanwhile")
      ("stop-after", "stop after this many steps of this run (writes a checkpoint)", cxxopts::value<int64_t>()->default_value("-1"))
      ("max-minutes", "also stop (with a checkpoint) after this much wall time", cxxopts::value<double>()->default_value("0"))
      ("threads", "LibTorch threads (overrides the preset)", cxxopts::value<int>()->default_value("0"))
      ("json", "write the final metrics as JSON", cxxopts::value<std::string>())
      ("world-size", "data-parallel training: number of ranks (processes) in all (default: $WORLD_SIZE, else 1)",
       cxxopts::value<std::string>())
      ("rank", "data-parallel training: this process's rank, 0..N-1; rank 0 writes the checkpoints (default: $RANK)",
       cxxopts::value<std::string>())
      ("master", "data-parallel training: HOST:PORT where rank 0 serves the ranks' meeting point (default: "
       "$MASTER_ADDR:$MASTER_PORT, else 127.0.0.1:29500)", cxxopts::value<std::string>())
      ("peer-timeout", "data-parallel training: seconds a rank waits for the others before it stops with an error",
       cxxopts::value<double>()->default_value("30"))
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
  if (args.count("freeze-encoder") && (model != "autoencoder" || !args.count("resume"))) {
    spdlog::error("lmm-train: --freeze-encoder continues a trained autoencoder: give it with 'autoencoder' and --resume");
    return 2;
  }
  auto text = [&](const char* option) { return args.count(option) ? args[option].as<std::string>() : std::string(); };
  DistributedSettings distributed;
  try {
    distributed = resolve_distributed({text("world-size"), text("rank"), text("master")}, std::getenv);
  } catch (const std::invalid_argument& e) {
    spdlog::error("lmm-train: {}", e.what());
    return 2;
  }
  distributed.timeout_seconds = args["peer-timeout"].as<double>();
  const std::set<std::string> data_parallel{"autoencoder", "stepper", "projector"};
  if (distributed.world_size > 1 && !data_parallel.count(model)) {
    spdlog::error("lmm-train: {} trains in one process; data-parallel training (--world-size > 1) is for the "
                  "autoencoder, stepper and projector",
                  model);
    return 2;
  }
  if (!(distributed.timeout_seconds >= 1.0)) {
    spdlog::error("lmm-train: --peer-timeout {}: must be at least 1 second", distributed.timeout_seconds);
    return 2;
  }
  const bool leader = distributed.rank == 0;
  if (!leader) spdlog::set_level(spdlog::level::err);  // the other ranks report errors only
  TrainingConfig config = load_training_config(args["config"].as<std::string>(), default_config_dir());
  if (args["threads"].as<int>() > 0) config.threads = args["threads"].as<int>();
  std::string error;
  const std::shared_ptr<const Database> database = map_database(args["db"].as<std::string>(), error);
  if (database == nullptr) throw InputError(error);
  const Database& db = *database;
  check_preset_tags(config, db);  // before anything is trained or written
  TrainOptions o;
  o.out_dir = args["out"].as<std::string>();
  if (distributed.world_size > 1) {
    o.communicator = std::make_shared<Communicator>(distributed);
    spdlog::info("{} ranks met at {}:{}; this is rank 0", distributed.world_size, distributed.master_host,
                 distributed.master_port);
  }
  if (leader) write_run_manifest(o.out_dir, config, args["db"].as<std::string>());  // for lmm-export
  o.resume = args.count("resume") > 0;
  o.freeze_encoder = args.count("freeze-encoder") > 0;
  o.stop_after = args["stop-after"].as<int64_t>();
  o.max_minutes = args["max-minutes"].as<double>();
  o.stop_requested = &g_stop;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  if (leader) o.log = [](const std::string& line) { spdlog::info("{}", line); };
  const TrainReport report = trainer->second(config, db, o);
  if (!report.finished) {
    spdlog::warn("stopped at step {}; continue with --resume", report.steps);
  }
  for (const auto& [name, value] : report.metrics) spdlog::info("{} = {:.4f}", name, value);
  if (leader && args.count("json")) write_json(args["json"].as<std::string>(), report_json(model, config, report));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-train", [&] { return run(argc, argv); });
}
