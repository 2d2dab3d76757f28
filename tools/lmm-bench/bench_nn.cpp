// lmm-bench nn: single-thread inference cost of model bundles with the dependency-free runtime
// (Kleanthous & Martini 2023 Sec. 6.2, Table 11), next to an FFN (learned motion matching) baseline in the same
// run, timed interleaved with it. Inputs are random N(0, 1) rows cycled over 1,024 different ones,
// so routing changes from call to call as it does across characters (the pessimistic case for
// the expert caches).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/config.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
#ifdef LMM_HAVE_FAISS
#include "lmm/training/export.hpp"
#endif

using namespace lmm;
using namespace lmm::bench;
using namespace lmm::pipeline;

namespace {

constexpr int kRows = 1024;           // distinct inputs
constexpr int kBatchSizes[] = {1, 64, 1024};
constexpr int kRepetitions = 9;       // medians over these

// One bundle's bytes, kept aligned for in-place loading.
struct Bundle {
  std::string label;
  AlignedBuffer bytes;
};

// Everything measured for one bundle.
struct NnReport {
  std::string label, preset;
  uint64_t file_bytes = 0, weight_bytes = 0;
  int64_t macs[3] = {0, 0, 0};  // decoder, stepper, projector
  double us[3] = {0, 0, 0};     // per call, one character
  double batched[3] = {0, 0, 0};  // per character per frame at kBatchSizes
  double batched_ratio = 0.0;     // median over repetitions of batched 1,024 / unbatched frame
  // Median (and range) over repetitions of the baseline's frame / this bundle's frame, both
  // timed in the same repetition; 0 without a baseline.
  double speedup = 0.0, speedup_min = 0.0, speedup_max = 0.0;
  double load_ms = 0.0;
  // Decoder + stepper every frame, projector every 6th (search every 100 ms at 60 Hz, Sec. 6.2.1).
  double us_frame() const { return us[0] + us[1] + us[2] / 6.0; }
  double macs_frame() const { return double(macs[0] + macs[1]) + double(macs[2]) / 6.0; }
};

// Mean microseconds per call of `calls` calls to `one(i)`.
double time_once(int calls, const std::function<void(int)>& one) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) one(i);
  return seconds_since(start) * 1e6 / calls;
}

std::vector<float> random_rows(int cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> v(size_t(kRows) * cols);
  for (float& x : v) x = n(rng);
  return v;
}

// Loads `b` (over its bytes, which outlive the model); throws InputError naming the bundle on
// failure.
std::shared_ptr<const Model> load_model(const Bundle& b) {
  std::string error;
  std::shared_ptr<const Model> model = Model::load_buffer(b.bytes.data(), b.bytes.size(), error);
  if (model == nullptr) throw InputError(b.label + ": " + error);
  return model;
}

// One bundle under test: its model and evaluator, the inputs, and every repetition's samples.
struct Timed {
  std::shared_ptr<const Model> model;
  ModelEvaluator eval;
  std::vector<float> states, queries, out;
  std::vector<double> samples[3], batched[std::size(kBatchSizes)], batched_ratios, speedups;
  NnReport report;
};

// Loads `bundle` for timing on `path`: sizes, MACs and load time into t.report, the evaluator
// and its inputs.
void prepare(const Bundle& bundle, KernelPath path, Timed& t) {
  t.model = load_model(bundle);
  const Model& m = *t.model;
  NnReport& r = t.report;
  r.label = bundle.label;
  r.preset = m.preset();
  r.file_bytes = bundle.bytes.size();
  r.weight_bytes = m.weight_bytes();
  r.macs[0] = m.decoder().macs();
  r.macs[1] = m.stepper().macs();
  r.macs[2] = m.projector().macs();
  std::vector<double> loads;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    load_model(bundle);
    loads.push_back(seconds_since(start) * 1e3);
  }
  r.load_ms = median(loads);
  std::string error;
  if (!t.eval.init(t.model, kRows, path, error)) throw InputError(error);
  t.states = random_rows(m.state_size(), 1);
  t.queries = random_rows(m.feature_dims(), 2);
  t.out.assign(size_t(kRows) * std::max(m.pose_layout().size(), m.state_size()), 0.0f);
  if (!t.eval.decode(t.states.data(), t.out.data())) throw InputError(bundle.label + ": the evaluator refused the model");
}

// Times `calls` single calls of decoder, stepper and projector; returns the frame's cost
// (decoder + stepper + projector / 6, us) and records the samples when `record`.
double time_single(Timed& t, int calls, bool record) {
  const int state = t.model->state_size(), features = t.model->feature_dims();
  const float* s = t.states.data();
  const float* q = t.queries.data();
  float* out = t.out.data();
  const std::function<void(int)> single[3] = {
      [&](int i) { t.eval.decode(s + size_t(i % kRows) * state, out); },
      [&](int i) { t.eval.step(s + size_t(i % kRows) * state, out); },
      [&](int i) { t.eval.project(q + size_t(i % kRows) * features, out); }};
  double frame = 0.0;
  for (int n = 0; n < 3; ++n) {
    const double us = time_once(calls, single[n]);
    frame += n == 2 ? us / 6.0 : us;
    if (record) t.samples[n].push_back(us);
  }
  return frame;
}

// Times every batch size once (per character per frame); with `record`, records them and the
// largest batch's ratio to `frame`, the same repetition's single-call frame.
void time_batched(Timed& t, int calls, double frame, bool record) {
  const int state = t.model->state_size(), features = t.model->feature_dims();
  const float* s = t.states.data();
  const float* q = t.queries.data();
  float* out = t.out.data();
  for (size_t b = 0; b < std::size(kBatchSizes); ++b) {
    const int n = kBatchSizes[b], batches = std::max(4, calls / n);
    auto offset = [&](int i, int cols) { return size_t((i * n) % kRows) * cols; };
    const double decode = time_once(batches, [&](int i) { t.eval.decode_batch(s + offset(i, state), n, out); });
    const double step = time_once(batches, [&](int i) { t.eval.step_batch(s + offset(i, state), n, out); });
    const double project = time_once(batches, [&](int i) { t.eval.project_batch(q + offset(i, features), n, out); });
    const double per_character = (decode + step + project / 6.0) / n;
    if (!record) continue;
    t.batched[b].push_back(per_character);
    if (b + 1 == std::size(kBatchSizes)) t.batched_ratios.push_back(per_character / frame);
  }
}

// Times every bundle interleaved: each repetition times the single calls of every bundle back
// to back, then their batches, so a slow spell of this shared machine hits all of them alike.
// Medians over the repetitions; the batched ratio and the speedups over bundle `baseline`
// (-1: none) are medians of the per-repetition ratios.
void measure_interleaved(std::vector<Timed>& timed, int baseline, int calls) {
  for (int rep = -1; rep < kRepetitions; ++rep) {  // repetition -1 warms up
    const bool record = rep >= 0;
    std::vector<double> frames;
    for (Timed& t : timed) frames.push_back(time_single(t, calls, record));
    for (size_t i = 0; i < timed.size(); ++i) time_batched(timed[i], calls, frames[i], record);
    if (!record || baseline < 0) continue;
    for (size_t i = 0; i < timed.size(); ++i) timed[i].speedups.push_back(frames[size_t(baseline)] / frames[i]);
  }
  for (Timed& t : timed) {
    NnReport& r = t.report;
    for (int n = 0; n < 3; ++n) r.us[n] = median(t.samples[n]);
    for (size_t b = 0; b < std::size(kBatchSizes); ++b) r.batched[b] = median(t.batched[b]);
    r.batched_ratio = median(t.batched_ratios);
    if (!t.speedups.empty()) {
      r.speedup = median(t.speedups);
      r.speedup_min = *std::min_element(t.speedups.begin(), t.speedups.end());
      r.speedup_max = *std::max_element(t.speedups.begin(), t.speedups.end());
    }
  }
}

void print_report(const NnReport& r) {
  std::printf("%s (preset '%s'): %.2f MB file, %.2f MB weights, load %.2f ms\n", r.label.c_str(), r.preset.c_str(),
              r.file_bytes / 1e6, r.weight_bytes / 1e6, r.load_ms);
  const char* names[] = {"decoder", "stepper", "projector"};
  for (int n = 0; n < 3; ++n) {
    std::printf("  %-10s %9.2f us/call %9lld MACs  (%.1f GMAC/s)\n", names[n], r.us[n], static_cast<long long>(r.macs[n]),
                r.macs[n] / (r.us[n] * 1e3));
  }
  std::printf("  frame      %9.2f us (decoder + stepper + projector / 6), %.0f MACs\n", r.us_frame(), r.macs_frame());
  std::printf("  batched per character per frame: 1: %.2f us   64: %.2f us   1024: %.2f us (%.3fx of unbatched)\n",
              r.batched[0], r.batched[1], r.batched[2], r.batched_ratio);
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

JsonObject report_json(const NnReport& r) {
  return JsonObject()
      .text("file", r.label)
      .text("preset", r.preset)
      .number("us_decoder", r.us[0])
      .number("us_stepper", r.us[1])
      .number("us_projector", r.us[2])
      .number("us_frame", r.us_frame())
      .number("us_frame_batched_1", r.batched[0])
      .number("us_frame_batched_64", r.batched[1])
      .number("us_frame_batched_1024", r.batched[2])
      .number("macs_decoder", double(r.macs[0]))
      .number("macs_stepper", double(r.macs[1]))
      .number("macs_projector", double(r.macs[2]))
      .number("weight_bytes", double(r.weight_bytes))
      .number("file_bytes", double(r.file_bytes))
      .number("load_ms", r.load_ms);
}

Bundle read_bundle(const std::string& path) {
  Bundle b{path, {}};
  std::string error;
  if (!read_file(path, b.bytes, error)) throw InputError(error);
  return b;
}

#ifdef LMM_HAVE_FAISS
// A bundle made in memory (by the training library), labelled `label`.
Bundle bytes_bundle(const std::string& label, const std::vector<uint8_t>& bytes) {
  Bundle b{label, AlignedBuffer(bytes.size())};
  std::copy(bytes.begin(), bytes.end(), b.bytes.data());
  return b;
}

// Writes `b` to `path` atomically and reads it back (InputError on failure).
void save_bundle(const Bundle& b, const std::string& path) {
  std::string error;
  if (!write_file_atomic(path, b.bytes.data(), b.bytes.size(), error) ||
      !file_holds(path, b.bytes.data(), b.bytes.size(), error)) {
    throw InputError(error);
  }
}
#endif

// --preset: random-weight bundles (f32 and f16) of the preset and its FFN baseline for the
// database's skeleton and schema. Needs the training library.
void preset_bundles(const cxxopts::ParseResult& args, std::vector<Bundle>& out) {
#ifdef LMM_HAVE_FAISS
  if (!args.count("db")) throw InputError("--preset needs --db X.mmdb (its skeleton and feature schema)");
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_file(args["db"].as<std::string>(), error);
  if (database == nullptr) throw InputError(error);
  const Database& db = *database;
  const std::string name = args["preset"].as<std::string>();
  const std::string baseline = args.count("baseline-preset") ? args["baseline-preset"].as<std::string>()
                                                              : (name.rfind("ffn-", 0) == 0 ? name : "ffn-" + name);
  if (baseline == name) throw InputError("the baseline preset must differ from '" + name + "' (use --baseline-preset)");
  const training::PoseData data = training::make_pose_data(db);
  for (const std::string& preset : {name, baseline}) {
    const training::TrainingConfig config = training::load_training_config(preset, default_config_dir());
    const ModelValues values = training::model_values(training::initial_models(config, data, 1), config, data, false);
    out.push_back(bytes_bundle(preset + " (random weights, f32)", training::bundle_bytes(values, db, false)));
    if (preset == name) out.push_back(bytes_bundle(preset + " (random weights, f16)", training::bundle_bytes(values, db, true)));
  }
  if (args.count("save")) {
    const std::string dir = args["save"].as<std::string>();
    std::filesystem::create_directories(dir);
    save_bundle(out[0], dir + "/" + name + ".lmmw");
    save_bundle(out[1], dir + "/" + name + "-f16.lmmw");
    save_bundle(out[2], dir + "/" + baseline + ".lmmw");
  }
#else
  (void)args;
  (void)out;
  throw InputError("--preset needs lmm-bench built with the training library (-DLMM_BUILD_TRAINING=ON)");
#endif
}

KernelPath parse_path(const std::string& name) {
  if (name == "auto") return KernelPath::Auto;
  if (name == "scalar") return KernelPath::Scalar;
  if (name == "avx2") return KernelPath::Avx2;
  if (name == "avx512") return KernelPath::Avx512;
  throw InputError("--kernels must be auto, scalar, avx2 or avx512, not '" + name + "'");
}

}  // namespace

int bench_nn(int argc, char** argv) {
  cxxopts::Options o("lmm-bench nn",
                     "Single-thread runtime inference cost of model bundles: microseconds per call of decoder, "
                     "stepper and projector, per frame (decoder + stepper + projector / 6), batched per character at "
                     "1, 64 and 1,024 characters, MACs and weight bytes, against an FFN baseline in the same run "
                     "(every bundle timed in each repetition, back to back; speedups are medians of the "
                     "per-repetition ratios).\n"
                     "  lmm-bench nn --model X.lmmw [--half X-f16.lmmw] [--baseline Y.lmmw] [--json PATH]\n"
                     "  lmm-bench nn --preset NAME --db X.mmdb [--baseline-preset NAME] [--save DIR] [--json PATH]");
  o.add_options()
      ("model", "bundle to time", cxxopts::value<std::string>())
      ("half", "with --model: the same model exported with f16 weights, timed alongside (f16_* keys)",
       cxxopts::value<std::string>())
      ("baseline", "baseline bundle (e.g. an FFN export)", cxxopts::value<std::string>())
      ("preset", "time random-weight bundles of this preset and of its FFN baseline", cxxopts::value<std::string>())
      ("baseline-preset", "baseline preset for --preset (default ffn-NAME)", cxxopts::value<std::string>())
      ("db", "database giving skeleton and schema for --preset", cxxopts::value<std::string>())
      ("save", "with --preset: write the generated bundles to this folder", cxxopts::value<std::string>())
      ("calls", "calls per timing repetition", cxxopts::value<int>()->default_value("4000"))
      ("kernels", "auto, scalar, avx2 or avx512", cxxopts::value<std::string>()->default_value("auto"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, nullptr, args, code)) return code;
  if (args.count("model") == args.count("preset")) {
    std::puts(o.help().c_str());
    return 2;
  }
  if (args.count("half") && !args.count("model")) throw InputError("--half needs --model (--preset makes its own f16 bundle)");
  std::vector<Bundle> bundles;  // model, [model f16], [baseline]
  if (args.count("preset")) {
    preset_bundles(args, bundles);
  } else {
    bundles.push_back(read_bundle(args["model"].as<std::string>()));
    if (args.count("half")) bundles.push_back(read_bundle(args["half"].as<std::string>()));
    if (args.count("baseline")) bundles.push_back(read_bundle(args["baseline"].as<std::string>()));
  }
  const bool has_half = args.count("preset") > 0 || args.count("half") > 0;
  const bool has_baseline = bundles.size() > (has_half ? 2u : 1u);
  const KernelPath requested = parse_path(args["kernels"].as<std::string>());
  const KernelPath path = requested == KernelPath::Auto ? available_kernel_paths().back() : requested;
  const int calls = std::max(16, args["calls"].as<int>());
  const std::string flags = LMM_BENCH_FLAGS;
  std::printf("lmm-bench nn: %s, %s kernels, single thread; compiler %s %s, flags '%s'\n", cpu_name().c_str(),
              kernel_path_name(path), LMM_BENCH_COMPILER, __VERSION__, flags.c_str());
  std::vector<Timed> timed(bundles.size());
  for (size_t i = 0; i < bundles.size(); ++i) prepare(bundles[i], path, timed[i]);
  measure_interleaved(timed, has_baseline ? int(timed.size()) - 1 : -1, calls);
  for (const Timed& t : timed) print_report(t.report);
  const NnReport& model = timed.front().report;
  JsonObject json = report_json(model);
  json.text("cpu", cpu_name())
      .text("compiler", std::string(LMM_BENCH_COMPILER) + " " + __VERSION__)
      .text("flags", flags)
      .text("kernels", kernel_path_name(path))
      .number("batched_1024_over_unbatched", model.batched_ratio);
  if (has_half) {
    const NnReport& half = timed[1].report;
    std::printf("f16 bundle: %.2f MB (%.2fx the f32 file), frame %.2f us vs %.2f us f32 (load %.2f ms vs %.2f ms)\n",
                half.file_bytes / 1e6, double(half.file_bytes) / model.file_bytes, half.us_frame(), model.us_frame(),
                half.load_ms, model.load_ms);
    json.number("f16_file_bytes", double(half.file_bytes)).number("f16_us_frame", half.us_frame()).number("f16_load_ms", half.load_ms);
  }
  if (has_baseline) {
    const NnReport& baseline = timed.back().report;
    std::printf("speedup vs baseline '%s' per frame, median (range) of %d interleaved repetitions: %.2fx (%.2f-%.2f)",
                baseline.preset.c_str(), kRepetitions, model.speedup, model.speedup_min, model.speedup_max);
    if (has_half) {
      const NnReport& half = timed[1].report;
      std::printf(", f16 %.2fx (%.2f-%.2f)", half.speedup, half.speedup_min, half.speedup_max);
      json.number("f16_speedup_vs_ffn", half.speedup);
    }
    std::printf("; %.1fx fewer MACs, weights %.2fx\n", baseline.macs_frame() / model.macs_frame(),
                double(model.weight_bytes) / baseline.weight_bytes);
    json.number("ffn_us_frame", baseline.us_frame())
        .number("ffn_us_decoder", baseline.us[0])
        .number("ffn_us_stepper", baseline.us[1])
        .number("ffn_us_projector", baseline.us[2])
        .number("ffn_weight_bytes", double(baseline.weight_bytes))
        .number("speedup_vs_ffn", model.speedup);
  }
  if (args.count("json")) write_json(args["json"].as<std::string>(), json);
  return 0;
}
