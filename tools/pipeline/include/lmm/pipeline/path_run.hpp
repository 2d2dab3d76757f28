// lmm-path's engine: path files, runs of the path-following character with their metrics and
// plots, the designed test paths and Lee, Kwon & Lee 2023's ablation (Table 2) and timing (Table 1) tables.
#pragma once

#include <string>
#include <vector>

#include "lmm/path_following.hpp"
#include "lmm/pipeline/simulation.hpp"

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
};

// Everything one run needs.
struct PathRunOptions {
  PathMode mode = PathMode::Local;
  Vec3 start;                   // where the character starts (facing along the path)
  PathShaping shaping;
  PathFollowerSettings follower;
  float dt = 1.0f / 60.0f;
  float extra_seconds = 10.0f;  // run limit: max(3 x duration, kPaceAllowance x length / typical_root_speed) + this
};

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
};

// The test paths: a circle whose speed rises linearly from 0 to 9 m/s over 1.5 laps (Lee, Kwon & Lee 2023
// Fig. 9), sharp corners, an S-curve and a fast, jittery hand-drawn-like path.
std::vector<TestPath> test_paths();

}  // namespace lmm::pipeline
