#include "supplied_trajectory_character.hpp"

#include <cmath>

namespace example {

bool SuppliedTrajectoryCharacter::init(std::shared_ptr<const lmm::Database> db, const lmm::FeatureSearch& search,
                                       const SuppliedTrajectorySettings& settings, lmm::Vec3 position, float heading,
                                       std::string& error) {
  if (db == nullptr || db->frame_count() == 0 || search.database() != db) {
    error = "needs a database with frames and a search index built over it";
    return false;
  }
  db_ = std::move(db);
  search_ = &search;
  settings_ = settings;
  sample_times_.clear();  // init may be called again
  for (int offset : db_->schema().trajectory_offsets) sample_times_.push_back(float(offset) / db_->fps());
  const lmm::Quat facing = lmm::quat_from_heading(lmm::Vec3{std::sin(heading), 0.0f, std::cos(heading)});
  present_ = lmm::RootSample{lmm::on_ground(position), facing};
  trajectory_.assign(sample_times_.size(), present_);
  query_.assign(size_t(db_->schema().dims), 0.0f);
  scratch_ = search.make_scratch();
  playback_.init(db_, db_->ranges()[0].start);
  pose_ = playback_.sample();
  pose_.positions[0] = present_.position;
  pose_.rotations[0] = facing;
  global_positions_.resize(pose_.positions.size());
  global_rotations_.resize(pose_.rotations.size());
  update_globals();
  since_search_ = settings.search_interval;  // search at the first update
  return true;
}

bool SuppliedTrajectoryCharacter::plan(const lmm::RootSample& present, lmm::Span<const lmm::RootSample> samples) {
  if (samples.size != trajectory_.size()) return false;
  present_ = present;
  for (size_t i = 0; i < samples.size; ++i) trajectory_[i] = samples[i];
  return true;
}

void SuppliedTrajectoryCharacter::search_and_transition() {
  const int frame = playback_.frame();
  lmm::QueryJob query = lmm::query_job_for(*db_);
  query.pose_features = lmm::Span<const float>(db_->features(frame), query_.size());
  query.root = lmm::RootSample{lmm::on_ground(pose_.positions[0]), pose_.rotations[0]};
  query.trajectory = trajectory_;
  query.query = query_;
  const bool must_leave = frame >= playback_.clip_stop() - 1;
  const lmm::SearchMatchJob match{search_, query_, must_leave ? -1 : frame, settings_.search, &scratch_, &result_};
  ++searches_;
  since_search_ = 0.0f;
  if (query.run() && match.run() && result_.frame != frame) {
    playback_.jump(result_.frame, pose_, pose_.rotations);
    ++transitions_;
  }
}

void SuppliedTrajectoryCharacter::update(float dt) {
  since_search_ += dt;
  if (since_search_ >= settings_.search_interval || playback_.frame() >= playback_.clip_stop() - 1) {
    search_and_transition();
  }
  playback_.advance(dt, settings_.inertialization_halflife, pose_);
  lmm::integrate_root_motion(playback_.local_root_velocity(), playback_.local_root_angular(), dt, pose_.positions[0],
                             pose_.rotations[0], pose_.velocities[0], pose_.angular[0]);
  lmm::pull_towards(present_.position, pose_.velocities[0], settings_.pull_halflife, settings_.pull_max_ratio, dt,
                    pose_.positions[0]);
  update_globals();
}

void SuppliedTrajectoryCharacter::update_globals() {
  const lmm::ForwardKinematicsJob fk{db_->skeleton().parents, pose_.positions, pose_.rotations, global_positions_,
                                     global_rotations_};
  fk.run();
}

}  // namespace example
