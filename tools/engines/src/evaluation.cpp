#include "lmm/engines/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/engines/gameplay.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/import/config.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/plot/svg_plot.hpp"
#include "lmm/asset/pose_vector.hpp"
#include "lmm/eval/pose_kernels.hpp"

namespace lmm::pipeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kReportedHorizons[] = {0.5, 1.0, 2.0, 4.0};  // s
constexpr double kCurveStep = 0.25;                            // s between rollout curve points
constexpr double kRadToDeg = 57.29577951308232;
constexpr int kConstraintDrawsPerQuery = 16;  // random constraints tried per query before one allows a frame

// Model-space joint positions of pose vectors (the simulation bone at the origin).
class PoseKinematics {
 public:
  explicit PoseKinematics(const Model& model)
      : layout_(model.pose_layout()), parents_(model.skeleton().parents), local_p_(parents_.size()),
        global_p_(parents_.size()), local_r_(parents_.size()), global_r_(parents_.size()) {}
  // Runs forward kinematics on `pose`; positions() and rotations() then hold the result.
  void run(const float* pose) {
    pose_from_vector(layout_, pose, local_p_.data(), local_r_.data());
    forward_kinematics(parents_.data(), int(parents_.size()), local_p_.data(), local_r_.data(), global_p_.data(),
                       global_r_.data());
  }
  const std::vector<Vec3>& positions() const { return global_p_; }
  const std::vector<Quat>& local_rotations() const { return local_r_; }

 private:
  PoseVectorLayout layout_;
  std::vector<int> parents_;
  std::vector<Vec3> local_p_, global_p_;
  std::vector<Quat> local_r_, global_r_;
};

// Mean joint distance (cm) over joints 1.. of two model-space poses.
double mean_joint_error_cm(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double sum = 0.0;
  for (size_t j = 1; j < a.size(); ++j) sum += 100.0 * length(a[j] - b[j]);
  return sum / double(a.size() - 1);
}

double angle_between_deg(Quat a, Quat b) {
  return 2.0 * std::acos(std::min(1.0f, std::fabs(dot(a, b)))) * kRadToDeg;
}

double percentile(std::vector<float>& values, double q) {
  if (values.empty()) return kNaN;
  const size_t k = std::min(values.size() - 1, size_t(std::ceil(q * double(values.size()))) - 1);
  std::nth_element(values.begin(), values.begin() + long(k), values.end());
  return values[k];
}

// Everything the metrics share: the evaluator, the encoder latent of every frame.
struct EvalContext {
  std::shared_ptr<const Model> bundle;
  std::shared_ptr<const Database> database;
  const Model& model;  // *bundle
  const Database& db;  // *database
  const EvalOptions& options;
  ModelEvaluator evaluator;
  FeatureSearch search;        // exact nearest frames (projector labels) and the database controller
  std::vector<float> latents;  // frame_count x latent
  std::vector<TagMask> tags;   // per frame, the model's tags (bit t: model tag t) the frame has
  std::vector<int> tag_bits;   // per model tag, its bit in the database
  std::vector<std::vector<float>> seconds_left;  // per action tag of the model, run_seconds_left

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  // State (latent ++ normalised features ++ the model's tags as 0/1) of database frame f.
  void state_of(int f, float* out) const {
    const int l = model.latent(), d = model.feature_dims();
    std::copy(latents.begin() + long(f) * l, latents.begin() + long(f + 1) * l, out);
    std::copy(db.features(f), db.features(f) + d, out + l);
    const int t_count = model.tag_count();
    for (int t = 0; t < t_count; ++t) out[l + d + t] = (tags[size_t(f)] >> t & 1) != 0 ? 1.0f : 0.0f;
    for (size_t a = 0; a < seconds_left.size(); ++a) out[l + d + t_count + int(a)] = seconds_left[a][size_t(f)];
  }
  // A constraint over the model's tags as one over the database's.
  TagConstraint database_constraint(const TagConstraint& c) const {
    TagConstraint out;
    for (size_t t = 0; t < tag_bits.size(); ++t) {
      const TagMask from = TagMask(1) << t, to = TagMask(1) << tag_bits[t];
      out.require_all |= (c.require_all & from) != 0 ? to : 0;
      out.require_any |= (c.require_any & from) != 0 ? to : 0;
      out.exclude |= (c.exclude & from) != 0 ? to : 0;
    }
    return out;
  }
};

// Encodes every frame; reports decoder position, rotation and contact errors.
void decoder_metrics(EvalContext& c, Evaluation& e) {
  const Model& m = c.model;
  const PoseVectorLayout layout = m.pose_layout();
  const int n = c.db.frame_count(), l = m.latent(), joints = layout.joints;
  PoseKinematics truth(m), decoded(m);
  std::vector<float> pose(size_t(layout.size())), input(size_t(m.encoder().in)), state(size_t(m.state_size())),
      out(size_t(layout.size()));
  std::vector<float> errors;
  errors.reserve(size_t(n) * size_t(joints));
  double rotation_sum = 0.0;
  long contact_right = 0;
  c.latents.assign(size_t(n) * size_t(l), 0.0f);
  for (int f = 0; f < n; ++f) {
    database_pose_vector(c.db, f, pose.data());
    truth.run(pose.data());
    std::copy(pose.begin(), pose.end(), input.begin());
    for (int j = 0; j < joints; ++j) {
      const Vec3 p = truth.positions()[size_t(j + 1)];
      float* slot = input.data() + layout.size() + 3 * j;
      slot[0] = p.x, slot[1] = p.y, slot[2] = p.z;
    }
    c.evaluator.encode(input.data(), c.latents.data() + size_t(f) * size_t(l));
    c.state_of(f, state.data());
    c.evaluator.decode(state.data(), out.data());
    decoded.run(out.data());
    for (int j = 1; j <= joints; ++j) {
      errors.push_back(100.0f * length(decoded.positions()[size_t(j)] - truth.positions()[size_t(j)]));
      rotation_sum += angle_between_deg(decoded.local_rotations()[size_t(j)], truth.local_rotations()[size_t(j)]);
    }
    for (int k = 0; k < layout.contacts; ++k) {
      contact_right += (out[size_t(layout.contact() + k)] > 0.5f) == (pose[size_t(layout.contact() + k)] > 0.5f);
    }
  }
  double sum = 0.0;
  for (float v : errors) sum += v;
  e.metrics.emplace_back("decoder_mean_cm", sum / double(errors.size()));
  e.metrics.emplace_back("decoder_p95_cm", percentile(errors, 0.95));
  e.metrics.emplace_back("rotation_deg", rotation_sum / double(errors.size()));
  e.metrics.emplace_back("contact_accuracy",
                         layout.contacts ? double(contact_right) / (double(n) * layout.contacts) : kNaN);
  c.log("decoder: " + std::to_string(n) + " frames reconstructed");
}

// Share of the rows routed to each expert of `net` (top-k routes count once each) for every row
// input(f, buffer) gives, f in [0, rows), as a multiple of uniform use (top_k / experts); empty
// for a plain MLP.
template <typename Input>
std::vector<double> expert_use(EvalContext& c, const NetworkWeights& net, int rows, const Input& input) {
  if (net.experts == 0) return {};
  std::vector<double> use(size_t(net.experts), 0.0);
  std::vector<float> row(size_t(net.in));
  int32_t experts[kMaxTopK];
  float weights[kMaxTopK];
  for (int f = 0; f < rows; ++f) {
    const int k = c.evaluator.route_row(net, input(f, row.data()), experts, weights);
    for (int j = 0; j < k; ++j) use[size_t(experts[j])] += 1.0;
  }
  const double uniform = double(rows) * net.top_k / net.experts;
  for (double& u : use) u /= uniform;
  return use;
}

// Expert use of the decoder and stepper (on every frame's state) and the projector (on every
// frame's features) over the whole database: the least and most used expert as multiples of
// uniform use (issue 20's floor; 0 = an expert no frame reaches).
void expert_use_metrics(EvalContext& c, Evaluation& e) {
  const Model& m = c.model;
  const int n = c.db.frame_count();
  const auto state = [&](int f, float* buffer) {
    c.state_of(f, buffer);
    return static_cast<const float*>(buffer);
  };
  const auto features = [&](int f, float*) { return c.db.features(f); };
  const std::pair<const char*, std::vector<double>> nets[] = {{"decoder", expert_use(c, m.decoder(), n, state)},
                                                              {"stepper", expert_use(c, m.stepper(), n, state)},
                                                              {"projector", expert_use(c, m.projector(), n, features)}};
  for (const auto& [name, use] : nets) {
    if (use.empty()) continue;
    const auto [least, most] = std::minmax_element(use.begin(), use.end());
    e.metrics.emplace_back(std::string(name) + "_expert_use_min", *least);
    e.metrics.emplace_back(std::string(name) + "_expert_use_max", *most);
  }
}

// Frames whose clip continues for at least `length` more frames.
std::vector<int> rollout_candidates(const Database& db, int length) {
  std::vector<int> starts;
  for (const DatabaseRange& r : db.ranges()) {
    for (int f = r.start; f + length < r.stop; ++f) starts.push_back(f);
  }
  return starts;
}

// Mean decoded joint error (cm) at every curve point of rollouts from `starts`.
std::vector<double> rollout_errors(EvalContext& c, const std::vector<int>& starts, float noise, int curve_points,
                                   std::mt19937& rng) {
  const Model& m = c.model;
  const int size = m.state_size(), rows = int(starts.size());
  const double fps = m.fps();
  std::vector<float> states(size_t(rows) * size_t(size)), poses(size_t(rows) * size_t(m.pose_layout().size())),
      truth_pose(size_t(m.pose_layout().size()));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int r = 0; r < rows; ++r) {
    float* s = states.data() + size_t(r) * size_t(size);
    c.state_of(starts[size_t(r)], s);
    for (int i = 0; i < size; ++i) s[i] += noise * m.state_std()[i] * normal(rng);
  }
  PoseKinematics truth(m), decoded(m);
  std::vector<double> errors;
  int frame = 0;
  for (int p = 1; p <= curve_points; ++p) {
    const int target = int(std::lround(p * kCurveStep * fps));
    for (; frame < target; ++frame) c.evaluator.step_batch(states.data(), rows, states.data());
    c.evaluator.decode_batch(states.data(), rows, poses.data());
    double sum = 0.0;
    for (int r = 0; r < rows; ++r) {
      database_pose_vector(c.db, starts[size_t(r)] + frame, truth_pose.data());
      truth.run(truth_pose.data());
      decoded.run(poses.data() + size_t(r) * size_t(m.pose_layout().size()));
      sum += mean_joint_error_cm(decoded.positions(), truth.positions());
    }
    errors.push_back(sum / rows);
  }
  return errors;
}

// Stepper rollouts from seeded random starts, clean and noisy, along the horizon.
void stepper_metrics(EvalContext& c, Evaluation& e) {
  const double fps = c.model.fps();
  int points = int(std::lround(kReportedHorizons[3] / kCurveStep));
  std::vector<int> candidates;
  for (; points > 0; --points) {
    candidates = rollout_candidates(c.db, int(std::lround(points * kCurveStep * fps)));
    if (!candidates.empty()) break;
  }
  if (points < int(std::lround(kReportedHorizons[3] / kCurveStep))) {
    c.log("stepper: no clip is long enough for " + std::to_string(kReportedHorizons[3]) + " s rollouts; the curve stops at " +
          std::to_string(points * kCurveStep) + " s");
  }
  std::mt19937 rng(c.options.seed);
  std::vector<int> starts;
  for (int i = 0; i < c.options.rollout_starts && !candidates.empty(); ++i) {
    starts.push_back(candidates[rng() % candidates.size()]);
  }
  RolloutCurve& curve = e.curve;
  if (!starts.empty()) {
    curve.clean_cm = rollout_errors(c, starts, 0.0f, points, rng);
    curve.noisy_cm = rollout_errors(c, starts, c.options.start_noise, points, rng);
  }
  for (int p = 1; p <= points; ++p) curve.seconds.push_back(p * kCurveStep);
  const std::pair<const char*, const std::vector<double>*> series[] = {{"stepper_cm_at_", &curve.clean_cm},
                                                                       {"stepper_noisy_cm_at_", &curve.noisy_cm}};
  for (const auto& [prefix, values] : series) {
    for (double h : kReportedHorizons) {
      const size_t index = size_t(std::lround(h / kCurveStep)) - 1;
      char key[64];
      std::snprintf(key, sizeof key, "%s%gs", prefix, h);
      e.metrics.emplace_back(key, index < values->size() ? (*values)[index] : kNaN);
    }
  }
  c.log("stepper: " + std::to_string(starts.size()) + " rollouts, clean and noisy");
}

double distance(const float* a, const float* b, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += double(a[i] - b[i]) * double(a[i] - b[i]);
  return std::sqrt(sum);
}

// Projector retrieval on noisy queries against the exact nearest neighbour; with `constrained`
// (a bundle with tags) each query under a random constraint that allows some frame, against the
// exact nearest allowed frame, also counting the projections whose tags satisfy it.
void projector_metrics(EvalContext& c, bool constrained, Evaluation& e) {
  const Model& m = c.model;
  const int d = m.feature_dims(), l = m.latent();
  std::mt19937 rng(c.options.seed + (constrained ? 2 : 1));
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> query(static_cast<size_t>(m.projector_input_size())), state(static_cast<size_t>(m.state_size()));
  double ours = 0.0, exact = 0.0, latent_error = 0.0;
  long satisfied = 0;
  // Per kind of constraint (require, exclude, require any, require and exclude): queries, satisfied.
  long kind_count[4] = {0, 0, 0, 0}, kind_satisfied[4] = {0, 0, 0, 0};
  SearchScratch scratch = c.search.make_scratch();
  SearchResult result;
  const int queries = c.options.projector_queries;
  const std::vector<TagConstraint> draws =
      constrained ? random_tag_constraints(m.tag_count(), queries * kConstraintDrawsPerQuery, c.options.seed) : std::vector<TagConstraint>{};
  for (int q = 0; q < queries; ++q) {
    const int f = int(rng() % uint32_t(c.db.frame_count()));
    const float scale = unit(rng);
    for (int i = 0; i < d; ++i) query[size_t(i)] = c.db.features(f)[i] + scale * normal(rng);
    // Exact: no transition cost, no excluded clip ends or neighbours; the first draw that allows a frame.
    SearchParams exact_params{0.0f, 0, 0};
    TagConstraint constraint;
    int found = 0;
    for (int k = 0; found == 0 && k < (constrained ? kConstraintDrawsPerQuery : 1); ++k) {
      if (constrained) constraint = draws[size_t(q * kConstraintDrawsPerQuery + k)];
      exact_params.constraint = c.database_constraint(constraint);
      found = c.search.search(query.data(), -1, exact_params, &result, 1, scratch);
    }
    const int nearest = found == 1 ? result.frame : 0;
    m.constraint_code(constraint, 0, query.data() + d);
    c.evaluator.project(query.data(), state.data());
    const bool held = constraint.allows(m.state_tags(state.data()));
    satisfied += held ? 1 : 0;
    const int kind = constraint.require_any != 0 ? 2 : constraint.require_all != 0 ? (constraint.exclude != 0 ? 3 : 0) : 1;
    kind_count[kind] += constrained && !constraint.allows_all() ? 1 : 0;
    kind_satisfied[kind] += constrained && !constraint.allows_all() && held ? 1 : 0;
    ours += distance(state.data() + l, query.data(), d);
    exact += distance(c.db.features(nearest), query.data(), d);
    for (int i = 0; i < l; ++i) latent_error += std::fabs(state[size_t(i)] - c.latents[size_t(nearest) * size_t(l) + size_t(i)]);
  }
  const std::string suffix = constrained ? "_constrained" : "";
  e.metrics.emplace_back("projector_feature_error" + suffix, ours / exact);
  e.metrics.emplace_back("projector_latent_error" + suffix, latent_error / (double(queries) * l));
  if (constrained) e.metrics.emplace_back("projector_constraint_agreement", double(satisfied) / double(queries));
  const char* kinds[4] = {"require", "exclude", "require_any", "require_exclude"};
  for (int k = 0; constrained && k < 4; ++k) {
    e.metrics.emplace_back(std::string("projector_constraint_agreement_") + kinds[k],
                           kind_count[k] > 0 ? double(kind_satisfied[k]) / double(kind_count[k]) : kNaN);
  }
  c.log("projector: " + std::to_string(queries) + " noisy queries against exact nearest " +
        (constrained ? "allowed frames under random tag constraints" : "neighbours"));
}

// Per frame of the database, the model's tags it has (EvalContext::tags and tag_bits). Throws
// InputError naming a model tag the database lacks.
void read_frame_tags(EvalContext& c) {
  const std::vector<std::string>& names = c.model.tags().names();
  std::string error;
  if (!frame_tags_over(c.db, names, c.tags, error)) throw InputError("the model's state carries tags the database lacks: " + error);
  for (const std::string& name : names) c.tag_bits.push_back(c.db.annotations().tag(name));
  for (const int t : c.model.action_tag_order()) {
    c.seconds_left.push_back(run_seconds_left(c.db, TagMask(1) << c.tag_bits[size_t(t)]));
  }
}

// Mean horizontal distance (m) between two controllers' roots over every frame.
double root_difference(const std::vector<CharacterTrack>& a, const std::vector<CharacterTrack>& b) {
  double sum = 0.0;
  long count = 0;
  for (size_t c = 0; c < a.size(); ++c) {
    for (size_t f = 0; f < a[c].root.size(); ++f) {
      const Vec3 delta = a[c].root[f] - b[c].root[f];
      sum += std::sqrt(delta.x * delta.x + delta.z * delta.z);
      ++count;
    }
  }
  return count ? sum / double(count) : kNaN;
}

// The strafing and forward-locomotion errors of one controller's run (keys after `prefix`);
// a kind of request the scripts never made adds no keys.
void request_metrics(const std::string& prefix, const SimMetrics& m, Evaluation& e) {
  for (const auto& [kind, r] : {std::make_pair("forward", m.forward), std::make_pair("strafe", m.strafe)}) {
    if (r.frames == 0) continue;
    e.metrics.emplace_back(prefix + kind + "_facing_error_deg", r.facing_error_deg);
    e.metrics.emplace_back(prefix + kind + "_velocity_error_m_s", r.velocity_error_m_s);
    e.metrics.emplace_back(prefix + kind + "_speed_ratio", r.speed_ratio);
  }
}

// The learned and the database controller on the same seeded random input.
void controller_metrics(EvalContext& c, Evaluation& e) {
  std::vector<InputScript> scripts;
  for (const std::string& file : c.options.input_scripts) scripts.push_back(load_input_script(file));
  const int random_scripts = c.options.input_scripts.empty() ? c.options.controller_scripts : 0;
  for (int i = 0; i < random_scripts; ++i) {
    scripts.push_back(random_input_script(c.options.seed + uint32_t(i), c.options.controller_seconds,
                                          c.options.random_strafe));
  }
  const float dt = 1.0f / 60.0f;
  // Both controllers steer with the same tunables: the database's speeds unless a config says otherwise.
  CharacterSettings database_settings;
  database_settings.controller = resolve_controller(c.options.controller_config, c.database->speeds(), "the database");
  database_settings.speeds_from_data = false;
  LearnedSettings learned_settings;
  static_cast<SteeringSettings&>(learned_settings) = database_settings;
  std::vector<CharacterTrack> database_tracks, learned_tracks;
  const SimMetrics db = run_simulation(c.database, c.search, database_settings, scripts, c.options.controller_seconds,
                                       dt, database_tracks);
  const SimMetrics learned = run_simulation(c.bundle, learned_settings, scripts, c.options.controller_seconds, dt,
                                            learned_tracks);
  e.metrics.emplace_back("foot_slide_cm_per_s", learned.foot_slide_cm_per_s);
  e.metrics.emplace_back("database_foot_slide_cm_per_s", db.foot_slide_cm_per_s);
  if (!(db.foot_slide_cm_per_s > 0.0)) c.log("controllers: the database controller never slid in contact; foot_slide_ratio is undefined");
  e.metrics.emplace_back("foot_slide_ratio", db.foot_slide_cm_per_s > 0.0 ? learned.foot_slide_cm_per_s / db.foot_slide_cm_per_s : kNaN);
  e.metrics.emplace_back("jitter", learned.jitter);
  e.metrics.emplace_back("database_jitter", db.jitter);
  e.metrics.emplace_back("root_difference_m", root_difference(learned_tracks, database_tracks));
  e.metrics.emplace_back("trajectory_error_m", learned.trajectory_error_m);
  e.metrics.emplace_back("database_trajectory_error_m", db.trajectory_error_m);
  e.metrics.emplace_back("nan_frames", learned.nan_frames);
  e.metrics.emplace_back("still_frames", learned.still_frames);
  e.metrics.emplace_back("us_per_update", learned.us_per_update);
  e.metrics.emplace_back("database_us_per_update", db.us_per_update);
  request_metrics("", learned, e);
  request_metrics("database_", db, e);
  if (db.strafe.frames > 0) e.metrics.emplace_back("database_strafe_clip_share", db.strafe_clip_share);
  c.log("controllers: " + std::to_string(scripts.size()) + " input scripts x " +
        std::to_string(c.options.controller_seconds) + " s on both");
}

}  // namespace

double Evaluation::value(const std::string& key) const {
  for (const auto& [name, v] : metrics) {
    if (name == key) return v;
  }
  return kNaN;
}

Evaluation evaluate_model(const std::shared_ptr<const Model>& bundle, const std::shared_ptr<const Database>& database,
                          const EvalOptions& options) {
  const Model& model = *bundle;
  const Database& db = *database;
  std::string error;
  if (!model_matches_database(model, db, error)) throw InputError("model does not match the database: " + error);
  if (!model.has_encoder()) {
    throw InputError("the bundle has no encoder; export it with 'lmm-export --with-encoder' to evaluate the decoder");
  }
  EvalContext c{bundle, database, model, db, options, {}, {}, {}, {}, {}, {}};
  read_frame_tags(c);
  if (!c.evaluator.init(bundle, 1024, KernelPath::Auto, error) || !c.search.build(database, error)) {
    throw InputError(error);
  }
  Evaluation e;
  decoder_metrics(c, e);
  expert_use_metrics(c, e);
  stepper_metrics(c, e);
  projector_metrics(c, false, e);
  if (model.tag_count() > 0) projector_metrics(c, true, e);
  controller_metrics(c, e);
  return e;
}

std::string format_evaluation(const Evaluation& model, const Evaluation* baseline) {
  std::string text = baseline ? "metric                              model     baseline\n"
                              : "metric                              model\n";
  char row[160];
  for (const auto& [key, value] : model.metrics) {
    if (baseline) {
      std::snprintf(row, sizeof row, "%-32s %10.4g %12.4g\n", key.c_str(), value, baseline->value(key));
    } else {
      std::snprintf(row, sizeof row, "%-32s %10.4g\n", key.c_str(), value);
    }
    text += row;
  }
  return text;
}

void write_rollout_svg(const std::string& path, const Evaluation& model, const std::string& model_name,
                       const Evaluation* baseline, const std::string& baseline_name) {
  PlotSpec spec;
  spec.title = "stepper rollout: mean joint error vs horizon";
  spec.x = PlotAxis{"horizon", "s", false, true, 0.25};
  spec.y = PlotAxis{"mean joint error", "cm", false, true, 1.0};
  const std::pair<const Evaluation*, std::pair<std::string, const char*>> lines[] = {
      {&model, {model_name, "#1f77b4"}}, {baseline, {baseline_name, "#ff7f0e"}}};
  for (const auto& [e, style] : lines) {
    if (e == nullptr) continue;
    for (const auto* v : {&e->curve.clean_cm, &e->curve.noisy_cm}) {
      const bool noisy = v == &e->curve.noisy_cm;
      std::vector<PlotPoint> curve;
      for (size_t i = 0; i < v->size() && i < e->curve.seconds.size(); ++i) {
        curve.push_back({e->curve.seconds[i], (*v)[i]});
      }
      spec.series.push_back(
          line_series(style.first + (noisy ? ", noisy starts" : ", clean starts"), style.second, 2.0, curve, noisy));
    }
  }
  const RenderedPlot plot = render_plot(spec);
  write_text_atomic(path, svg_document(plot.width, plot.height, plot.body));
}

std::vector<std::string> threshold_failures(const Evaluation& evaluation, const std::vector<Threshold>& thresholds) {
  std::vector<std::string> failures;
  for (const Threshold& t : thresholds) {
    const double v = evaluation.value(t.metric);
    const bool ok = std::isfinite(v) && (t.is_max ? v <= t.limit : v >= t.limit);
    if (ok) continue;
    char line[200];
    std::snprintf(line, sizeof line, "%s = %.5g, must be %s %.5g", t.metric.c_str(), v, t.is_max ? "<=" : ">=", t.limit);
    failures.push_back(line);
  }
  return failures;
}

}  // namespace lmm::pipeline
