// Path following with long-horizon motion matching (Lee, Kwon & Lee, IEEE Access 2023): a drawn path
// becomes path points (Sec. V), future queries are revised against it (Sec. VI, App. B-D) and
// LHMM(k, l) (Algorithm 1) picks the frame whose continuation matches best over l matching
// steps. Frame-based constants of the paper (30 Hz) are given here in seconds so that any
// database rate works.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/asset/direction_net.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/eval/direction_evaluator.hpp"
#include "lmm/eval/search.hpp"
#include "lmm/motion/database_playback.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/motion/lhmm.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// Limits of a path (make_path): playback duration, resampled points, arc length, and the
// magnitude of sample coordinates (beyond it float precision would degrade the path).
constexpr double kMaxPathSeconds = 600.0;
constexpr double kMaxPathPoints = 1e6;
constexpr float kMaxPathLength = 5000.0f;     // metres
constexpr float kMaxPathCoordinate = 1.0e5f;  // metres
// A path whose samples all lie within this of one point (or whose points, once resampled, move
// less than this in all) does not go anywhere: make_path refuses it.
constexpr float kMinPathExtent = 1.0e-3f;  // metres
// A path point moving slower than this (to the next point) is paused: a drawn path that holds
// still (repeated samples). The follower waits a pause out in time, standing, then follows on.
constexpr float kPausedPathSpeed = 0.05f;  // m/s

// One raw sample of a drawn path: time (s) and a ground point (metres).
struct PathSample {
  float t = 0.0f, x = 0.0f, z = 0.0f;
};

// How raw samples become path points (Lee, Kwon & Lee 2023 Sec. V).
struct PathShaping {
  float speed_scale = 1.0f;         // playback speed / drawing speed (Lee, Kwon & Lee 2023 Sec. V-A uses 0.2)
  bool smooth = true;               // Gaussian smoothing (Lee, Kwon & Lee 2023 Sec. V-B)
  float smoothing_sigma = 0.1f;     // s: sigma 3 frames at 30 Hz (Lee, Kwon & Lee 2023 Sec. V-B)
  float smoothing_width = 0.6333f;  // s: width 19 frames at 30 Hz (Lee, Kwon & Lee 2023 Sec. V-B)
};

// Where the path is put relative to the character (Lee, Kwon & Lee 2023 Sec. VII).
enum class PathMode {
  Local,   // the path is translated so that it starts at the character
  Global,  // the path stays; a segment from the character to its start is prepended
};

// Path points: one ground point per frame of playback time at `fps` (index = frame).
struct Path {
  std::vector<Vec3> points;
  float fps = 60.0f;

  // Number of points.
  int size() const { return static_cast<int>(points.size()); }
  // Index of the last point.
  int last() const { return size() - 1; }
  // The point at a fractional index (linear interpolation, clamped to the path).
  Vec3 at(float index) const;
  // Length of the polyline through the points, metres.
  float arc_length() const;
  // Unit tangent at a fractional index (Lee, Kwon & Lee 2023 Eq. 2), from the segment it lies on.
  Vec3 tangent(float index) const;
  // Index of the point nearest to `p` among indices [first, last_index].
  int nearest(Vec3 p, int first, int last_index) const;
  // Whether the path holds still at `index`: it moves slower than kPausedPathSpeed to the next
  // point (the last point is not paused).
  bool paused(int index) const;
  // The index `points` path points past `from` while the path holds still, stopping at the
  // pause's end: where waiting out `points` frames of time at a pause leads (`from` if not paused).
  int wait_out(int from, int points) const;
  // The first index in [from, to] at which the path holds still, else `to`.
  int until_pause(int from, int to) const;
};

// Checks raw samples (at least two, finite, coordinates within kMaxPathCoordinate, strictly
// increasing time, not all within kMinPathExtent of one point; a point repeated at later times is
// a pause and is accepted) and places them: translated to start at `start` (Local) or prefixed by
// a segment from `start` at the mean speed of the path's first second (Global). False with a
// message naming the sample (or, for a path that does not move, the point) at fault.
bool place_path(std::vector<PathSample>& samples, PathMode mode, Vec3 start, std::string& error);

// Resamples placed samples at `fps` in playback time (time / speed_scale) and smooths them,
// extrapolating linearly past both ends so that smoothing keeps the path's length. False with a
// message for bad samples or settings, a path beyond kMaxPathSeconds, kMaxPathPoints or
// kMaxPathLength, or one whose points move less than kMinPathExtent in all.
bool make_path(const std::vector<PathSample>& samples, const PathShaping& shaping, float fps, Path& path,
               std::string& error);

// How the desired position on the path is chosen (Lee, Kwon & Lee 2023 Sec. VI-A and Table 2's variants).
enum class DesiredPosition {
  Constrained,   // Eq. 1: nearest point in [previous, previous + look-ahead]
  CurrentFrame,  // the point of the current playback frame
  Nearest,       // the nearest point of the whole path
};

// Future query revision (Lee, Kwon & Lee 2023 Sec. VI); every part can be switched off (Table 2).
struct PathQuerySettings {
  DesiredPosition desired = DesiredPosition::Constrained;
  float look_ahead = 10.0f / 30.0f;     // s: beta of Eq. 1 (10 frames at 30 Hz)
  bool speed_limit = true;              // Sec. VI-B
  float max_speed = 3.0f;               // m/s: v_max (Sec. VIII-B uses 3 m/s) ...
  bool max_speed_from_data = true;      // ... unless the database's measured run speed replaces it
  bool corner_fix = true;               // Sec. VI-C, App. D
  float corner_angle = 80.0f;           // degrees between future tangents that make a sharp corner
  float corner_advance = 2.0f / 30.0f;  // s: c, the anti-stall advance (2 frames at 30 Hz)
  float facing_offset = 0.0f;           // rad added to the tangential facing (joystick offset, Sec. VI-F)
  // When set, the future facings come from DirectionNet (Sec. VI-G) instead of the tangent: at each
  // match it predicts the facings along the path ahead of the desired position from the path
  // around it and the character's facings of the window's past.
  std::shared_ptr<const DirectionNet> direction;
  float start_facing_offset = 0.0f;  // rad: the character starts facing the path's first tangent turned by this
};

// Tunables of a path-following character.
struct PathFollowerSettings : FootLockSettings {  // foot locks: Lee, Kwon & Lee 2023 App. A
  int k = 3;       // nearest neighbours per level (Lee, Kwon & Lee 2023 Sec. VIII-A)
  int levels = 3;  // l; LHMM(1, 1) is basic motion matching
  // Branch and bound in LHMM (LhmmSearch::prune: the same matches, fewer searches); false
  // searches every node of the tree, as Lee, Kwon & Lee 2023 Table 1 counts kNN calls.
  bool prune = true;
  float match_interval = 1.0f / 6.0f;  // s: N = 5 frames at 30 Hz (Lee, Kwon & Lee 2023 App. A)
  float inertialization_halflife = 0.1f;
  // Pull the root towards the desired path point like the gamepad character's pull towards its
  // simulated root (not part of Lee, Kwon & Lee 2023, whose method the ablation's "no root adjustment" row is).
  bool adjust_to_path = true;
  float adjustment_halflife = 0.2f;   // s
  float adjustment_max_ratio = 0.2f;  // adjustment speed limit, as a fraction of root speed
  SearchParams search;
  // Hz at which the frame counts of `search` (ignore_range_end, ignore_surrounding) are given;
  // they are scaled to the database's rate, so they span the same time at any rate (unscaled,
  // the default 20 frames were 20 ms at 1000 Hz and a square path never completed).
  float search_rate = 60.0f;
  // s: halflife of the fade of the root's motion while the character stands (a pause, or the
  // path completed), and of its return when the path moves on.
  float stop_halflife = 0.2f;
  PathQuerySettings query;
};

// Counters of a path-following character.
struct PathFollowerStats {
  int updates = 0;
  int matches = 0;    // LHMM calls
  int knn_calls = 0;  // nearest-neighbour searches over all LHMM calls
  int transitions = 0;
  int corner_queries = 0;  // extra matches when a sharp corner's vertex was passed
  int clamped_dt = 0;
  int direction_calls = 0;     // DirectionNet predictions
  int direction_failures = 0;  // predictions refused (non-finite input); the tangent was used
  int constraint_matches = 0;   // matches made because the constraint changed or the frames left it
  int unsatisfied_matches = 0;  // matches that found no frame the constraint allows
};

// A database character following a path with LHMM(k, l). At a pause of the path (points
// slower than kPausedPathSpeed) the desired position waits the pause out in time and the
// character stands; once the path is completed it stands at the end for good: the query asks to
// stand there and the root's motion fades out (stop_halflife), so it stays put even on data
// without standing frames (whose legs then step in place). Not thread-safe itself; characters
// sharing one Database and FeatureSearch may update on different threads.
class PathFollower : public PoseOutput {
 public:
  // Allocates every buffer; starts at the first frame of clip 0 at the path's first point,
  // facing along it. False with a message for an empty database, a search index of another
  // database, a schema without trajectory groups or bad settings. Holds `db` (shared) for its
  // whole life; `search` (built over `db`) and `path` must outlive the follower. False with a
  // message for a null database too.
  bool init(std::shared_ptr<const Database> db, const FeatureSearch& search, const PathFollowerSettings& settings,
            const Path& path, std::string& error);
  // Advances by dt seconds (clamped to (0, kMaxDt]); no allocation.
  void update(float dt);
  // Turns foot locking on or off and sets its distances from the next update (turning it off
  // releases every lock at once). No allocation.
  void set_foot_lock(const FootLockSettings& lock) { change_foot_lock(lock, settings_, feet_); }
  // Largest distance (m) in the last update between a locked ankle and its IK target
  // (FootLocker::largest_ik_error); 0 without foot locks.
  float foot_ik_error() const { return feet_.largest_ik_error(); }

  // The path being followed.
  const Path& path() const { return *path_; }
  // The desired path index (Lee, Kwon & Lee 2023 Eq. 1).
  int desired_index() const { return desired_; }
  // Whether the desired position has reached the path's last point; from then on the character
  // stands at the end (its root stops: no drift however long it is updated).
  bool completed() const { return desired_ >= path_->last(); }
  // Whether the character stands: the path is completed or holds still at the desired point.
  bool standing() const { return completed() || path_->paused(desired_); }
  // Database frame being played.
  int current_frame() const { return playback_.frame(); }
  // The trajectory the played pose's features describe, in world space from the output root: one
  // position and one direction per trajectory offset of the schema (what a search matches a query
  // against). `positions` and `directions` hold that many entries. No allocation.
  void played_trajectory(Vec3* positions, Vec3* directions) const;
  // Whether contact label `k` is set in the frame played.
  bool in_contact(int k) const { return db_->contacts(playback_.frame())[k] != 0; }
  // The tag constraint LHMM's searches honour from the next update on, which matches at once
  // (settings.search.constraint from init): entries as FeatureSearch::search allows them, at every
  // level of the tree; frames about to be played that leave it are left first; when no frame is
  // allowed the character keeps playing and counts it (stats().unsatisfied_matches). No allocation.
  void set_constraint(const TagConstraint& constraint);
  // The constraint set last.
  const TagConstraint& constraint() const { return lhmm_.params.constraint; }
  // Tags of the frame played.
  TagMask current_tags() const { return db_->annotations().tags(playback_.frame()); }
  // Whether the frame played has the tags the constraint asks for.
  bool constraint_held() const { return constraint().allows(current_tags()); }
  // The revised future positions of the last top-level query (world space).
  const std::vector<RootSample>& revised_trajectory() const { return levels_[0].trajectory; }
  // Counters.
  const PathFollowerStats& stats() const { return stats_; }

 private:
  // Path-following scratch of one LHMM level.
  struct Level {
    std::vector<RootSample> trajectory;  // revised future samples
    std::vector<float> indices;          // future path indices per trajectory offset
    std::vector<Vec3> positions;         // revised future positions per trajectory offset
  };

 public:
  // The revised query context of one level (Lee, Kwon & Lee 2023 Algorithms 2 and 3).
  struct Context {
    int desired_previous = 0;
    int desired = 0;
    float frame_index = 0.0f;  // playback frames since the path started (CurrentFrame mode)
    int corner = -1;           // index of the sharp corner's vertex, -1 if none
    int earliest = 0;          // Eq. 1's window starts here at least: a pause waited out in time
  };
  // LHMM hook (Lee, Kwon & Lee 2023 Algorithm 2): the revised query of `root` playing `frame`.
  void compute_query(const RootSample& root, int frame, Context& context, int level, float* query);
  // LHMM hook (Lee, Kwon & Lee 2023 Algorithm 3): the next level's context.
  Context update_context(const Context& context) const;

 private:
  int desired_position(Vec3 root, const Context& context) const;
  int wait_at_pause(int previous, float dt);
  void move_root(float dt);
  void future_points(int desired, Level& level) const;
  int corner_after(int desired, const Level& level) const;
  int corner_vertex(float from, float to, int desired) const;
  // One LHMM call from `start`; `must_leave`: the playing frame is no candidate.
  void match(const Context& start, bool must_leave);
  Vec3 query_facing(float index, Quat turn) const;
  void record_facing();
  void past_facings(const DirectionNet& net, Quat heading);
  void predict_facings(int desired);

  std::shared_ptr<const Database> db_;
  const FeatureSearch* search_ = nullptr;
  const Path* path_ = nullptr;
  PathFollowerSettings settings_;
  PathFollowerStats stats_;
  DatabasePlayback playback_;
  std::vector<Quat> animated_;  // output rotations before the foot-lock IK
  FootLocker feet_;
  std::vector<Level> levels_;
  LhmmSearch lhmm_;
  int look_ahead_ = 1;      // beta in path points
  int corner_advance_ = 1;  // c in path points
  int desired_ = 0;
  int corner_ = -1;
  float since_match_ = 0.0f;
  bool constraint_changed_ = false;  // set_constraint since the last match
  bool constraint_unmet_ = false;    // the last match found no frame the constraint allows
  float pause_frames_ = 0.0f;  // path points of time waited at a pause, not yet stepped
  float moving_ = 1.0f;        // share of the clip's root motion applied (fades to 0 standing)
  double elapsed_frames_ = 0.0;
  // DirectionNet facing: the root's facing after each update (a ring, with its times), the
  // window's inputs and the facings predicted after the present step, all in the frame at the
  // path point `predicted_at_` facing `predicted_heading_` (predicted_at_ -1: no prediction).
  DirectionEvaluator direction_;
  std::vector<Vec3> facing_history_;
  std::vector<double> facing_times_;
  int facing_next_ = 0;
  double clock_ = 0.0;
  std::vector<float> window_points_, window_facings_, predicted_;
  int predicted_at_ = -1;
  Quat predicted_heading_;
};

}  // namespace lmm
