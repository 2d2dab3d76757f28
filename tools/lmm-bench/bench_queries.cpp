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
#include "lmm/engines/gameplay.hpp"
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
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); ++d) trajectory_dim[size_t(d)] = is_trajectory_kind(g.kind);
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

// The constraint of --require, --require-any and --exclude (tag names, comma-separated); throws
// InputError naming the option and the unknown tag.
TagConstraint constraint_option(const cxxopts::ParseResult& args, const FrameAnnotations& annotations) {
  TagConstraint c;
  for (auto [option, mask] : {std::pair<const char*, TagMask*>{"require", &c.require_all},
                              {"require-any", &c.require_any}, {"exclude", &c.exclude}}) {
    std::string error;
    if (args.count(option) && !annotations.tag_mask(args[option].as<std::string>(), *mask, error)) {
      throw InputError(std::string("--") + option + ": " + error);
    }
  }
  return c;
}

// `count` seeded random constraints over the database's tags: require one tag, require any of
// two, exclude one, or require one and exclude another. Throws InputError when it has no tags.
std::vector<TagConstraint> random_constraints(const FrameAnnotations& annotations, int count, uint32_t seed) {
  const int tags = int(annotations.tag_names().size());
  if (tags == 0) throw InputError("--random-constraints: the database has no tags (see lmm-import's [tags])");
  return random_tag_constraints(tags, count, seed);
}

// The fraction of the database's frames that are entries under `params` (outside the excluded
// clip ends, FeatureSearch::entry_allowed).
double allowed_fraction(const FeatureSearch& search, const SearchParams& params) {
  const Database& db = *search.database();
  long allowed = 0;
  for (const DatabaseRange& r : db.ranges()) {
    for (int f = r.start; f < r.stop - std::max(0, params.ignore_range_end); ++f) {
      allowed += search.entry_allowed(f, params.constraint);
    }
  }
  return double(allowed) / double(db.frame_count());
}

// Queries brute force is timed on (the first ones; every query is still compared with it).
constexpr int kMaxBruteForceQueries = 1000;

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

// The search parameters of each query: the default, with the constraint of the options (or a
// random one per query with --random-constraints).
std::vector<SearchParams> query_params(const cxxopts::ParseResult& args, const Database& db, int count) {
  std::vector<SearchParams> params(static_cast<size_t>(count));
  if (args["random-constraints"].as<bool>()) {
    const std::vector<TagConstraint> random = random_constraints(db.annotations(), count, args["seed"].as<uint32_t>());
    for (size_t q = 0; q < params.size(); ++q) params[q].constraint = random[q];
  } else {
    const TagConstraint constraint = constraint_option(args, db.annotations());
    for (SearchParams& p : params) p.constraint = constraint;
  }
  return params;
}

// Times the runtime's accelerated search against brute force (and FAISS) on the same queries.
int bench_search(int argc, char** argv) {
  cxxopts::Options o("lmm-bench search", "Accelerated exact search vs brute force (vs FAISS IndexFlatL2 "
                                         "when built with training), single thread, same queries.");
  add_query_options(o, "1000");
  o.add_options()("seed", "query seed", cxxopts::value<uint32_t>()->default_value("7"))
      ("require", "only frames with all these tags (comma-separated)", cxxopts::value<std::string>())
      ("require-any", "only frames with at least one of these tags", cxxopts::value<std::string>())
      ("exclude", "no frame with any of these tags", cxxopts::value<std::string>())
      ("random-constraints", "a random constraint over the database's tags per query",
       cxxopts::value<bool>()->default_value("false"));
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "db", args, code)) return code;
  const std::shared_ptr<const Database> database = load_database(args["db"].as<std::string>());
  const Database& db = *database;
  FeatureSearch search;
  std::string error;
  if (!search.build(database, error)) throw InputError(error);
  const double ms_build = time_per_query(1, [&](int) { search.build(database, error); }) / 1000.0;
  const int count = std::max(1, args["queries"].as<int>()), dims = db.schema().dims;
  std::vector<int> frames;
  const std::vector<float> queries = controller_like_queries(db, count, args["seed"].as<uint32_t>(), frames);
  const std::vector<SearchParams> params = query_params(args, db, count);
  const bool constrained = std::any_of(params.begin(), params.end(),
                                       [](const SearchParams& p) { return !p.constraint.allows_all(); });
  SearchResult out[10], ref[10];
  SearchScratch scratch = search.make_scratch();
  int mismatches = 0, unanswered = 0;
  for (int q = 0; q < count; ++q) {
    const int a = search.search(&queries[size_t(q) * dims], frames[size_t(q)], params[size_t(q)], out, 1, scratch);
    const int b = search.brute_force(&queries[size_t(q) * dims], frames[size_t(q)], params[size_t(q)], ref, 1);
    mismatches += (a != b || (a > 0 && (out[0].frame != ref[0].frame || out[0].cost != ref[0].cost))) ? 1 : 0;
    unanswered += a == 0;
  }
  auto accelerated = [&](int k, const std::vector<SearchParams>& p) {
    return time_per_query(count, [&](int q) {
      search.search(&queries[size_t(q) * dims], frames[size_t(q)], p[size_t(q)], out, k, scratch);
    });
  };
  const double us_aabb = accelerated(1, params), us_k3 = accelerated(3, params), us_k10 = accelerated(10, params);
  const double us_free = constrained ? accelerated(1, std::vector<SearchParams>(size_t(count))) : us_aabb;
  const int brute_count = std::min(count, kMaxBruteForceQueries);  // brute force is slow: time fewer
  const double us_brute = time_per_query(brute_count, [&](int q) {
    search.brute_force(&queries[size_t(q) * dims], frames[size_t(q)], params[size_t(q)], out, 1);
  });
  double us_faiss = 0.0;
#ifdef LMM_HAVE_FAISS
  const training::FlatIndex flat(db.features(0), db.frame_count(), dims);
  float distance = 0.0f;
  us_faiss = time_per_query(count, [&](int q) { flat.nearest(&queries[size_t(q) * dims], distance); });
#endif
  std::printf("search: %d frames, %d dims, %d controller-like queries, single thread, median of 5 runs\n"
              "  accelerated (boxes)  k=1 %9.2f us   k=3 %9.2f us   k=10 %9.2f us\n"
              "  brute force          k=1 %9.2f us   (%.1fx slower than accelerated; timed on %d queries)\n",
              db.frame_count(), dims, count, us_aabb, us_k3, us_k10, us_brute, us_brute / us_aabb, brute_count);
  const double allowed = constrained ? allowed_fraction(search, params.front()) : 1.0;
  if (constrained) {
    std::printf("  constrained          %s; without it k=1 %9.2f us (constrained / free %.2f); %d queries "
                "found no allowed frame\n",
                args["random-constraints"].as<bool>()
                    ? "a random constraint per query"
                    : ("entries allowed: " + format_number(100.0 * allowed) + "% of the frames").c_str(),
                us_free, us_aabb / us_free, unanswered);
  }
  if (us_faiss > 0.0) {
    std::printf("  FAISS IndexFlatL2    k=1 %9.2f us   (%.1fx slower than accelerated)\n", us_faiss,
                us_faiss / us_aabb);
  } else {
    std::printf("  FAISS IndexFlatL2    not built (configure with -DLMM_BUILD_TRAINING=ON)\n");
  }
  std::printf("  accelerated == brute force on %d of %d queries\n", count - mismatches, count);
  std::printf("  index build          %.1f ms (FeatureSearch::build, median of 5; layout %s)\n", ms_build,
              search.split_by_tags() ? "split by tags" : "by features");
  if (args.count("json")) {
    JsonObject json;
    json.number("frames", db.frame_count())
        .number("queries", count)
        .number("us_aabb", us_aabb)
        .number("us_aabb_k3", us_k3)
        .number("us_aabb_k10", us_k10)
        .number("ms_build", ms_build)
        .boolean("split_by_tags", search.split_by_tags())
        .number("us_brute", us_brute)
        .number("speedup_vs_brute", us_brute / us_aabb)
        .number("mismatches", mismatches);
    if (constrained) {
      json.number("us_aabb_unconstrained", us_free)
          .number("constrained_vs_unconstrained", us_aabb / us_free)
          .number("unanswered", unanswered);
      if (!args["random-constraints"].as<bool>()) json.number("allowed_fraction", allowed);
    }
    if (us_faiss > 0.0) json.number("us_faiss", us_faiss).number("speedup_vs_faiss", us_faiss / us_aabb);
    write_json(args["json"].as<std::string>(), json);
  }
  return mismatches == 0 ? 0 : 1;
}
