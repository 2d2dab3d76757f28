#include "lmm/character/gameplay_control.hpp"

#include <algorithm>
#include <utility>

#include "lmm/core/text.hpp"

namespace lmm {

void GameplayControl::init(const TagNames& tags, TagMask kept_out, const IdleSettings& idle,
                           const TagConstraint& constraint, float transition_cost) {
  tags_ = &tags;
  kept_out_ = kept_out;
  idle_settings_ = idle;
  game_ = constraint;
  idle_constraint_ = TagConstraint{tags.known_tags(idle.require), 0, tags.known_tags(idle.exclude)};
  transition_cost_ = default_transition_cost_ = transition_cost;
  idle_ = false;
  idle_allowed_ = true;
  states_.clear();
  state_ = -1;
}

bool GameplayControl::set_states(const std::vector<StateConfig>& configs, std::string& error) {
  std::vector<State> states;
  for (const StateConfig& config : configs) {
    const std::string problem = name_problem(config.name);
    if (!problem.empty()) {
      error = "state '" + printable(config.name) + "' " + problem;
      return false;
    }
    const bool repeated = std::any_of(states.begin(), states.end(), [&](const State& s) { return s.name == config.name; });
    if (repeated) {
      error = "state '" + config.name + "' is defined twice";
      return false;
    }
    State state{config.name, {}, config.transition_cost, config.idle};
    const std::pair<const std::vector<std::string>*, TagMask*> sets[] = {{&config.require, &state.constraint.require_all},
                                                                        {&config.require_any, &state.constraint.require_any},
                                                                        {&config.exclude, &state.constraint.exclude}};
    for (const auto& [names, mask] : sets) {
      for (const std::string& name : *names) {
        std::string problem;
        TagMask bit = 0;
        if (!tags_->tag_mask(name, bit, problem)) {
          error = "state '" + config.name + "': " + problem;
          return false;
        }
        *mask |= bit;
      }
    }
    states.push_back(std::move(state));
  }
  const std::string current(state());
  states_ = std::move(states);
  state_ = -1;
  if (!current.empty() && !set_state(current)) leave_state();
  return true;
}

void GameplayControl::leave_state() {
  state_ = -1;
  game_ = TagConstraint{};
  transition_cost_ = default_transition_cost_;
  idle_allowed_ = true;
}

bool GameplayControl::set_state(std::string_view name) {
  for (size_t i = 0; i < states_.size(); ++i) {
    if (states_[i].name != name) continue;
    state_ = int(i);
    transition_cost_ = states_[i].transition_cost;
    idle_allowed_ = states_[i].idle;
    game_ = states_[i].constraint;
    return true;
  }
  return false;
}

std::string GameplayControl::state_names() const {
  std::string names;
  for (const State& s : states_) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

bool GameplayControl::update_idle(float desired_speed, bool action_playing) {
  const bool idle = idle_enabled() && idle_allowed_ && !action_playing && desired_speed < idle_settings_.release_speed;
  if (idle == idle_) return false;
  idle_ = idle;
  return true;
}

TagConstraint GameplayControl::combined() const {
  TagConstraint c = game_;
  if (idle_) {
    c.require_all |= idle_constraint_.require_all;
    c.exclude |= idle_constraint_.exclude & ~c.require_all;
  }
  const bool contradictory = (c.require_all & c.exclude) != 0 || (c.require_any != 0 && (c.require_any & ~c.exclude) == 0);
  return (contradictory ? game_ : c).keeping_out(kept_out_);
}

}  // namespace lmm
