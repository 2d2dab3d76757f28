#include "lmm/character/path_following.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmm/asset/features.hpp"
#include "lmm/eval/direction_evaluator.hpp"
#include "lmm/motion/stages.hpp"

namespace lmm {
namespace {

constexpr float kDegToRad = 0.017453292f;
constexpr float kLn2 = 0.69314718f;
constexpr int kFacingHistory = 1024;  // root facings kept for DirectionNet's window (one per update)

Vec3 point_of(const PathSample& s) { return Vec3{s.x, 0.0f, s.z}; }

// A frame count given at one rate, at another (`ratio` = new rate / given rate).
int at_rate(int frames, float ratio) { return int(std::clamp(std::round(double(frames) * ratio), 0.0, 1e9)); }

// Mean speed (m/s) over the first second of the samples (or all of them when shorter).
float first_second_speed(const std::vector<PathSample>& samples) {
  float length_sum = 0.0f, duration = 0.0f;
  for (size_t i = 1; i < samples.size() && samples[i - 1].t - samples[0].t < 1.0f; ++i) {
    length_sum += length(point_of(samples[i]) - point_of(samples[i - 1]));
    duration = samples[i].t - samples[0].t;
  }
  return duration > 0.0f ? length_sum / duration : 0.0f;
}

std::string sample_name(size_t i) { return "path sample " + std::to_string(i + 1); }

// Linear resampling of `samples` (playback time = (t - t0) / scale) at `fps`.
std::vector<Vec3> resample(const std::vector<PathSample>& samples, float scale, float fps, int count) {
  std::vector<Vec3> points(static_cast<size_t>(count));
  size_t segment = 1;
  for (int f = 0; f < count; ++f) {
    const double t = samples[0].t + double(f) / fps * scale;
    while (segment + 1 < samples.size() && samples[segment].t < t) ++segment;
    const PathSample& a = samples[segment - 1];
    const PathSample& b = samples[segment];
    const float u = float(std::clamp((t - a.t) / double(b.t - a.t), 0.0, 1.0));
    points[size_t(f)] = lerp(point_of(a), point_of(b), u);
  }
  return points;
}

// Gaussian smoothing; the path is extended past both ends along its end directions first,
// so the ends keep their place and the path its length (Lee, Kwon & Lee 2023 Sec. V-B extrapolates end
// points for the same reason).
std::vector<Vec3> smooth_points(const std::vector<Vec3>& points, float sigma, int half) {
  const int n = int(points.size());
  std::vector<float> kernel(size_t(2 * half + 1));
  float total = 0.0f;
  for (int i = -half; i <= half; ++i) total += kernel[size_t(i + half)] = std::exp(-0.5f * i * i / (sigma * sigma));
  for (float& w : kernel) w /= total;
  const Vec3 head = points[0] - points[1], tail = points[size_t(n - 1)] - points[size_t(n - 2)];
  auto extended = [&](int i) {
    if (i < 0) return points[0] + head * float(-i);
    if (i >= n) return points[size_t(n - 1)] + tail * float(i - n + 1);
    return points[size_t(i)];
  };
  std::vector<Vec3> out(points.size());
  for (int i = 0; i < n; ++i) {
    Vec3 sum;
    for (int o = -half; o <= half; ++o) sum = sum + extended(i + o) * kernel[size_t(o + half)];
    out[size_t(i)] = sum;
  }
  return out;
}

}  // namespace

Vec3 Path::at(float index) const {
  const float i = std::clamp(index, 0.0f, float(last()));
  const int a = std::min(int(i), last());
  const int b = std::min(a + 1, last());
  return lerp(points[size_t(a)], points[size_t(b)], i - float(a));
}

float Path::arc_length() const {
  double sum = 0.0;
  for (size_t i = 1; i < points.size(); ++i) sum += length(points[i] - points[i - 1]);
  return float(sum);
}

Vec3 Path::tangent(float index) const {
  const int start = std::clamp(int(index), 0, std::max(0, last() - 1));
  // Paused stretches have no direction: look forward, then back, for a moving segment.
  for (int i = start; i < last(); ++i) {
    const Vec3 d = points[size_t(i + 1)] - points[size_t(i)];
    if (length(d) > 1e-6f) return normalize(d);
  }
  for (int i = start; i > 0; --i) {
    const Vec3 d = points[size_t(i)] - points[size_t(i - 1)];
    if (length(d) > 1e-6f) return normalize(d);
  }
  return Vec3{0.0f, 0.0f, 1.0f};
}

bool Path::paused(int index) const {
  if (index < 0 || index >= last()) return false;
  return length(on_ground(points[size_t(index + 1)] - points[size_t(index)])) * fps < kPausedPathSpeed;
}

int Path::wait_out(int from, int points) const {
  int i = from;
  while (i < from + points && paused(i)) ++i;
  return i;
}

int Path::until_pause(int from, int to) const {
  int i = from;
  while (i < to && !paused(i)) ++i;
  return i;
}

int Path::nearest(Vec3 p, int first, int last_index) const {
  first = std::clamp(first, 0, last());
  last_index = std::clamp(last_index, first, last());
  int best = first;
  float best_distance = std::numeric_limits<float>::max();
  for (int i = first; i <= last_index; ++i) {
    const Vec3 d = on_ground(points[size_t(i)] - p);
    const float distance = dot(d, d);
    if (distance < best_distance) best_distance = distance, best = i;
  }
  return best;
}

namespace {

// "at (x, z)" for messages.
std::string place_name(Vec3 p) { return "at (" + std::to_string(p.x) + ", " + std::to_string(p.z) + ")"; }

// False with a message when every sample lies within kMinPathExtent of the first: such a path
// goes nowhere, so it has no direction to face or end to reach (repeated points among moving
// ones are a pause and pass).
bool check_path_moves(const std::vector<PathSample>& samples, std::string& error) {
  const Vec3 first = point_of(samples[0]);
  for (const PathSample& s : samples) {
    if (length(point_of(s) - first) >= kMinPathExtent) return true;
  }
  error = "the path does not move: all " + std::to_string(samples.size()) + " samples are " + place_name(first) +
          " (within " + std::to_string(int(std::lround(kMinPathExtent * 1000.0f))) +
          " mm); a path needs samples at two places";
  return false;
}

}  // namespace

bool check_path_samples(const std::vector<PathSample>& samples, std::string& error) {
  if (samples.size() < 2) {
    error = "the path has " + std::to_string(samples.size()) + " sample(s); at least two are needed";
    return false;
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const PathSample& s = samples[i];
    if (!std::isfinite(s.t) || !(std::fabs(s.x) <= kMaxPathCoordinate) || !(std::fabs(s.z) <= kMaxPathCoordinate)) {
      error = sample_name(i) + ": time or coordinate is not a finite number (coordinates within +-" +
              std::to_string(int(kMaxPathCoordinate)) + " m)";
      return false;
    }
    if (i > 0 && !(s.t > samples[i - 1].t)) {
      error = sample_name(i) + ": time " + std::to_string(s.t) + " s is not after the previous sample's " +
              std::to_string(samples[i - 1].t) + " s (times must increase)";
      return false;
    }
  }
  return check_path_moves(samples, error);
}

bool place_path(std::vector<PathSample>& samples, PathMode mode, Vec3 start, std::string& error) {
  if (!check_path_samples(samples, error)) return false;
  const Vec3 first = point_of(samples[0]);
  if (mode == PathMode::Local) {
    for (PathSample& s : samples) s.x += start.x - first.x, s.z += start.z - first.z;
    return true;
  }
  // Global: walk from the character to the path's start at the path's first-second speed
  // (a standing start: 1 m/s).
  const float distance = length(on_ground(first - start));
  if (distance < 1e-3f) return true;
  const float speed = std::max(first_second_speed(samples), 0.0f);
  const float lead = distance / (speed > 0.05f ? speed : 1.0f);
  for (PathSample& s : samples) s.t += lead;
  samples.insert(samples.begin(), PathSample{samples[0].t - lead, start.x, start.z});
  return true;
}

bool make_path(const std::vector<PathSample>& samples, const PathShaping& shaping, float fps, Path& path,
               std::string& error) {
  if (!(shaping.speed_scale > 0.0f) || !std::isfinite(shaping.speed_scale)) {
    error = "the speed scale must be a positive number";
    return false;
  }
  if (!(fps > 0.0f)) {
    error = "the frame rate must be positive";
    return false;
  }
  if (!check_path_samples(samples, error)) return false;
  const double seconds = double(samples.back().t - samples.front().t) / shaping.speed_scale;
  const double count = std::floor(seconds * fps + 1e-3) + 1.0;
  if (!(count >= 2.0)) {
    error = "the path lasts " + std::to_string(seconds) + " s of playback, less than one frame";
    return false;
  }
  if (seconds > kMaxPathSeconds || count > kMaxPathPoints) {
    error = "the path lasts " + std::to_string(seconds) + " s of playback (speed scale " +
            std::to_string(shaping.speed_scale) + "): at most " + std::to_string(int(kMaxPathSeconds)) + " s and " +
            std::to_string(int(kMaxPathPoints)) + " path points are accepted";
    return false;
  }
  Path made;
  made.fps = fps;
  made.points = resample(samples, shaping.speed_scale, fps, int(count));
  if (shaping.smooth) {
    const int half = std::max(1, int(std::lround(0.5f * shaping.smoothing_width * fps)));
    made.points = smooth_points(made.points, std::max(1e-3f, shaping.smoothing_sigma * fps), half);
  }
  const float metres = made.arc_length();
  if (!(metres >= kMinPathExtent)) {
    error = "the path does not move once resampled at " + std::to_string(fps) + " fps: its " +
            std::to_string(made.size()) + " points all stay " + place_name(made.points[0]);
    return false;
  }
  if (!(metres <= kMaxPathLength)) {
    error = "the path is " + std::to_string(metres) + " m long: at most " + std::to_string(int(kMaxPathLength)) +
            " m are accepted";
    return false;
  }
  path = std::move(made);
  return true;
}

bool PathFollower::init(std::shared_ptr<const Database> database, const FeatureSearch& search,
                        const PathFollowerSettings& settings, const Path& path, std::string& error) {
  if (!search.steers(database, "to follow a path with", error)) return false;
  const Database& db = *database;
  if (settings.k < 1 || settings.k > 64 || settings.levels < 1 || settings.levels > 8 ||
      lhmm_search_count(settings.k, settings.levels) > kMaxLhmmSearches) {
    error = "LHMM needs 1 <= k <= 64, 1 <= l <= 8 and at most " + std::to_string(kMaxLhmmSearches) +
            " searches per match, 1 + k + ... + k^(l-1) (got k " + std::to_string(settings.k) + ", l " +
            std::to_string(settings.levels) + ")";
    return false;
  }
  if (!(settings.match_interval > 0.0f)) {
    error = "the match interval must be positive (got " + std::to_string(settings.match_interval) + " s)";
    return false;
  }
  if (path.size() < 2 || std::fabs(path.fps - db.fps()) > 1e-3f) {
    error = "the path has " + std::to_string(path.size()) + " point(s) at " + std::to_string(path.fps) +
            " fps; two or more at the database's " + std::to_string(db.fps()) + " fps are needed";
    return false;
  }
  if (!std::isfinite(settings.query.facing_offset) || !std::isfinite(settings.query.start_facing_offset) ||
      !(settings.query.max_speed > 0.0f)) {
    error = "the facing offsets must be finite and the speed limit positive";
    return false;
  }
  if (!(settings.search_rate > 0.0f) || !(settings.stop_halflife > 0.0f) || !std::isfinite(settings.search_rate)) {
    error = "the search rate (got " + std::to_string(settings.search_rate) + " Hz) and the stop halflife (got " +
            std::to_string(settings.stop_halflife) + " s) must be positive";
    return false;
  }
  direction_ = DirectionEvaluator{};  // none unless these settings have one (init may run again)
  if (settings.query.direction != nullptr) {
    if (!direction_.init(settings.query.direction, KernelPath::Auto, error)) return false;
    const DirectionNet& net = *settings.query.direction;
    window_points_.assign(2 * size_t(net.window()), 0.0f);
    window_facings_.assign(2 * size_t(net.present() + 1), 0.0f);
    predicted_.assign(2 * size_t(net.future_steps()), 0.0f);
  }
  db_ = database;
  search_ = &search;
  path_ = &path;
  settings_ = settings;
  if (settings.query.max_speed_from_data && db.speeds().valid()) settings_.query.max_speed = db.speeds().run_forward;
  stats_ = PathFollowerStats{};
  const float fps = db.fps();
  const int match_frames = std::max(1, int(std::lround(settings.match_interval * fps)));
  settings_.search.ignore_range_end = at_rate(settings.search.ignore_range_end, fps / settings.search_rate);
  settings_.search.ignore_surrounding = at_rate(settings.search.ignore_surrounding, fps / settings.search_rate);
  lhmm_.init(database, search, settings_.search, settings.k, settings.levels, match_frames);
  lhmm_.prune = settings.prune;
  look_ahead_ = std::max(1, int(std::lround(settings.query.look_ahead * fps)));
  corner_advance_ = std::max(1, int(std::lround(settings.query.corner_advance * fps)));
  levels_.assign(size_t(settings.levels), Level{});
  for (Level& level : levels_) {
    level.trajectory.assign(db.schema().trajectory_offsets.size(), RootSample{});
    level.indices.assign(db.schema().trajectory_offsets.size(), 0.0f);
    level.positions.assign(db.schema().trajectory_offsets.size(), Vec3{});
  }
  resize_output(db.joint_count());
  animated_.assign(size_t(db.joint_count()), Quat{});
  feet_.init(db.skeleton().parents, db.contact_joints());
  playback_.init(database, db.ranges()[0].start);
  out_ = playback_.sample();
  out_.positions[0] = path.points[0];
  const Quat start_turn = quat_from_angle_axis(settings.query.start_facing_offset, Vec3{0.0f, 1.0f, 0.0f});
  out_.rotations[0] = quat_from_heading(rotate(start_turn, path.tangent(0.0f)));
  out_.velocities[0] = out_.angular[0] = Vec3{};
  update_globals(db.skeleton().parents);
  animated_ = out_.rotations;
  desired_ = 0;
  corner_ = -1;
  since_match_ = settings.match_interval;  // match at the first update
  constraint_changed_ = constraint_unmet_ = false;
  pause_frames_ = 0.0f;
  moving_ = 1.0f;
  elapsed_frames_ = 0.0;
  clock_ = 0.0;
  facing_history_.assign(kFacingHistory, rotate(out_.rotations[0], Vec3{0.0f, 0.0f, 1.0f}));
  facing_times_.assign(kFacingHistory, 0.0);
  facing_next_ = 0;
  predicted_at_ = -1;
  return true;
}

void PathFollower::record_facing() {
  facing_history_[size_t(facing_next_)] = on_ground(rotate(out_.rotations[0], Vec3{0.0f, 0.0f, 1.0f}));
  facing_times_[size_t(facing_next_)] = clock_;
  facing_next_ = (facing_next_ + 1) % kFacingHistory;
}

void PathFollower::past_facings(const DirectionNet& net, Quat heading) {
  // Step t's facing is the newest recorded at or before clock_ - (present - t) steps: one walk
  // back through the ring, newest first, serves every step from the present one down to 0.
  int back = 1;  // ring entries behind facing_next_ looked at so far
  for (int t = net.present(); t >= 0; --t) {
    const double wanted = clock_ - double(net.present() - t) * net.step_seconds();
    int h = (facing_next_ - back + kFacingHistory) % kFacingHistory;
    while (facing_times_[size_t(h)] > wanted && back < kFacingHistory) {
      ++back;
      h = (facing_next_ - back + kFacingHistory) % kFacingHistory;
    }
    // Past the oldest entry kept (before the start): that oldest facing (padding).
    const Vec3 facing =
        facing_times_[size_t(h)] <= wanted ? facing_history_[size_t(h)] : facing_history_[size_t(facing_next_)];
    const Vec3 f = inverse_rotate(heading, facing);
    window_facings_[size_t(2 * t)] = f.x, window_facings_[size_t(2 * t + 1)] = f.z;
  }
}

void PathFollower::predict_facings(int desired) {
  const DirectionNet& net = *direction_.net();
  ++stats_.direction_calls;
  const float points_per_step = net.step_seconds() * path_->fps;
  const Vec3 origin = path_->points[size_t(desired)];
  const Quat heading = heading_of(out_.rotations[0]);
  for (int t = 0; t < net.window(); ++t) {
    const Vec3 p =
        inverse_rotate(heading, path_->at(float(desired) + float(t - net.present()) * points_per_step) - origin);
    window_points_[size_t(2 * t)] = p.x, window_points_[size_t(2 * t + 1)] = p.z;
  }
  past_facings(net, heading);
  predicted_at_ = desired;
  predicted_heading_ = heading;
  if (!direction_.predict(window_points_.data(), window_facings_.data(), predicted_.data())) {
    ++stats_.direction_failures;
    predicted_at_ = -1;
  }
}

Vec3 PathFollower::query_facing(float index, Quat turn) const {
  if (predicted_at_ < 0) return rotate(turn, path_->tangent(index));
  // Step 0 is the present facing (+Z of the prediction's frame), step j > 0 predicted_[j - 1].
  const DirectionNet& net = *direction_.net();
  const float steps =
      std::clamp((index - float(predicted_at_)) / (net.step_seconds() * path_->fps), 0.0f, float(net.future_steps()));
  const int below = std::min(int(steps), net.future_steps() - 1);
  auto step = [&](int j) {
    return j == 0 ? Vec3{0.0f, 0.0f, 1.0f} : Vec3{predicted_[size_t(2 * j - 2)], 0.0f, predicted_[size_t(2 * j - 1)]};
  };
  const float a = steps - float(below);
  const Vec3 local = step(below) * (1.0f - a) + step(below + 1) * a;
  return rotate(predicted_heading_, length(local) > 1e-6f ? normalize(local) : step(below));
}

int PathFollower::desired_position(Vec3 root, const Context& context) const {
  switch (settings_.query.desired) {
    case DesiredPosition::CurrentFrame: return std::clamp(int(std::lround(context.frame_index)), 0, path_->last());
    case DesiredPosition::Nearest: return path_->nearest(root, 0, path_->last());
    case DesiredPosition::Constrained: break;
  }
  // Lee, Kwon & Lee 2023 Eq. 1 with alpha = 0: never back along the path, at most beta ahead. A
  // pause's points are all about as near, so Eq. 1 alone would stop at one of them for ever or
  // race through them, whichever rounding favours: the window ends where the path holds still
  // and starts no earlier than the time waited there, so a pause is waited out, then followed.
  const int from = std::max(context.desired_previous, context.earliest);
  return path_->nearest(root, from, path_->until_pause(from, from + look_ahead_));
}

int PathFollower::wait_at_pause(int previous, float dt) {
  if (settings_.query.desired != DesiredPosition::Constrained || !path_->paused(previous)) {
    pause_frames_ = 0.0f;
    return previous;
  }
  pause_frames_ += dt * path_->fps;  // one path point per frame of playback time
  const int steps = int(pause_frames_);
  pause_frames_ -= float(steps);
  return path_->wait_out(previous, steps);
}

namespace {

// Future path indices: i_d + offset, or with the speed limit (Lee, Kwon & Lee 2023 Sec. VI-B) spread
// uniformly up to the point that max_speed reaches in the longest offset.
void future_indices(const Path& path, const std::vector<int>& offsets, int desired, bool limit, float max_speed,
                    std::vector<float>& indices) {
  const int horizon = std::max(1, offsets.back());
  float reach = float(desired + horizon);
  if (limit) {
    float budget = max_speed * float(horizon) / path.fps;
    float i = float(desired);
    for (int p = desired; p < path.last() && budget > 0.0f; ++p) {
      const float segment = length(path.points[size_t(p + 1)] - path.points[size_t(p)]);
      if (segment >= budget) {
        i = float(p) + budget / segment;
        budget = 0.0f;
      } else {
        budget -= segment;
        i = float(p + 1);
      }
    }
    if (budget > 0.0f) i = float(desired + horizon);  // ran off the path's end: no limit needed
    reach = std::min(reach, i);
  }
  indices.resize(offsets.size());
  for (size_t j = 0; j < offsets.size(); ++j) {
    const int o = offsets[j];
    indices[j] = o > 0 ? float(desired) + (reach - float(desired)) * float(o) / float(horizon) : float(desired + o);
  }
}

}  // namespace

void PathFollower::future_points(int desired, Level& level) const {
  const PathQuerySettings& q = settings_.query;
  future_indices(*path_, db_->schema().trajectory_offsets, desired, q.speed_limit, q.max_speed, level.indices);
  for (size_t j = 0; j < level.indices.size(); ++j) level.positions[j] = path_->at(level.indices[j]);
}

int PathFollower::corner_vertex(float from, float to, int desired) const {
  // App. D's i_corner: the sharpest turn strictly between the two points, ahead of i_d.
  int corner = -1;
  float sharpest = -1.0f;
  for (int i = std::max(int(std::floor(from)) + 1, desired + 1); float(i) < to && i < path_->last(); ++i) {
    const float turn = angle_between(path_->tangent(float(i)), path_->tangent(float(i + 1)));
    if (turn > sharpest) sharpest = turn, corner = i;
  }
  return corner;
}

int PathFollower::corner_after(int desired, const Level& level) const {
  const std::vector<int>& offsets = db_->schema().trajectory_offsets;
  float from = float(desired);
  for (size_t j = 0; j < offsets.size(); ++j) {
    if (offsets[j] <= 0) continue;
    const float turn = angle_between(path_->tangent(from), path_->tangent(level.indices[j]));
    if (turn > settings_.query.corner_angle * kDegToRad) return int(j);
    from = level.indices[j];
  }
  return -1;
}

void PathFollower::compute_query(const RootSample& root, int frame, Context& context, int depth, float* query) {
  Level& level = levels_[size_t(depth)];
  const Path& path = *path_;
  const std::vector<int>& offsets = db_->schema().trajectory_offsets;
  int desired = desired_position(root.position, context);
  future_points(desired, level);
  context.corner = -1;
  int j = settings_.query.corner_fix ? corner_after(desired, level) : -1;
  if (j >= 0 && desired == context.desired_previous && desired < path.last() && !path.paused(desired)) {
    // Lee, Kwon & Lee 2023 App. D: stalled in front of a sharp corner, step ahead by c and revise
    // again (not at a pause, where the desired position waits on purpose).
    desired = std::min(path.last(), desired + corner_advance_);
    future_points(desired, level);
    j = corner_after(desired, level);
  }
  const bool first = j <= 0 || offsets[size_t(j - 1)] <= 0;
  const float from = j < 0 ? 0.0f : (first ? float(desired) : level.indices[size_t(j - 1)]);
  const int corner = j < 0 ? -1 : corner_vertex(from, level.indices[size_t(j)], desired);
  if (corner >= 0) {
    // App. D: move the first point past the corner onto the line from the point before it
    // through the corner's vertex, at the distance that segment's speed covers; later points
    // move with it.
    const Vec3 from_point = first ? path.at(from) : level.positions[size_t(j - 1)];
    const float span = float(corner) - from;
    const float scale = span > 1e-3f ? (level.indices[size_t(j)] - from) / span : 1.0f;
    const Vec3 shift = from_point + (path.at(float(corner)) - from_point) * scale - level.positions[size_t(j)];
    for (size_t m = size_t(j); m < offsets.size(); ++m) {
      if (offsets[m] > 0) level.positions[m] = level.positions[m] + shift;
    }
    context.corner = corner;
  }
  context.desired = desired;
  const Quat turn = quat_from_angle_axis(settings_.query.facing_offset, Vec3{0.0f, 1.0f, 0.0f});
  for (size_t m = 0; m < offsets.size(); ++m) {
    level.trajectory[m] = RootSample{level.positions[m], quat_from_heading(query_facing(level.indices[m], turn))};
  }
  QueryJob job = query_job_for(*db_);
  job.pose_features = Span<const float>(db_->features(frame), size_t(db_->schema().dims));
  job.root = root;
  job.trajectory = level.trajectory;
  job.query = Span<float>(query, size_t(db_->schema().dims));
  job.run();
}

PathFollower::Context PathFollower::update_context(const Context& context) const {
  // The next level plays N frames later: through a pause, N points of it are waited out.
  const int earliest = settings_.query.desired == DesiredPosition::Constrained
                           ? path_->wait_out(context.desired, lhmm_.step_frames)
                           : context.desired;
  return Context{context.desired, context.desired, context.frame_index + float(lhmm_.step_frames), -1, earliest};
}

void PathFollower::set_constraint(const TagConstraint& constraint) {
  lhmm_.params.constraint = settings_.search.constraint = constraint;
  constraint_changed_ = true;
  constraint_unmet_ = false;
}

void PathFollower::match(const Context& start, bool must_leave) {
  ++stats_.matches;
  since_match_ = 0.0f;
  constraint_changed_ = false;
  Context context = start;
  const RootSample root{on_ground(out_.positions[0]), out_.rotations[0]};
  // The playing frame continues as a candidate while its clip has N more frames.
  const int frame = playback_.frame();
  const int current = !must_leave && frame + lhmm_.step_frames < playback_.clip_stop() - 1 ? frame : -1;
  if (direction_.net() != nullptr) predict_facings(desired_);
  int best = -1;
  long_horizon_match(lhmm_, *this, root, frame, context, settings_.levels, current, best);
  stats_.knn_calls = lhmm_.knn_calls;
  constraint_unmet_ = best < 0 && !constraint().allows_all();
  stats_.unsatisfied_matches += constraint_unmet_;
  desired_ = context.desired;
  corner_ = context.corner;
  if (best >= 0 && best != playback_.frame()) {
    feet_.restore_pelvis(out_);  // blend from the animated pose
    playback_.jump(best, out_, animated_);
    ++stats_.transitions;
  }
}

void PathFollower::move_root(float dt) {
  // Standing (a pause, or the path completed), the clip's root motion fades out, so the root
  // stays put whatever the data offers (data without standing frames steps in place); it fades
  // back in when the path moves on.
  const float target = standing() ? 0.0f : 1.0f;
  moving_ = target + (moving_ - target) * std::exp(-dt * kLn2 / settings_.stop_halflife);
  integrate_root_motion(playback_.local_root_velocity() * moving_, playback_.local_root_angular() * moving_, dt,
                        out_.positions[0], out_.rotations[0], out_.velocities[0], out_.angular[0]);
  if (settings_.adjust_to_path) {
    pull_towards(path_->points[size_t(desired_)], out_.velocities[0], settings_.adjustment_halflife,
                 settings_.adjustment_max_ratio, dt, out_.positions[0]);
  }
}

void PathFollower::update(float dt) {
  if (!(dt > 0.0f && dt <= kMaxDt)) {
    ++stats_.clamped_dt;
    dt = dt > kMaxDt ? kMaxDt : 1e-4f;
  }
  ++stats_.updates;
  begin_root_motion();
  clock_ += dt;
  elapsed_frames_ += double(dt) * db_->fps();
  since_match_ += dt;
  const int previous = desired_;  // i_d of the previous frame (Lee, Kwon & Lee 2023 Eq. 1's i_d_prev)
  const Context tracking{previous, previous, float(elapsed_frames_), -1, wait_at_pause(previous, dt)};
  desired_ = desired_position(on_ground(out_.positions[0]), tracking);
  const bool corner_passed = corner_ >= 0 && desired_ >= corner_ + 1;
  if (corner_passed) ++stats_.corner_queries;
  const bool at_clip_end = playback_.frame() >= playback_.clip_stop() - 1;
  const bool due = since_match_ >= settings_.match_interval;
  // Frames the constraint does not allow are left before they are played (once per regular
  // match while no allowed frame exists).
  const bool leaving = (!constraint_unmet_ || due) && playback_.leaves(constraint(), dt);
  stats_.constraint_matches += constraint_changed_ || leaving;
  if (due || corner_passed || at_clip_end || constraint_changed_ || leaving) match(tracking, leaving);
  playback_.advance(dt, settings_.inertialization_halflife, out_);
  move_root(dt);
  update_globals(db_->skeleton().parents);
  animated_ = out_.rotations;  // the pose before IK: what transitions blend from
  if (settings_.foot_lock) {
    feet_.apply(db_->contacts(playback_.frame()), settings_.foot_unlock_distance, settings_.foot_blend_halflife, dt,
                db_->skeleton().parents, out_, global_positions_, global_rotations_);
  }
  record_facing();
  end_root_motion();
}

void PathFollower::played_trajectory(Vec3* positions, Vec3* directions) const {
  trajectory_of_features(db_->schema(), db_->features(current_frame()), db_->feature_offset(), db_->feature_scale(),
                         positions, directions);
}

}  // namespace lmm
