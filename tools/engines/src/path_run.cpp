#include "lmm/engines/path_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/engines/strafe_metrics.hpp"
#include "lmm/plot/svg_plot.hpp"

namespace lmm::pipeline {
namespace {

constexpr float kTwoPi = 6.2831853f;

// A cell as a number (nan / inf pass here; place_path rejects them naming the sample).
float parse_float(const std::string& text, const std::string& where) {
  float v = 0.0f;
  if (!parse_number(text, false, v)) throw InputError(where + "'" + text + "' is not a number");
  return v;
}

std::vector<PathSample> load_csv_path(std::istream& in, const std::string& file) {
  std::vector<PathSample> samples;
  std::map<std::string, size_t> column;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = file + ":" + std::to_string(number) + ": ";
    if (line.find('#') != std::string::npos) line.erase(line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> cells = split_csv(line);
    if (column.empty()) {
      column = csv_columns(cells, where);
      for (const char* name : {"t", "x", "z"}) {
        if (!column.count(name)) throw InputError(where + "header lacks column '" + name + "' (expected t,x,z)");
      }
      continue;
    }
    if (cells.size() != column.size()) {
      throw InputError(where + "expected " + std::to_string(column.size()) + " values, found " + std::to_string(cells.size()));
    }
    samples.push_back(PathSample{parse_float(cells[column["t"]], where), parse_float(cells[column["x"]], where),
                                 parse_float(cells[column["z"]], where)});
  }
  return samples;
}

// A minimal reader for [[t, x, z], ...] or {"points": [[t, x, z], ...]}.
class JsonPathReader {
 public:
  JsonPathReader(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  std::vector<PathSample> read() {
    const bool object = peek() == '{';
    if (object) {
      expect('{');
      expect('"');
      if (text_.compare(at_, 7, "points\"") != 0) fail("expected the key \"points\"");
      at_ += 7;
      expect(':');
    }
    std::vector<PathSample> samples;
    expect('[');
    while (peek() != ']') {
      if (!samples.empty()) expect(',');
      expect('[');
      const float t = number();
      expect(',');
      const float x = number();
      expect(',');
      const float z = number();
      expect(']');
      samples.push_back(PathSample{t, x, z});
    }
    expect(']');
    if (object) expect('}');
    if (peek() != '\0') fail("unexpected text after the path");
    return samples;
  }

 private:
  char peek() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  float number() {
    peek();
    char* end = nullptr;
    const float v = std::strtof(text_.c_str() + at_, &end);
    if (end == text_.c_str() + at_) fail("expected a number");
    at_ = size_t(end - text_.c_str());
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    const long line = 1 + std::count(text_.begin(), text_.begin() + long(std::min(at_, text_.size())), '\n');
    throw InputError(file_ + ":" + std::to_string(line) + ": " + what + " (a path is [[t, x, z], ...])");
  }

  const std::string& text_;
  const std::string& file_;
  size_t at_ = 0;
};

// Mean horizontal distance from each of the first `frames` roots to its nearest path point.
double mean_distance_to_path(const Path& path, const std::vector<Vec3>& roots, int frames) {
  double sum = 0.0;
  for (int f = 0; f < frames; ++f) sum += length(Vec3{roots[size_t(f)].x, 0, roots[size_t(f)].z} -
                                                 path.points[size_t(path.nearest(roots[size_t(f)], 0, path.last()))]);
  return frames > 0 ? sum / frames : 0.0;
}

// The facing metrics of a run: per frame whose desired position moves, the angle between the
// root's facing and the intended facing, and whether the frame's clip travels sideways or back.
class FacingTally {
 public:
  explicit FacingTally(const Database& db) : db_(db), travel_(clip_travel(db)) {}
  void add(const PathFollower& follower, const Path& path, const PathRunOptions& options) {
    const int i = follower.desired_index();
    const int next = std::min(i + 1, path.last());
    if (next == i || length(path.points[size_t(next)] - path.points[size_t(i)]) * path.fps < kFacingPathSpeed) return;
    const Vec3 intended = options.fixed_facing ? options.intended_facing : path.tangent(float(i));
    error_sum_ += facing_error_deg(follower.root_rotation(), quat_from_heading(intended));
    const Travel t = travel_[size_t(clip_index(db_, follower.current_frame()))];
    sideways_ += t == Travel::Side || t == Travel::Back ? 1 : 0;
    ++frames_;
  }
  double mean_error() const { return frames_ > 0 ? error_sum_ / frames_ : NAN; }
  double sideways_share() const { return frames_ > 0 ? double(sideways_) / frames_ : NAN; }

 private:
  const Database& db_;
  std::vector<Travel> travel_;
  double error_sum_ = 0.0;
  int frames_ = 0, sideways_ = 0;
};

// Samples along `point_at(s)` for s in [0, length] at speed `speed_at(t)`, 150 Hz.
template <typename PointAt, typename SpeedAt>
std::vector<PathSample> sample_curve(float total, const PointAt& point_at, const SpeedAt& speed_at) {
  std::vector<PathSample> samples;
  float s = 0.0f, t = 0.0f;
  const float dt = 1.0f / 150.0f;
  while (s < total) {
    const Vec3 p = point_at(s);
    samples.push_back(PathSample{t, p.x, p.z});
    s += std::max(0.02f, speed_at(t)) * dt;  // the circle starts from rest: a crawl, not a stop
    t += dt;
  }
  const Vec3 end = point_at(total);
  samples.push_back(PathSample{t, end.x, end.z});
  return samples;
}

// Point at arc length s of the curve starting at the origin with heading(s) radians about +Y
// (0 = +Z), integrated in 1 cm steps.
template <typename Heading>
std::function<Vec3(float)> curve_from_heading(float total, const Heading& heading) {
  const float step = 0.01f;
  std::vector<Vec3> points{Vec3{}};
  for (float s = 0.0f; s < total; s += step) {
    const float h = heading(s + 0.5f * step);
    points.push_back(points.back() + Vec3{std::sin(h), 0.0f, std::cos(h)} * step);
  }
  return [points, step](float s) {
    const float i = std::clamp(s / step, 0.0f, float(points.size() - 1));
    const size_t a = std::min(size_t(i), points.size() - 1), b = std::min(a + 1, points.size() - 1);
    return lerp(points[a], points[b], i - float(a));
  };
}

}  // namespace

std::vector<PathSample> load_path(const std::string& file) {
  const std::string text = read_text_file(file, kMaxTextInputBytes, "path");
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) return JsonPathReader(text, file).read();
  std::istringstream lines(text);
  return load_csv_path(lines, file);
}

double typical_root_speed(const Database& db) {
  std::vector<double> moving;
  for (int f = 0; f < db.frame_count(); ++f) {
    const Vec3 v = db.velocities(f)[0];  // joint 0: its local velocity is its world velocity
    const double speed = length(Vec3{v.x, 0.0f, v.z});
    if (speed > kMovingRootSpeed) moving.push_back(speed);
  }
  return moving.empty() ? kMovingRootSpeed : median(moving);
}

PathMetrics run_path(const std::shared_ptr<const Database>& database, const FeatureSearch& search,
                     const std::vector<PathSample>& raw, const PathRunOptions& options, CharacterTrack& track,
                     Path& path) {
  const Database& db = *database;
  std::vector<PathSample> samples = raw;
  std::string error;
  if (!place_path(samples, options.mode, options.start, error) || !make_path(samples, options.shaping, db.fps(), path, error)) {
    throw InputError(error);
  }
  PathFollower follower;
  if (!follower.init(database, search, options.follower, path, error)) throw InputError(error);
  // A path faster than any motion still completes at the character's own pace: the limit allows
  // the path's length at the data's typical speed, with slack, so slow data gets more time.
  const double duration = double(path.size()) / path.fps;
  const double run_seconds =
      std::max(3.0 * duration, kPaceAllowance * path.arc_length() / typical_root_speed(db)) + options.extra_seconds;
  if (!(options.dt > 0.0f) || !(run_seconds / options.dt <= kMaxRecordedFrames)) {
    throw InputError("a run of up to " + std::to_string(run_seconds) + " s at dt " + std::to_string(options.dt) +
                     " s would record more than " + std::to_string(int(kMaxRecordedFrames)) +
                     " frames: raise the time step or shorten the path");
  }
  const int max_frames = int(std::ceil(run_seconds / options.dt));
  const int tail = int(std::lround(0.5f / options.dt));
  track = CharacterTrack{};
  track.clip.fps = 1.0f / options.dt;
  track.clip.joints = db.joint_count();
  PathMetrics m;
  std::vector<double> lhmm_ms;
  int completed_at = -1;
  std::vector<Vec3> previous;
  FootSlide slide;
  const std::vector<int> legs = leg_joints(db.skeleton().parents, db.contact_joints());
  FacingTally facing(db);
  const std::vector<std::string>& tag_names = db.annotations().tag_names();
  std::vector<double> tag_seconds(tag_names.size(), 0.0);
  for (int f = 0; f < max_frames && (completed_at < 0 || f < completed_at + tail); ++f) {
    const int matches_before = follower.stats().matches;
    const auto start = std::chrono::steady_clock::now();
    follower.update(options.dt);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (follower.stats().matches > matches_before) lhmm_ms.push_back(ms);
    track.clip.positions.insert(track.clip.positions.end(), follower.local_positions().begin(),
                                follower.local_positions().end());
    track.clip.rotations.insert(track.clip.rotations.end(), follower.local_rotations().begin(),
                                follower.local_rotations().end());
    track.root.push_back(follower.root_position());
    track.desired.push_back(path.points[size_t(follower.desired_index())]);
    const std::vector<Vec3>& global = follower.global_positions();
    slide.add(db.contact_joints(), [&](int k) { return follower.in_contact(k); }, previous, global, options.dt);
    m.legs.add(follower.foot_ik_error(), legs, previous, global, options.dt);
    previous = global;
    if (completed_at < 0) {
      facing.add(follower, path, options);
      for (size_t t = 0; t < tag_seconds.size(); ++t) tag_seconds[t] += (follower.current_tags() >> t & 1) * options.dt;
      m.constraint_violations += !follower.constraint_held();
    }
    if (completed_at < 0 && follower.completed()) completed_at = f;
  }
  track.clip.frames = int(track.root.size());
  const int measured = completed_at >= 0 ? completed_at + 1 : track.clip.frames;
  m.avg_distance_m = mean_distance_to_path(path, track.root, measured);
  m.completed = completed_at >= 0;
  m.seconds_to_complete = m.completed ? (completed_at + 1) * options.dt : 0.0;
  m.run_limit_s = run_seconds;
  m.ms_per_lhmm = median(lhmm_ms);
  m.frames = track.clip.frames;
  m.matches = follower.stats().matches;
  m.transitions = follower.stats().transitions;
  m.corner_queries = follower.stats().corner_queries;
  m.knn_calls_per_lhmm = m.matches ? double(follower.stats().knn_calls) / m.matches : 0.0;
  m.foot_slide_cm_per_s = slide.mean();
  m.facing_error_deg = facing.mean_error();
  m.sideways_clip_share = facing.sideways_share();
  m.direction_calls = follower.stats().direction_calls;
  for (size_t t = 0; t < tag_names.size(); ++t) m.tag_seconds.emplace_back(tag_names[t], tag_seconds[t]);
  m.constraint_matches = follower.stats().constraint_matches;
  m.unsatisfied_matches = follower.stats().unsatisfied_matches;
  return m;
}

void write_path_svg(const std::string& file, const Path& path, const CharacterTrack& track, const std::string& title) {
  PlotSpec spec = ground_plane_spec(title);
  PlotSeries path_series = line_series("path (a dot every 0.5 s)", "#d62728", 2.0, ground_points(path.points));
  const int every = std::max(1, int(std::lround(0.5f * path.fps)));
  for (int i = 0; i < path.size(); i += every) path_series.dots.push_back(path_series.line[size_t(i)]);
  spec.series.push_back(path_series);
  spec.series.push_back(line_series("character root", "#1f77b4", 1.5, ground_points(track.root)));
  const RenderedPlot plot = render_plot(spec);
  write_text_atomic(file, svg_document(plot.width, plot.height, plot.body));
}

std::vector<TestPath> test_paths() {
  std::vector<TestPath> paths;
  {
    // Lee, Kwon & Lee 2023 Fig. 9: a circle (radius 4 m here) whose speed rises linearly from 0 to 9 m/s
    // over one and a half laps.
    const float radius = 4.0f, total = 1.5f * kTwoPi * radius;
    const float duration = 2.0f * total / 9.0f, acceleration = 9.0f / duration;
    auto point = [&](float s) {
      const float a = s / radius;
      return Vec3{radius * std::sin(a), 0.0f, radius - radius * std::cos(a)};
    };
    paths.push_back({"circle-accelerating", sample_curve(total, point, [&](float t) { return acceleration * t; })});
  }
  {
    // Sharp corners: 6 m legs turning 100 degrees right, 120 left, then 90 right, at 1.6 m/s.
    auto heading = [](float s) {
      const float turns[] = {0.0f, -100.0f, 20.0f, -70.0f};
      return turns[std::min(3, int(s / 6.0f))] * kTwoPi / 360.0f;
    };
    paths.push_back({"sharp-corners", sample_curve(24.0f, curve_from_heading(24.0f, heading), [](float) { return 1.6f; })});
  }
  {
    // An S-curve: a quarter circle of 5 m radius to the left, then one to the right, at 2.2 m/s.
    const float radius = 5.0f, arc = 0.25f * kTwoPi * radius;
    auto heading = [&](float s) { return s <= arc ? s / radius : (2.0f * arc - s) / radius; };
    paths.push_back({"s-curve", sample_curve(2.0f * arc, curve_from_heading(2.0f * arc, heading), [](float) { return 2.2f; })});
  }
  {
    // Hand-drawn: drawn fast (about 10 m/s) with a wobbling direction, 2 cm of jitter and
    // irregular event times, played at speed scale 0.2 (Lee, Kwon & Lee 2023 Sec. V-A).
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    TestPath hand{"hand-drawn", {}, 0.2f};
    Vec3 p;
    float heading = 0.3f, t = 0.0f;
    for (int i = 0; i < 400; ++i) {
      hand.samples.push_back(PathSample{t, p.x + 0.02f * (unit(rng) - 0.5f), p.z + 0.02f * (unit(rng) - 0.5f)});
      const float dt = 0.004f + 0.012f * unit(rng);
      heading += 0.9f * std::sin(0.02f * float(i)) * dt * 6.0f;
      p = p + Vec3{std::sin(heading), 0.0f, std::cos(heading)} * (10.0f * dt);
      t += dt;
    }
    paths.push_back(hand);
  }
  return paths;
}

std::vector<TestPath> facing_test_paths() {
  auto line = [](Vec3 direction, float metres, float speed) {
    return sample_curve(metres, [=](float s) { return direction * s; }, [=](float) { return speed; });
  };
  std::vector<TestPath> paths;
  TestPath backward{"backward-walk", line(Vec3{0.0f, 0.0f, -1.0f}, 4.0f, 0.8f)};
  backward.fixed_facing = true, backward.start_facing_deg = 180.0f, backward.joystick_deg = 180.0f;
  paths.push_back(backward);
  TestPath shuffle{"sideways-shuffle", line(Vec3{1.0f, 0.0f, 0.0f}, 4.0f, 0.5f)};
  shuffle.fixed_facing = true, shuffle.start_facing_deg = -90.0f, shuffle.joystick_deg = -90.0f;
  paths.push_back(shuffle);
  // Forward 3 m, then straight back: 1.1 m/s out, 0.8 m/s back.
  TestPath back_and_forth{"back-and-forth", line(Vec3{0.0f, 0.0f, 1.0f}, 3.0f, 1.1f)};
  back_and_forth.fixed_facing = true;
  const float turn_time = back_and_forth.samples.back().t;
  for (const PathSample& s : line(Vec3{0.0f, 0.0f, -1.0f}, 3.0f, 0.8f)) {
    if (s.t > 0.0f) back_and_forth.samples.push_back(PathSample{turn_time + s.t, s.x, 3.0f + s.z});
  }
  paths.push_back(back_and_forth);
  return paths;
}

}  // namespace lmm::pipeline
