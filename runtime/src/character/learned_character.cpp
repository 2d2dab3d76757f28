#include "lmm/character/learned_character.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {

bool LearnedCharacter::init(std::shared_ptr<const Model> bundle, const LearnedSettings& settings, Vec3 position,
                            float heading, std::string& error) {
  if (bundle == nullptr) {
    error = "no model bundle (null pointer)";
    return false;
  }
  const Model& model = *bundle;
  if (!settings.expected_schema.empty() && settings.expected_schema != model.schema().name) {
    error = "feature schema mismatch: controller expects '" + settings.expected_schema + "', model has '" +
            model.schema().name + "'";
    return false;
  }
  if (model.schema().trajectory_offsets.empty()) {
    error = "feature schema '" + model.schema().name + "' has no trajectory groups to steer with";
    return false;
  }
  if (!playback_.init(bundle, settings.transition, settings.blend_time, settings.kernels, error)) return false;
  model_ = bundle;
  settings_ = settings;
  if (settings.speeds_from_data) model.speeds().apply(settings_.controller);
  gameplay_.init(model.tags(), model.kept_out_tags(), settings.idle, TagConstraint{}, settings.transition_cost);
  projected_.assign(size_t(model.state_size()), 0.0f);
  query_.assign(size_t(model.projector_input_size()), 0.0f);
  events_.assign(model.event_names().size() + 1, CharacterEvent{});
  contacts_before_.assign(size_t(model.pose_layout().contacts), 0);
  feet_.init(model.skeleton().parents, model.contact_joints());
  resize_output(model.skeleton().joint_count());
  if (!start(position, heading)) {
    error = "the projector gives non-finite values for a standing query";
    return false;
  }
  return true;
}

void LearnedCharacter::reset(Vec3 position, float heading) { start(position, heading); }

bool LearnedCharacter::start(Vec3 position, float heading) {
  stats_ = CharacterStats{};
  out_.resize(model_->skeleton().joint_count());
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings_, model_->schema().trajectory_offsets, model_->fps(), position, facing);
  prediction_age_ = 0.0f;
  out_.positions[0] = on_ground(position);
  out_.rotations[0] = facing;
  // Start from the projection of a standing query: mean pose features (zero once normalised),
  // trajectory in place, no constraint.
  std::fill(query_.begin(), query_.end(), 0.0f);
  const ProjectMatchJob match{&playback_.evaluator(), query_, projected_};
  const bool projected = build_query(query_.data()) && match.run();
  if (!projected) std::fill(projected_.begin(), projected_.end(), 0.0f);
  playback_.start(projected_.data(), out_, stats_);
  update_globals(model_->skeleton().parents);
  feet_.release_all();
  action_ = Action{};
  action_end_ = ActionEnd{};
  leave_pending_ = false;
  gameplay_.reset_idle();
  constraint_taken();  // the first update projects under the game's constraint (or state), if any
  constraint_changed_ = !constraint_.allows_all() || gameplay_.has_state();
  event_count_ = 0;
  tags_before_ = current_tags();
  for (size_t k = 0; k < contacts_before_.size(); ++k) contacts_before_[k] = playback_.in_contact(int(k)) ? 1 : 0;
  begin_root_motion();
  end_root_motion();
  return projected;
}

void LearnedCharacter::update(const GamepadInput& input, float raw_dt) {
  const float dt = begin_frame(input, raw_dt);
  if (projection_due()) {
    const ProjectMatchJob match{&playback_.evaluator(), query_, projected_};
    if (take_projection(build_query() && match.run(), projected_.data())) {
      feet_.restore_pelvis(out_);  // blend from the animated pose
      playback_.transition(projected_.data(), out_, stats_);
    }
  }
  playback_.advance(dt, settings_.inertialization_halflife, out_, stats_);
  end_frame(dt);
}

float LearnedCharacter::begin_frame(const GamepadInput& input, float raw_dt) {
  begin_root_motion();
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  prediction_age_ += dt;
  frame_dt_ = dt;
  update_gameplay();
  return dt;
}

void LearnedCharacter::update_gameplay() {
  action_end_.begin_update();
  event_count_ = 0;
  const float desired_speed = length(steering_.desired_velocity());
  if (action_.active && action_.settings.interruptible && desired_speed > kActionInterruptSpeed) end_action(true, 0.0f);
  if (gameplay_.update_idle(desired_speed, action_.active)) constraint_taken();
}

bool LearnedCharacter::projection_due() const {
  if (constraint_changed_ || leave_pending_) return true;
  if (action_.active) return false;  // the action's states play on until its run ends
  const bool leaving = !constraint_unmet_ && leaving_constraint();
  return steering_.search_due() || prediction_age_ >= settings_.max_prediction || leaving;
}

void LearnedCharacter::end_frame(float dt) {
  move_root(dt);
  update_globals(model_->skeleton().parents);
  close_frame();
}

void LearnedCharacter::move_root(float dt) {
  // Actions drive the root themselves. Idle states (by their tags: the importer's `standing` has
  // the root still) keep it still and pulled to the resting simulated root: a decoded standing
  // pose's root velocity is a few cm/s off zero (bandai-loco/normal + actions, `quick-tags`: 8 cm/s
  // of drift and 3-5 deg/s of turn when it drives the root).
  const bool idle_still = gameplay_.idle() && !constraint_unmet_ && constraint_.allows(current_tags());
  const bool in_place = (action_.active && action_.settings.root == ActionRoot::InPlace) || idle_still;
  const bool root_driven = action_.active;
  steering_.integrate_root(in_place ? Vec3{} : playback_.local_root_velocity(),
                           in_place ? Vec3{} : playback_.local_root_angular(), dt, out_.positions[0],
                           out_.rotations[0], out_.velocities[0], out_.angular[0], !root_driven);
  if (root_driven) steering_.hold_at(out_.positions[0], out_.rotations[0], out_.velocities[0]);
  close_gameplay(dt);
}

void LearnedCharacter::close_frame() {
  if (settings_.foot_lock) {  // the decoder's contacts (close_gameplay took this update's)
    feet_.apply(contacts_before_.data(), settings_.foot_unlock_distance, settings_.foot_blend_halflife, frame_dt_,
                model_->skeleton().parents, out_, global_positions_, global_rotations_);
  }
  steering_.end_update(out_.positions[0], out_.rotations[0]);
  end_root_motion();
}

void LearnedCharacter::close_gameplay(float dt) {
  for (size_t k = 0; k < contacts_before_.size(); ++k) {
    const uint8_t now = playback_.in_contact(int(k)) ? 1 : 0;
    if (now != 0 && contacts_before_[k] == 0) add_event(int(k), dt);
    contacts_before_[k] = now;
  }
  const TagMask tags = current_tags(), changed = tags ^ tags_before_;
  for (int t = 0; changed != 0 && t < model_->tag_count(); ++t) {
    if ((changed >> t & 1) != 0) add_event(model_->tag_event(t) + ((tags >> t & 1) != 0 ? 0 : 1), dt);
  }
  tags_before_ = tags;
  if (!action_.active || !action_.entered) return;
  action_.seconds_left -= dt;
  if (action_over(tags)) end_action(true, dt);
}

bool LearnedCharacter::action_over(TagMask tags) const {
  // The stepper's own count of the seconds left drifts over long runs (bandai-actions' kick, 11.9 s:
  // down to 0.45 s a second near its end); the time since the entry does not.
  const float half_frame = 0.5f / model_->fps();
  return (tags & action_.tags) != action_.tags || action_.seconds_left < half_frame ||
         model_->seconds_left(playback_.playing_state(), action_.end_tag) < half_frame;
}

void LearnedCharacter::add_event(int name, float time) {
  if (size_t(event_count_) < events_.size()) events_[size_t(event_count_)] = CharacterEvent{name, -1, time};
  ++event_count_;
}

int LearnedCharacter::events(CharacterEvent* out, int capacity) const {
  const int stored = std::min(event_count_, int(events_.size()));
  for (int e = 0; e < stored && e < capacity; ++e) out[e] = events_[size_t(e)];
  return action_end_.report(out, event_count_, capacity, -1);
}

bool LearnedCharacter::play_action(TagMask tags, const ActionSettings& settings) {
  const TagMask actions = tags & model_->action_tags();
  if (actions == 0 || (tags & ~model_->tags().all()) != 0) return false;
  int end_tag = 0;
  while ((actions >> end_tag & 1) == 0) ++end_tag;
  if (action_.active) end_action(false, 0.0f);  // replaced: it ends too
  action_ = Action{true, false, tags, end_tag, settings};
  leave_pending_ = false;
  constraint_taken();
  return true;
}

bool LearnedCharacter::play_action(TagMask tags, const ActionSettings& settings, std::string& error) {
  if (play_action(tags, settings)) return true;
  const TagNames& names = model_->tags();
  const std::string actions = names.names_of(model_->action_tags());
  error = (tags & ~names.all()) != 0 ? "tag bits beyond the model's " + std::to_string(names.size()) + " tags"
                                     : "'" + names.names_of(tags) + "' holds no action tag of the model (" +
                                           (actions.empty() ? std::string("it has none: [tags] actions of its preset")
                                                            : "its action tags: " + actions) + ")";
  return false;
}

void LearnedCharacter::cancel_action() {
  if (action_.active) end_action(false, 0.0f);
}

void LearnedCharacter::end_action(bool now, float time) {
  action_.active = false;
  action_end_.mark(now, time);
  constraint_taken();
  leave_pending_ = true;  // the next update projects under the game's constraint, whatever the cost
}

void LearnedCharacter::constraint_taken() {
  if (action_.active && action_.entered) return;  // the game's constraint applies when the action ends
  constraint_ = action_.active ? TagConstraint{action_.tags, 0, 0} : gameplay_.combined();
  const TagMask starts = action_.active ? TagMask(1) << action_.end_tag : 0;  // an action starts its run
  model_->constraint_code(constraint_, starts, query_.data() + model_->feature_dims());
  constraint_changed_ = true;
  constraint_unmet_ = false;
}

bool LearnedCharacter::build_query() { return build_query(playback_.state().data() + model_->latent()); }

bool LearnedCharacter::build_query(const float* pose_features) {
  const size_t dims = size_t(model_->feature_dims());
  QueryJob query = query_job_for(*model_);
  query.pose_features = Span<const float>(pose_features, dims);
  query.root = RootSample{on_ground(out_.positions[0]), out_.rotations[0]};
  query.trajectory = steering_.trajectory();
  query.query = Span<float>(query_.data(), dims);
  return query.run();
}

float LearnedCharacter::query_cost(const float* state) const {
  const int latent = model_->latent();
  float cost = 0.0f;
  for (int i = 0; i < model_->feature_dims(); ++i) {
    const float d = state[latent + i] - query_[size_t(i)];
    cost += d * d;
  }
  return cost;
}

bool LearnedCharacter::take_projection(bool projected, float* state) {
  steering_.searched(stats_);
  if (!projected) {
    ++stats_.nonfinite_states;
    return false;
  }
  playback_.keep_in_range(state, stats_);
  const bool forced = prediction_age_ >= settings_.max_prediction;
  // Into and out of an action the states are far apart: a latent blend between them decodes poses
  // of neither (bandai-actions' wave entered from walking: a joint at 10.5 m/s, 3.3 inertialized).
  const bool action_edge = leave_pending_ || (action_.active && !action_.entered);
  if (!projection_wins(state, forced)) return false;
  if (action_edge) playback_.inertialize_next();
  stats_.forced_projections += forced ? 1 : 0;
  ++stats_.transitions;
  prediction_age_ = 0.0f;
  if (action_.active && !action_.entered) action_.seconds_left = model_->seconds_left(state, action_.end_tag);
  action_.entered = action_.active;
  return true;
}

bool LearnedCharacter::projection_wins(const float* state, bool forced) {
  const bool must_leave = constraint_changed_ || leave_pending_ || leaving_constraint();
  const bool ending = leave_pending_;
  constraint_changed_ = leave_pending_ = false;
  if (!constraint_.allows_all()) {
    stats_.constraint_searches += must_leave ? 1 : 0;
    constraint_unmet_ = !constraint_.allows(model_->state_tags(state));
    stats_.unsatisfied_searches += constraint_unmet_ ? 1 : 0;
    if (constraint_unmet_) {
      if (action_.active) end_action(true, 0.0f);  // no state of the action's tags: it ends at once
      return must_leave && forced;  // never from an allowed state to a forbidden one
    }
    if (must_leave) return true;
  }
  // Kleanthous & Martini 2023 Sec. 6.3.1: keep the playing prediction when the projected one is
  // not better (the first projection after an action ends is taken whatever its cost).
  return forced || ending || query_cost(state) + gameplay_.transition_cost() < query_cost(playback_.state().data());
}

void LearnedCharacter::played_trajectory(Vec3* positions, Vec3* directions) const {
  trajectory_of_features(model_->schema(), network_state().data() + model_->latent(), model_->feature_offset(),
                         model_->feature_scale(), positions, directions);
}

}  // namespace lmm
