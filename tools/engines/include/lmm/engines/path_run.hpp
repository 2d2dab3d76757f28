// lmm-path's engine: path files, runs of the path-following character with their metrics and
// plots, the designed test paths and Lee, Kwon & Lee 2023's ablation (Table 2) and timing (Table 1) tables.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "lmm/engines/simulation.hpp"
#include "lmm/character/path_following.hpp"

namespace lmm::pipeline {

// Reads a path: CSV with a header naming t, x, z (any order; '#' comments) or JSON, an array
// of [t, x, z] triples (optionally under "points"). Throws InputError naming the file and line.
std::vector<PathSample> load_path(const std::string& file);

// What one path-following run measured.
struct PathMetrics {
  double avg_distance_m = 0;    // mean distance from the root to the nearest path point (Lee, Kwon & Lee 2023 Sec. VIII-F)
  bool completed = false;       // the desired position reached the path's last point
  double seconds_to_complete = 0;
  double run_limit_s = 0;       // when an uncompleted run stops (PathRunOptions::extra_seconds)
  double ms_per_lhmm = 0;       // median wall time of the updates that ran LHMM
  double knn_calls_per_lhmm = 0;
  int frames = 0, matches = 0, transitions = 0, corner_queries = 0;
  double foot_slide_cm_per_s = 0;
  LegMetrics legs;              // foot-lock IK error and the fastest leg joint (knee pops)
  // Facing (Lee, Kwon & Lee 2023 Sec. VI-D): mean angle (degrees) between the root's facing and the intended
  // one (PathRunOptions::intended_facing, else the path's tangent at the desired position) over
  // the frames whose desired position moves faster than 0.3 m/s, and the share of those frames
  // played from clips that travel sideways or backwards (clip_travel).
  double facing_error_deg = 0;
  double sideways_clip_share = 0;
  int direction_calls = 0;      // DirectionNet predictions (--facing net)
  // Tags (databases with tags): seconds played on frames of each tag until completion, the
  // updates whose frame the follower's constraint rejects, and the matches the constraint made
  // (changes and frames about to leave it) or that found no allowed frame.
  std::vector<std::pair<std::string, double>> tag_seconds;
  long constraint_violations = 0;
  int constraint_matches = 0, unsatisfied_matches = 0;
};

// Everything one run needs.
struct PathRunOptions {
  PathMode mode = PathMode::Local;
  Vec3 start;                   // where the character starts (facing along the path)
  PathShaping shaping;
  PathFollowerSettings follower;
  float dt = 1.0f / 60.0f;
  float extra_seconds = 10.0f;  // run limit: max(3 x duration, kPaceAllowance x length / typical_root_speed) + this
  bool fixed_facing = false;    // the path is meant to be walked facing `intended_facing` (world), not along it
  Vec3 intended_facing{0.0f, 0.0f, 1.0f};
};

// Path speed (m/s) below which the desired position counts as standing for the facing metrics.
constexpr float kFacingPathSpeed = 0.3f;
// Slack of the run limit over the time the path's length takes at the database's typical speed.
constexpr double kPaceAllowance = 2.0;
// Root speed (m/s) above which a database frame counts as moving for typical_root_speed.
constexpr double kMovingRootSpeed = 0.25;

// The database's typical forward speed (m/s): the median horizontal root (joint 0) speed over
// the frames moving faster than kMovingRootSpeed; kMovingRootSpeed when none does.
double typical_root_speed(const Database& db);

// Places and shapes `samples` and runs one path follower from options.start until
// the path is completed (plus 0.5 s) or time runs out (the run limit of PathRunOptions, which
// grows as the database's typical speed falls, so slow data is not cut off while following).
// Fills `track` and `path`. Throws InputError for a bad path or settings.
PathMetrics run_path(const std::shared_ptr<const Database>& db, const FeatureSearch& search,
                     const std::vector<PathSample>& samples, const PathRunOptions& options, CharacterTrack& track,
                     Path& path);

// Writes a top-view SVG in the style of Lee, Kwon & Lee 2023 Fig. 7: path red with its points marked every
// 0.5 s, character root path blue.
void write_path_svg(const std::string& file, const Path& path, const CharacterTrack& track, const std::string& title);

// A designed test path (seconds of playback time, metres).
struct TestPath {
  std::string name;
  std::vector<PathSample> samples;
  float speed_scale = 1.0f;
  // Paths meant to be walked with a held facing (facing_test_paths): +Z in the path's frame; the
  // character starts turned start_facing_deg from the path's first tangent, and the joystick mode
  // holds joystick_deg from the tangent (NaN: no single joystick offset walks it).
  bool fixed_facing = false;
  float start_facing_deg = 0.0f;
  float joystick_deg = NAN;
};

// The test paths: a circle whose speed rises linearly from 0 to 9 m/s over 1.5 laps (Lee, Kwon & Lee 2023
// Fig. 9), sharp corners, an S-curve and a fast, jittery hand-drawn-like path.
std::vector<TestPath> test_paths();

// Paths a person would walk sideways or backwards, all facing +Z: a backward walk (4 m along -Z at
// 0.8 m/s), a sideways shuffle (4 m along +X at 0.5 m/s) and a back-and-forth (3 m forward at
// 1.1 m/s, then back at 0.8 m/s).
std::vector<TestPath> facing_test_paths();

}  // namespace lmm::pipeline
