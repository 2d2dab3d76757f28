// lmm-bench: timing harness. Prints medians over repeated runs (the machines are noisy).
//   lmm-bench import DIR_OR_BVH... [--runs 3] [--json PATH]   whole-import wall time
//   lmm-bench features --db X.mmdb [--queries N] [--json PATH] runtime query feature cost
//   lmm-bench search --db X.mmdb [--queries N] [--json PATH]   accelerated vs brute force
//                                                              (vs FAISS flat when built with training;
//                                                              tag constraints: --require, --exclude, ...)
//   lmm-bench nn (--model X.lmmw [--baseline Y.lmmw] | --preset NAME --db X.mmdb) [--json PATH]
//                                                              runtime network inference (bench_nn.cpp)
//   lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters ...] [--threads T] [--lod ...] [--json PATH]
//                                                              crowd vs one-by-one updates (bench_crowd.cpp)
//   lmm-bench direction --model X.lmdn --db X.mmdb [--json PATH] DirectionNet vs an LHMM call (bench_direction.cpp)
#include <cstdio>
#include <string>

#include "bench_common.hpp"
#include "lmm/common/report.hpp"

using namespace lmm::bench;

namespace {

// Runs the command argv[1] names, or prints the usage.
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
            "       lmm-bench search --db X.mmdb [--queries N] [--require TAGS] [--require-any TAGS] [--exclude TAGS]\n"
            "                        [--random-constraints] [--json PATH]\n"
            "       lmm-bench nn (--model X.lmmw [--baseline Y.lmmw] | --preset NAME --db X.mmdb) [--json PATH]\n"
            "       lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters 1,64,1024,4096] [--threads 2] "
            "[--lod 1,2,4]\n"
            "                       [--json PATH]\n"
            "       lmm-bench direction --model X.lmdn --db X.mmdb [--k 3 --l 3] [--calls 1000] [--json PATH]\n"
            "       lmm-bench train --db X.mmdb [--preset NAME] [--steps N] [--json PATH] (built with training)\n"
            "Each command has --help.");
  return command == "-h" || command == "--help" ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  return lmm::pipeline::run_cli("lmm-bench", [&] { return run(argc, argv); });
}
