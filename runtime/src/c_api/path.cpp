// C API: characters that follow a path, and their progress (lmm/lmm.h).
#include "c_api/internal.hpp"

using namespace lmm::capi;

extern "C" {

lmm_character* lmm_character_create_path(const lmm_database* database, const float* samples_txz, size_t count, int mode,
                                         float speed_scale, float x, float z, float heading) {
  if (!require_live(database, Kind::Database, "database") || !require(samples_txz, "samples_txz")) return nullptr;
  if (mode != LMM_PATH_LOCAL && mode != LMM_PATH_GLOBAL) {
    last_error = "unknown path mode " + std::to_string(mode) + " (LMM_PATH_LOCAL or LMM_PATH_GLOBAL)";
    return nullptr;
  }
  if (count > size_t(lmm::kMaxPathPoints)) {
    last_error = std::to_string(count) + " path samples: at most " + std::to_string(size_t(lmm::kMaxPathPoints)) +
                 " are accepted";
    return nullptr;
  }
  if (!require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.database = database->asset;
    c.played = &c.path_follower;
    c.skeleton = &c.database->database->skeleton();
    std::vector<lmm::PathSample> samples(count);
    for (size_t i = 0; i < count; ++i)
      samples[i] = {samples_txz[3 * i], samples_txz[3 * i + 1], samples_txz[3 * i + 2]};
    lmm::PathShaping shaping;
    shaping.speed_scale = speed_scale;
    const lmm::PathMode placing = mode == LMM_PATH_GLOBAL ? lmm::PathMode::Global : lmm::PathMode::Local;
    if (!lmm::place_path(samples, placing, lmm::Vec3{x, 0.0f, z}, error) ||
        !lmm::make_path(samples, shaping, c.database->database->fps(), c.path, error)) {
      return false;
    }
    // The follower starts at the path's first point facing its first tangent turned by this offset.
    const lmm::Vec3 tangent = c.path.tangent(0.0f);
    lmm::PathFollowerSettings settings;
    settings.query.start_facing_offset = heading - std::atan2(tangent.x, tangent.z);
    return c.path_follower.init(c.database->database, c.database->search, settings, c.path, error);
  });
}

int lmm_character_path_progress(const lmm_character* character, int* desired_index, int* point_count, int* completed) {
  const lmm::PathFollower* follower = require_path_follower(character);
  if (follower == nullptr) return 0;
  if (desired_index != nullptr) *desired_index = follower->desired_index();
  if (point_count != nullptr) *point_count = follower->path().size();
  if (completed != nullptr) *completed = follower->completed() ? 1 : 0;
  return 1;
}

int lmm_character_path_points(const lmm_character* character, float* points_xyz, size_t point_capacity) {
  const lmm::PathFollower* follower = require_path_follower(character);
  if (follower == nullptr || !require(points_xyz, "points_xyz")) return 0;
  const std::vector<lmm::Vec3>& points = follower->path().points;
  if (point_capacity < points.size()) {
    last_error =
        "the buffer holds " + std::to_string(point_capacity) + " points; the path has " + std::to_string(points.size());
    return 0;
  }
  for (size_t i = 0; i < points.size(); ++i) write_xyz(points[i], points_xyz + 3 * i);
  return 1;
}

}  // extern "C"
