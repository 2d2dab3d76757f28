// lmm-bench: timing harness. Prints medians over repeated runs (the machines are noisy).
//   lmm-bench import DIR_OR_BVH... [--runs 3] [--json PATH]   whole-import wall time
//   lmm-bench features --db X.mmdb [--queries N] [--json PATH] runtime query feature cost
//   lmm-bench search --db X.mmdb [--queries N] [--json PATH]   accelerated vs brute force
//                                                              (vs FAISS flat when built with training)
//   lmm-bench nn (--model X.lmmw [--baseline Y.lmmw] | --preset NAME --db X.mmdb) [--json PATH]
//                                                              runtime network inference (bench_nn.cpp)
//   lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters ...] [--threads T] [--lod ...] [--json PATH]
//                                                              crowd vs one-by-one updates (bench_crowd.cpp)
//   lmm-bench direction --model X.lmdn --db X.mmdb [--json PATH] DirectionNet vs an LHMM call (bench_direction.cpp)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/asset/database.hpp"
#include "lmm/eval/search.hpp"
#ifdef LMM_HAVE_FAISS
#include "lmm/training/config.hpp"
#include "lmm/training/flat_index.hpp"
#include "lmm/training/layers.hpp"
#include "lmm/training/trainer.hpp"
#endif
#include "lmm/pipeline/import.hpp"
#include "lmm/pipeline/report.hpp"
#include "bench_common.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::bench;

namespace {

// Options shared by the commands that time queries against a database: --db, --queries
// (default `queries`), --json, --help.
void add_query_options(cxxopts::Options& o, const char* queries) {
  o.add_options()
      ("db", "database", cxxopts::value<std::string>())
      ("queries", "queries per repetition", cxxopts::value<int>()->default_value(queries))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
}

// Loads the database at `path`; throws InputError with the loader's message.
std::shared_ptr<const Database> load_database(const std::string& path) {
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(path, error);
  if (db == nullptr) throw InputError(error);
  return db;
}

// Times complete imports (read, process, features, write) of the inputs.
int bench_import(int argc, char** argv) {
  cxxopts::Options o("lmm-bench import", "Median wall time of a complete lmm-import run.");
  const std::string configs = default_config_dir();
  o.add_options()
      ("inputs", "BVH files or folders", cxxopts::value<std::vector<std::string>>())
      ("runs", "repetitions", cxxopts::value<int>()->default_value("3"))
      ("threads", "worker threads", cxxopts::value<int>()->default_value("2"))
      ("skeleton", "skeleton config", cxxopts::value<std::string>()->default_value(configs + "/skeletons/bandai.toml"))
      ("features", "feature schema", cxxopts::value<std::string>()->default_value(configs + "/features/locomotion27.toml"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  o.parse_positional({"inputs"});
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "inputs", args, code)) return code;
  ImportOptions opt;
  opt.inputs = args["inputs"].as<std::vector<std::string>>();
  opt.skeleton = load_skeleton_config(args["skeleton"].as<std::string>());
  opt.features = load_feature_config(args["features"].as<std::string>());
  opt.threads = args["threads"].as<int>();
  const std::string out = (std::filesystem::temp_directory_path() / "lmm-bench-import.mmdb").string();
  std::vector<double> times;
  ImportSummary s;
  for (int r = 0; r < std::max(1, args["runs"].as<int>()); ++r) {
    const auto start = Clock::now();
    s = import_database(opt, out);
    times.push_back(seconds_since(start));
    spdlog::info("run {}: {:.2f} s", r + 1, times.back());
  }
  std::filesystem::remove(out);
  const double med = median(times);
  std::printf("import: %d files, %d frames, %d clips, median %.2f s over %zu runs (%.0f frames/s, "
              "%d threads)\n", s.files, s.frames, s.clips, med, times.size(), s.frames / med, opt.threads);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .number("files", s.files)
                                                   .number("frames", s.frames)
                                                   .number("clips", s.clips)
                                                   .number("seconds_median", med)
                                                   .number("runs", double(times.size()))
                                                   .number("frames_per_s", s.frames / med));
  }
  return 0;
}

// Times the runtime query path: velocity FK of one pose, features, normalisation.
int bench_features(int argc, char** argv) {
  cxxopts::Options o("lmm-bench features", "Median cost of building one runtime query.");
  add_query_options(o, "10000");
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "db", args, code)) return code;
  const std::shared_ptr<const Database> database = load_database(args["db"].as<std::string>());
  const Database& db = *database;
  const int j = db.joint_count(), queries = std::max(1, args["queries"].as<int>());
  const FeatureSchema& schema = db.schema();
  PoseScratch scratch;
  scratch.resize(j);
  std::vector<RootSample> trajectory(schema.trajectory_offsets.size());
  std::vector<float> query(size_t(schema.dims));
  std::vector<double> per_query_us;
  float sink = 0.0f;
  for (int rep = 0; rep < 7; ++rep) {
    const auto start = Clock::now();
    for (int q = 0; q < queries; ++q) {
      const int f = int((uint64_t(q) * 2654435761u) % uint64_t(db.frame_count()));
      for (size_t s = 0; s < trajectory.size(); ++s) {
        trajectory[s] = RootSample{db.positions(f)[0], db.rotations(f)[0]};
      }
      features_from_local_pose(schema, db.skeleton().parents.data(), j, db.positions(f),
                               db.rotations(f), db.velocities(f), db.angular_velocities(f),
                               trajectory.data(), scratch, query.data());
      normalize_features(query.data(), db.feature_offset(), db.feature_scale(), schema.dims);
      sink += query[0];
    }
    per_query_us.push_back(seconds_since(start) * 1e6 / queries);
  }
  const double med = median(per_query_us);
  std::printf("features: %d joints, %d dims, median %.3f us per query (FK with velocities + "
              "features + normalisation; checksum %g)\n", j, schema.dims, med, double(sink));
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject().number("us_query_features", med));
  }
  return 0;
}

// Seeded controller-like queries: the pose part of one random frame with the trajectory part
// of another (a request the current clip does not fulfil), plus a little noise. `frames`
// receives the pose frame of each query (the controller's current frame).
std::vector<float> controller_like_queries(const Database& db, int count, uint32_t seed, std::vector<int>& frames) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, db.frame_count() - 1);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  const int dims = db.schema().dims;
  std::vector<bool> trajectory_dim(size_t(dims), false);
  for (const FeatureGroup& g : db.schema().groups) {
    const bool trajectory = g.kind == FeatureKind::TrajectoryPosition || g.kind == FeatureKind::TrajectoryDirection;
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); ++d) trajectory_dim[size_t(d)] = trajectory;
  }
  std::vector<float> queries;
  frames.clear();
  for (int q = 0; q < count; ++q) {
    const int pose = pick(rng), wish = pick(rng);
    frames.push_back(pose);
    for (int d = 0; d < dims; ++d) {
      queries.push_back((trajectory_dim[size_t(d)] ? db.features(wish)[d] : db.features(pose)[d]) + noise(rng));
    }
  }
  return queries;
}

// Median over repetitions of the mean microseconds per call of `one(q)` over all queries.
double time_per_query(int count, const std::function<void(int)>& one) {
  std::vector<double> per_query;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    for (int q = 0; q < count; ++q) one(q);
    per_query.push_back(seconds_since(start) * 1e6 / count);
  }
  return median(per_query);
}

// Times the runtime's accelerated search against brute force (and FAISS) on the same queries.
int bench_search(int argc, char** argv) {
  cxxopts::Options o("lmm-bench search", "Accelerated exact search vs brute force (vs FAISS IndexFlatL2 "
                                         "when built with training), single thread, same queries.");
  add_query_options(o, "1000");
  o.add_options()("seed", "query seed", cxxopts::value<uint32_t>()->default_value("7"));
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "db", args, code)) return code;
  const std::shared_ptr<const Database> database = load_database(args["db"].as<std::string>());
  const Database& db = *database;
  FeatureSearch search;
  std::string error;
  if (!search.build(database, error)) throw InputError(error);
  const int count = std::max(1, args["queries"].as<int>()), dims = db.schema().dims;
  std::vector<int> frames;
  const std::vector<float> queries = controller_like_queries(db, count, args["seed"].as<uint32_t>(), frames);
  const SearchParams params;
  SearchResult out[10], ref[10];
  SearchScratch scratch = search.make_scratch();
  int mismatches = 0;
  for (int q = 0; q < count; ++q) {
    const int a = search.search(&queries[size_t(q) * dims], frames[size_t(q)], params, out, 1, scratch);
    const int b = search.brute_force(&queries[size_t(q) * dims], frames[size_t(q)], params, ref, 1);
    mismatches += (a != b || out[0].frame != ref[0].frame || out[0].cost != ref[0].cost) ? 1 : 0;
  }
  auto accelerated = [&](int k) {
    return time_per_query(count, [&](int q) { search.search(&queries[size_t(q) * dims], frames[size_t(q)], params, out, k, scratch);
    });
  };
  const double us_aabb = accelerated(1), us_k3 = accelerated(3), us_k10 = accelerated(10);
  const double us_brute = time_per_query(count, [&](int q) {
    search.brute_force(&queries[size_t(q) * dims], frames[size_t(q)], params, out, 1);
  });
  double us_faiss = 0.0;
#ifdef LMM_HAVE_FAISS
  const training::FlatIndex flat(db.features(0), db.frame_count(), dims);
  float distance = 0.0f;
  us_faiss = time_per_query(count, [&](int q) { flat.nearest(&queries[size_t(q) * dims], distance); });
#endif
  std::printf("search: %d frames, %d dims, %d controller-like queries, single thread, median of 5 runs\n"
              "  accelerated (boxes)  k=1 %9.2f us   k=3 %9.2f us   k=10 %9.2f us\n"
              "  brute force          k=1 %9.2f us   (%.1fx slower than accelerated)\n",
              db.frame_count(), dims, count, us_aabb, us_k3, us_k10, us_brute, us_brute / us_aabb);
  if (us_faiss > 0.0) {
    std::printf("  FAISS IndexFlatL2    k=1 %9.2f us   (%.1fx slower than accelerated)\n", us_faiss, us_faiss / us_aabb);
  } else {
    std::printf("  FAISS IndexFlatL2    not built (configure with -DLMM_BUILD_TRAINING=ON)\n");
  }
  std::printf("  accelerated == brute force on %d of %d queries\n", count - mismatches, count);
  if (args.count("json")) {
    JsonObject json;
    json.number("frames", db.frame_count())
        .number("queries", count)
        .number("us_aabb", us_aabb)
        .number("us_aabb_k3", us_k3)
        .number("us_aabb_k10", us_k10)
        .number("us_brute", us_brute)
        .number("speedup_vs_brute", us_brute / us_aabb)
        .number("mismatches", mismatches);
    if (us_faiss > 0.0) json.number("us_faiss", us_faiss).number("speedup_vs_faiss", us_faiss / us_aabb);
    write_json(args["json"].as<std::string>(), json);
  }
  return mismatches == 0 ? 0 : 1;
}

#ifdef LMM_HAVE_FAISS
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
  const training::TrainingConfig config = training::load_training_config(args["preset"].as<std::string>(), default_config_dir());
  training::TrainOptions options;
  options.out_dir = (std::filesystem::temp_directory_path() / "lmm-bench-train").string();
  options.stop_after = args["steps"].as<int64_t>();
  JsonObject json;
  json.text("preset", config.name);
  std::printf("training throughput, preset '%s', %lld steps per model, %d threads\n", config.name.c_str(),
              static_cast<long long>(options.stop_after), config.threads);
  const std::pair<const char*, training::TrainReport (*)(const training::TrainingConfig&, const Database&,
                                                        const training::TrainOptions&)> models[] = {
      {"autoencoder", training::train_autoencoder}, {"stepper", training::train_stepper}, {"projector", training::train_projector}};
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
    const training::SmoeThroughput t = training::measure_smoe_throughput(in, config.decoder.experts, config.decoder.expert_hidden,
                                                                         out, config.batch, 5);
    std::printf("  decoder SMoE (%lld experts, batch %lld): grouped %.0f samples/s, dense %.0f samples/s (%.1fx)\n",
                static_cast<long long>(config.decoder.experts), static_cast<long long>(config.batch),
                t.grouped_samples_per_s, t.dense_samples_per_s, t.grouped_samples_per_s / t.dense_samples_per_s);
    json.number("smoe_grouped_samples_per_s", t.grouped_samples_per_s).number("smoe_dense_samples_per_s", t.dense_samples_per_s);
  }
  if (args.count("json")) write_json(args["json"].as<std::string>(), json);
  return 0;
}
#endif

int run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "import") return bench_import(argc - 1, argv + 1);
  if (command == "features") return bench_features(argc - 1, argv + 1);
  if (command == "search") return bench_search(argc - 1, argv + 1);
  if (command == "nn") return bench_nn(argc - 1, argv + 1);
  if (command == "crowd") return bench_crowd(argc - 1, argv + 1);
  if (command == "direction") return bench_direction(argc - 1, argv + 1);
#ifdef LMM_HAVE_FAISS
  if (command == "train") return bench_train(argc - 1, argv + 1);
#endif
  std::puts("usage: lmm-bench import DIR_OR_BVH... [--runs N] [--json PATH]\n"
            "       lmm-bench features --db X.mmdb [--queries N] [--json PATH]\n"
            "       lmm-bench search --db X.mmdb [--queries N] [--json PATH]\n"
            "       lmm-bench nn (--model X.lmmw [--baseline Y.lmmw] | --preset NAME --db X.mmdb) [--json PATH]\n"
            "       lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters 1,64,1024,4096] [--threads 2] [--lod 1,2,4]\n"
            "                       [--json PATH]\n"
            "       lmm-bench direction --model X.lmdn --db X.mmdb [--k 3 --l 3] [--calls 1000] [--json PATH]\n"
            "       lmm-bench train --db X.mmdb [--preset NAME] [--steps N] [--json PATH] (built with training)\n"
            "Each command has --help.");
  return command == "-h" || command == "--help" ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-bench", [&] { return run(argc, argv); });
}
