// lmm-update-bench: the cost of one character update (lmm_character_update, lmm/lmm.h) on a
// scripted stick, the median of 5 repetitions after one not counted (caches; a JavaScript
// engine's optimising compiler). The same source builds natively and as
// WebAssembly (run in Node.js, as in the browser demo), so scripts/bench-wasm.sh can report the
// WebAssembly / native ratio of one asset in one run. Dependency-free: the runtime only.
//
// Usage: lmm-update-bench (--db X.mmdb | --model X.lmmw) [--seconds S]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lmm/lmm.h"

namespace {

constexpr int kRepetitions = 5;
constexpr float kDt = 1.0f / 60.0f;

struct Options {
  std::string db, model;
  double seconds = 20.0;
};

// Reads the command line; false with a message on stderr when it is not usable.
bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--db" && has_value) {
      options.db = argv[++i];
    } else if (arg == "--model" && has_value) {
      options.model = argv[++i];
    } else if (arg == "--seconds" && has_value) {
      options.seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "lmm-update-bench: unknown or incomplete argument '%s'\n", arg.c_str());
      return false;
    }
  }
  if (options.db.empty() == options.model.empty()) {
    std::fprintf(stderr, "usage: lmm-update-bench (--db X.mmdb | --model X.lmmw) [--seconds S]\n");
    return false;
  }
  if (!(options.seconds >= 1.0 && options.seconds <= 3600.0)) {
    std::fprintf(stderr, "lmm-update-bench: --seconds must be 1 to 3600, not %g\n", options.seconds);
    return false;
  }
  return true;
}

// The stick on frame f: a new direction every 2 s (eight directions in turn), walking and running
// in alternate 4-s spans, standing still one span in eight.
lmm_gamepad stick_at(int frame) {
  const int span = frame / 120;
  const float angle = 0.785398f * float(span % 8);
  const bool still = span % 8 == 7;
  lmm_gamepad pad{};
  pad.left_x = still ? 0.0f : std::sin(angle);
  pad.left_y = still ? 0.0f : std::cos(angle);
  pad.gait = (span / 2) % 2 == 0 ? 0.0f : 1.0f;
  return pad;
}

// Microseconds per update over `frames` updates from a reset character; negative on failure.
double run_once(lmm_character* character, int frames) {
  if (!lmm_character_reset(character, 0.0f, 0.0f, 0.0f)) return -1.0;
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f) {
    const lmm_gamepad pad = stick_at(f);
    if (!lmm_character_update(character, &pad, kDt)) return -1.0;
  }
  const std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / frames;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  lmm_database* db = options.db.empty() ? nullptr : lmm_database_load(options.db.c_str());
  lmm_model* model = options.model.empty() ? nullptr : lmm_model_load(options.model.c_str());
  lmm_character* character = db != nullptr      ? lmm_character_create_database(db, 0.0f, 0.0f, 0.0f)
                             : model != nullptr ? lmm_character_create_learned(model, 0.0f, 0.0f, 0.0f)
                                                : nullptr;
  if (character == nullptr) {
    std::fprintf(stderr, "lmm-update-bench: %s\n", lmm_last_error());
    return 1;
  }
  const int frames = int(std::lround(options.seconds / kDt));
  std::vector<double> runs;
  for (int r = -1; r < kRepetitions; ++r) {
    const double us = run_once(character, frames);
    if (us < 0.0) {
      std::fprintf(stderr, "lmm-update-bench: update failed: %s\n", lmm_last_error());
      return 1;
    }
    if (r >= 0) runs.push_back(us);
  }
  std::sort(runs.begin(), runs.end());
  std::printf("lmm-update-bench: %s, %s, %d updates x %d repetitions: %.2f us per update (median; %.2f-%.2f)\n",
              db != nullptr ? "database" : "learned", (db != nullptr ? options.db : options.model).c_str(), frames,
              kRepetitions, runs[kRepetitions / 2], runs.front(), runs.back());
  lmm_character_release(character);
  lmm_database_release(db);
  lmm_model_release(model);
  return 0;
}
