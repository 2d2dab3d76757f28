#include "lmm/motion/controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "lmm/core/springs.hpp"

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

// The table a `[name]` header line opens; false with a message for an unknown, malformed or
// repeated header (`seen` holds the tables opened so far).
bool parse_table_header(const std::string& line, std::vector<std::string>& seen, std::string& table,
                        std::string& error) {
  const size_t close = line.find(']');
  table = close == std::string::npos ? "" : trim(line.substr(1, close - 1));
  if (close != line.size() - 1 || (table != "speeds" && table != "springs")) {
    error = "unknown table '" + line + "' (a controller config has [speeds] and [springs])";
    return false;
  }
  if (std::find(seen.begin(), seen.end(), table) != seen.end()) {
    error = "table [" + table + "] is given twice";
    return false;
  }
  seen.push_back(table);
  return true;
}

}  // namespace

bool parse_controller_config(const std::string& text, std::vector<ControllerValue>& values, std::string& error) {
  std::vector<ControllerValue> parsed;
  std::vector<std::string> tables;
  std::istringstream in(text);
  std::string raw, table;
  for (int line_number = 1; std::getline(in, raw); ++line_number) {
    const std::string line = trim(raw.substr(0, raw.find('#')));
    std::string problem;
    if (line.empty()) continue;
    if (line.front() == '[') {
      parse_table_header(line, tables, table, problem);
    } else if (table.empty()) {
      problem = "'" + line + "' is outside the [speeds] and [springs] tables";
    } else {
      parse_value(table, line, parsed, problem);
    }
    if (!problem.empty()) {
      error = std::to_string(line_number) + ": " + problem;
      return false;
    }
  }
  values = std::move(parsed);
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
