// Helpers shared by the lmm-bench commands.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <time.h>

#include <cxxopts.hpp>

#include "lmm/common/report.hpp"
#include "lmm/asset/database.hpp"

namespace lmm::bench {

using Clock = std::chrono::steady_clock;

// Seconds elapsed since `start`.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the calling thread in seconds (not the time it waited for a core on a busy host).
inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

using pipeline::median;  // lmm/common/report.hpp

// Parses a subcommand's options; true (with the exit code in `code`) when the command should
// stop here: help was asked for, or the required option `required` is missing (nullptr: none).
inline bool parse_or_stop(cxxopts::Options& o, int argc, char** argv, const char* required,
                          cxxopts::ParseResult& args, int& code) {
  args = o.parse(argc, argv);
  if (!args.count("help") && (required == nullptr || args.count(required))) return false;
  std::puts(o.help().c_str());
  code = args.count("help") ? 0 : 2;
  return true;
}

// The database at `path`; throws InputError with the loader's message.
std::shared_ptr<const Database> load_database(const std::string& path);

}  // namespace lmm::bench

// lmm-bench import: whole-import wall time (bench_import.cpp).
int bench_import(int argc, char** argv);
// lmm-bench features: runtime query feature cost (bench_queries.cpp).
int bench_features(int argc, char** argv);
// lmm-bench search: accelerated search against brute force (bench_queries.cpp).
int bench_search(int argc, char** argv);
#ifdef LMM_HAVE_FAISS
// lmm-bench train: training throughput of a preset (bench_train.cpp).
int bench_train(int argc, char** argv);
#endif
// lmm-bench nn: runtime inference timings of model bundles (bench_nn.cpp).
int bench_nn(int argc, char** argv);
// lmm-bench crowd: crowd update timings against one-by-one updates (bench_crowd.cpp).
int bench_crowd(int argc, char** argv);
// lmm-bench direction: DirectionNet prediction cost against an LHMM call (bench_direction.cpp).
int bench_direction(int argc, char** argv);
