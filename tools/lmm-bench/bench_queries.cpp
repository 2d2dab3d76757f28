// lmm-bench features and search: the cost of a runtime query's features, and of the accelerated
// search against brute force (and FAISS when built with training), on one database.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/eval/search.hpp"
#ifdef LMM_HAVE_FAISS
#include "lmm/training/flat_index.hpp"
#endif

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

}  // namespace

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
    return time_per_query(count, [&](int q) {
      search.search(&queries[size_t(q) * dims], frames[size_t(q)], params, out, k, scratch);
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
    std::printf("  FAISS IndexFlatL2    k=1 %9.2f us   (%.1fx slower than accelerated)\n", us_faiss,
                us_faiss / us_aabb);
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
