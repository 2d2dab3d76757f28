// lmm-bench train (built with training): training samples/s per model of a preset, and the
// decoder's SMoE layer routed against dense.
#ifdef LMM_HAVE_FAISS
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/config.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/layers.hpp"
#include "lmm/training/trainer.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::bench;

// Training throughput of a preset: samples/s of each model over a short run, and the decoder's
// SMoE layer routed (grouped by expert) vs dense (every expert on every sample).
int bench_train(int argc, char** argv) {
  cxxopts::Options o("lmm-bench train", "Training samples/s per model for a preset, and SMoE grouped vs dense.");
  o.add_options()
      ("db", "database", cxxopts::value<std::string>())
      ("preset", "training preset", cxxopts::value<std::string>()->default_value("standard"))
      ("steps", "steps per model", cxxopts::value<int64_t>()->default_value("20"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "db", args, code)) return code;
  const std::shared_ptr<const Database> database = load_database(args["db"].as<std::string>());
  const Database& db = *database;
  const training::TrainingConfig config =
      training::load_training_config(args["preset"].as<std::string>(), default_config_dir());
  training::TrainOptions options;
  options.out_dir = (std::filesystem::temp_directory_path() / "lmm-bench-train").string();
  options.stop_after = args["steps"].as<int64_t>();
  JsonObject json;
  json.text("preset", config.name);
  std::printf("training throughput, preset '%s', %lld steps per model, %d threads\n", config.name.c_str(),
              static_cast<long long>(options.stop_after), config.threads);
  const std::pair<const char*, training::TrainReport (*)(const training::TrainingConfig&, const Database&,
                                                        const training::TrainOptions&)> models[] = {
      {"autoencoder", training::train_autoencoder},
      {"stepper", training::train_stepper},
      {"projector", training::train_projector}};
  for (const auto& [name, train] : models) {
    const double rate = train(config, db, options).metrics.at("samples_per_s");
    std::printf("  %-12s %10.0f samples/s%s\n", name, rate,
                std::string(name) == "stepper" ? " (a sample is one rollout step)" : "");
    json.number(std::string(name) + "_samples_per_s", rate);
  }
  std::filesystem::remove_all(options.out_dir);
  if (config.decoder.experts > 0) {
    const int64_t in = config.latent + db.schema().dims;
    const int64_t out = config.decoder.expert_out > 0 ? config.decoder.expert_out : 32;
    const training::SmoeThroughput t = training::measure_smoe_throughput(in, config.decoder.experts,
                                                                         config.decoder.expert_hidden,
                                                                         out, config.batch, 5);
    std::printf("  decoder SMoE (%lld experts, batch %lld): grouped %.0f samples/s, dense %.0f samples/s (%.1fx)\n",
                static_cast<long long>(config.decoder.experts), static_cast<long long>(config.batch),
                t.grouped_samples_per_s, t.dense_samples_per_s, t.grouped_samples_per_s / t.dense_samples_per_s);
    json.number("smoe_grouped_samples_per_s", t.grouped_samples_per_s);
    json.number("smoe_dense_samples_per_s", t.dense_samples_per_s);
  }
  if (args.count("json")) write_json(args["json"].as<std::string>(), json);
  return 0;
}
#endif
