#include "lmm/motion/controller.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "lmm/core/springs.hpp"
#include "lmm/core/text.hpp"

namespace lmm {
namespace {

constexpr Vec3 kUp{0.0f, 1.0f, 0.0f};

float mix(float a, float b, float t) { return a + (b - a) * t; }

}  // namespace

namespace {

// The tunables a controller config may set, by [table] and key, with their accepted range.
struct ControllerKey {
  const char* table;
  const char* key;
  float ControllerSettings::*field;
  float lo, hi;
  const char* unit;
};
const ControllerKey kControllerKeys[] = {
    {"speeds", "walk_forward", &ControllerSettings::walk_forward, 0.01f, kMaxSpeed, "m/s"},
    {"speeds", "walk_side", &ControllerSettings::walk_side, 0.01f, kMaxSpeed, "m/s"},
    {"speeds", "walk_back", &ControllerSettings::walk_back, 0.01f, kMaxSpeed, "m/s"},
    {"speeds", "run_forward", &ControllerSettings::run_forward, 0.01f, kMaxSpeed, "m/s"},
    {"speeds", "run_side", &ControllerSettings::run_side, 0.01f, kMaxSpeed, "m/s"},
    {"speeds", "run_back", &ControllerSettings::run_back, 0.01f, kMaxSpeed, "m/s"},
    {"springs", "velocity_halflife", &ControllerSettings::velocity_halflife, 0.001f, 10.0f, "s"},
    {"springs", "rotation_halflife", &ControllerSettings::rotation_halflife, 0.001f, 10.0f, "s"},
};

const ControllerKey* find_key(const std::string& table, const std::string& key) {
  for (const ControllerKey& k : kControllerKeys) {
    if (table == k.table && key == k.key) return &k;
  }
  return nullptr;
}

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::string number_text(float v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// One `key = number` line of `table`; false with a message (without the line number).
bool parse_value(const std::string& table, const std::string& line, std::vector<ControllerValue>& values,
                 std::string& error) {
  const size_t equals = line.find('=');
  const std::string key = trim(line.substr(0, equals));
  if (equals == std::string::npos || key.empty()) {
    error = "expected 'key = number', got '" + line + "'";
    return false;
  }
  const std::string where = "[" + table + "]: ";
  const ControllerKey* k = find_key(table, key);
  if (k == nullptr) {
    error = where + "unknown key '" + key + "'";
    return false;
  }
  for (const ControllerValue& v : values) {
    if (v.key == key) {
      error = where + "'" + key + "' is given twice";
      return false;
    }
  }
  const std::string text = trim(line.substr(equals + 1));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    error = where + "'" + key + "' must be a number";
    return false;
  }
  const float stored = float(value);  // compared as stored, so that a bound written as text is accepted
  if (!(stored >= k->lo && stored <= k->hi)) {
    error = where + "'" + key + "' = " + text + " is outside [" + number_text(k->lo) + ", " + number_text(k->hi) +
            "] " + k->unit;
    return false;
  }
  values.push_back(ControllerValue{key, stored});
  return true;
}

// Whether `name` is a state name: letters, digits, '_' and '-' (a bare TOML key) that
// name_problem accepts (not empty, not reserved).
bool valid_state_name(const std::string& name) {
  return name_problem(name).empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// Whether `table` names a [states.NAME] table.
bool state_table(const std::string& table) { return table.rfind("states.", 0) == 0; }

// The table a `[name]` header line opens; false with a message for an unknown, malformed or
// repeated header, or one state table too many (`seen` holds the tables opened so far).
bool parse_table_header(const std::string& line, std::vector<std::string>& seen, std::string& table,
                        std::string& error) {
  const size_t close = line.find(']');
  table = close == std::string::npos ? "" : trim(line.substr(1, close - 1));
  const bool state = state_table(table) && valid_state_name(table.substr(7));
  if (close != line.size() - 1 || (table != "speeds" && table != "springs" && !state)) {
    error = "unknown table '" + line + "' (a controller config has [speeds], [springs] and [states.NAME], NAME "
            "of letters, digits, '_' and '-', at most " + std::to_string(kMaxNameBytes) + ", not none or cancel)";
    return false;
  }
  if (std::find(seen.begin(), seen.end(), table) != seen.end()) {
    error = "table [" + table + "] is given twice";
    return false;
  }
  if (state && std::count_if(seen.begin(), seen.end(), state_table) >= kMaxStates) {
    error = "more than " + std::to_string(kMaxStates) + " [states.NAME] tables";
    return false;
  }
  seen.push_back(table);
  return true;
}

// A one-line array of quoted names (`["a", "b"]`, each one name_problem accepts); false with the
// problem of the first bad name in `problem` (or none when the array itself is malformed).
bool parse_name_array(const std::string& text, std::vector<std::string>& names, std::string& problem) {
  names.clear();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  const std::string inside = trim(text.substr(1, text.size() - 2));
  for (size_t at = 0; at < inside.size();) {
    const size_t close = inside.find('"', at + 1);
    if (inside[at] != '"' || close == std::string::npos) return false;
    const std::string name = inside.substr(at + 1, close - at - 1);
    const std::string bad = name_problem(name);
    if (!bad.empty()) {
      problem = "tag '" + printable(name) + "' " + bad;
      return false;
    }
    names.push_back(name);
    const size_t comma = inside.find_first_not_of(" \t", close + 1);
    if (comma == std::string::npos) break;
    if (inside[comma] != ',') return false;
    at = inside.find_first_not_of(" \t", comma + 1);
    if (at == std::string::npos) return false;
  }
  return true;
}

// One `key = value` line of a [states.NAME] table into `state` (`keys`: those given so far);
// false with a message.
bool parse_state_value(const std::string& line, StateConfig& state, std::vector<std::string>& keys,
                       std::string& error) {
  const size_t equals = line.find('=');
  const std::string key = trim(line.substr(0, equals)), value = equals == std::string::npos ? "" : trim(line.substr(equals + 1));
  const std::string where = "[states." + state.name + "]: ";
  if (equals == std::string::npos || key.empty()) {
    error = "expected 'key = value', got '" + line + "'";
  } else if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
    error = where + "'" + key + "' is given twice";
  } else if (key == "require" || key == "require_any" || key == "exclude") {
    std::vector<std::string>& names = key == "require" ? state.require : key == "exclude" ? state.exclude : state.require_any;
    std::string problem;
    if (!parse_name_array(value, names, problem)) {
      error = where + "'" + key + (problem.empty() ? "' must be an array of tag names, e.g. [\"walk\"]" : "': " + problem);
    }
  } else if (key == "idle") {
    if (value != "true" && value != "false") error = where + "'idle' must be true or false";
    state.idle = value == "true";
  } else if (key == "transition_cost") {
    char* end = nullptr;
    const double cost = std::strtod(value.c_str(), &end);
    state.transition_cost = float(cost);
    if (value.empty() || end != value.c_str() + value.size() || !(cost >= 0.0 && cost <= kMaxStateTransitionCost)) {
      error = where + "'transition_cost' must be a number in [0, " + number_text(kMaxStateTransitionCost) + "]";
    }
  } else {
    error = where + "unknown key '" + key + "' (require, require_any, exclude, transition_cost, idle)";
  }
  keys.push_back(key);
  return error.empty();
}

}  // namespace

bool parse_controller_config(const std::string& text, std::vector<ControllerValue>& values, std::string& error,
                             std::vector<StateConfig>* states) {
  std::vector<ControllerValue> parsed;
  std::vector<StateConfig> parsed_states;
  std::vector<std::string> tables, state_keys;
  std::istringstream in(text);
  std::string raw, table;
  for (int line_number = 1; std::getline(in, raw); ++line_number) {
    const std::string line = trim(raw.substr(0, raw.find('#')));
    std::string problem;
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (parse_table_header(line, tables, table, problem) && state_table(table)) {
        parsed_states.push_back(StateConfig{table.substr(7), {}, {}, {}, 0.0f, true});
        state_keys.clear();
      }
    } else if (table.empty()) {
      problem = "'" + line + "' is outside the [speeds], [springs] and [states.NAME] tables";
    } else if (state_table(table)) {
      parse_state_value(line, parsed_states.back(), state_keys, problem);
    } else {
      parse_value(table, line, parsed, problem);
    }
    if (!problem.empty()) {
      error = std::to_string(line_number) + ": " + problem;
      return false;
    }
  }
  values = std::move(parsed);
  if (states != nullptr) *states = std::move(parsed_states);
  return true;
}

void apply_controller_values(const std::vector<ControllerValue>& values, ControllerSettings& settings) {
  for (const ControllerValue& v : values) {
    for (const ControllerKey& k : kControllerKeys) {
      if (v.key == k.key) settings.*(k.field) = v.value;
    }
  }
}

Vec3 stick_direction(float stick_x, float stick_y, float camera_azimuth) {
  // Stick right is screen right: with the camera looking along +Z that is world -X.
  Vec3 local{-stick_x, 0.0f, stick_y};
  const float largest = std::max(std::fabs(stick_x), std::fabs(stick_y));
  if (largest > 1.0f) local = local / largest;  // first, so that a huge value does not square to infinity
  const float n = length(local);
  if (n > 1.0f) local = local / n;
  return rotate(quat_from_angle_axis(camera_azimuth, kUp), local);
}

Vec3 desired_velocity(const GamepadInput& input, Quat rotation, const ControllerSettings& s) {
  const float gait = std::clamp(input.gait, 0.0f, 1.0f);
  const float forward = mix(s.walk_forward, s.run_forward, gait);
  const float side = mix(s.walk_side, s.run_side, gait);
  const float back = mix(s.walk_back, s.run_back, gait);
  const Vec3 local = inverse_rotate(rotation, stick_direction(input.left_x, input.left_y, input.camera_azimuth));
  const Vec3 scaled{local.x * side, 0.0f, local.z * (local.z > 0.0f ? forward : back)};
  return rotate(rotation, scaled);
}

Quat desired_rotation(const GamepadInput& input, Quat current, Vec3 velocity) {
  if (input.strafe) {
    const bool aiming = input.right_x * input.right_x + input.right_y * input.right_y > 0.0001f;
    const Vec3 direction = aiming ? stick_direction(input.right_x, input.right_y, input.camera_azimuth)
                                  : rotate(quat_from_angle_axis(input.camera_azimuth, kUp), Vec3{0, 0, 1});
    return quat_from_heading(direction);
  }
  if (input.left_x * input.left_x + input.left_y * input.left_y > 0.0001f && length(velocity) > 1e-4f) {
    return quat_from_heading(velocity);
  }
  return current;
}

SimulatedRoot::Springs SimulatedRoot::springs_towards(Vec3 desired_velocity, Quat desired_rotation,
                                                      const ControllerSettings& s) const {
  return Springs{velocity_spring(velocity, acceleration, desired_velocity, s.velocity_halflife),
                 rotation_spring(rotation, angular_velocity, desired_rotation, s.rotation_halflife)};
}

SimulatedRoot SimulatedRoot::after(const Springs& springs, float seconds, Decay& decay) const {
  SimulatedRoot next = *this;
  advance(springs.velocity, seconds, decay.velocity(springs.velocity.y, seconds), next.position, next.velocity,
          next.acceleration);
  advance(springs.rotation, seconds, decay.rotation(springs.rotation.y, seconds), next.rotation, next.angular_velocity);
  return next;
}

void SimulatedRoot::update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& s, float dt,
                           Decay& decay) {
  *this = after(springs_towards(desired_velocity, desired_rotation, s), dt, decay);
}

void SimulatedRoot::update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& s, float dt) {
  Decay fresh;
  update(desired_velocity, desired_rotation, s, dt, fresh);
}

SimulatedRoot SimulatedRoot::predict(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& s,
                                     float seconds) const {
  Decay fresh;
  return after(springs_towards(desired_velocity, desired_rotation, s), seconds, fresh);
}

}  // namespace lmm
