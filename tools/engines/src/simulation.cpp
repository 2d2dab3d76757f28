#include "lmm/engines/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include "lmm/common/report.hpp"
#include "lmm/engines/strafe_metrics.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/plot/svg_plot.hpp"

namespace lmm::pipeline {
namespace {

constexpr float kDegToRad = 0.017453292f;

float stick_length(const GamepadInput& in) { return std::sqrt(in.left_x * in.left_x + in.left_y * in.left_y); }

// Accumulates the per-frame metrics of one character.
struct MetricsAccumulator {
  FootSlide slide;
  LegMetrics legs;
  double jitter_sum = 0.0;
  long jitter_count = 0;
  double trajectory_sum = 0.0;
  long trajectory_count = 0;
};

// The gameplay cells of a script row (optional columns; see load_input_script); throws
// InputError naming `where` for a bad action_in_place.
GameplayCommand gameplay_command(const std::map<std::string, size_t>& column, const std::vector<std::string>& cells,
                                 const std::string& where) {
  const auto cell = [&](const char* name) {
    const auto it = column.find(name);
    std::string text = it == column.end() ? "" : cells[it->second];
    std::replace(text.begin(), text.end(), '|', ',');
    return text;
  };
  GameplayCommand c;
  c.state = cell("state");
  c.require = cell("require");
  c.require_any = cell("require_any");
  c.exclude = cell("exclude");
  c.sets_constraint = !c.require.empty() || !c.require_any.empty() || !c.exclude.empty();
  c.action = cell("action");
  const std::string in_place = cell("action_in_place");
  if (in_place != "" && in_place != "0" && in_place != "1") {
    throw InputError(where + "column 'action_in_place': '" + in_place + "' is not 0 or 1");
  }
  c.in_place = in_place == "1";
  return c;
}

}  // namespace

GamepadInput InputScript::at(float time) const {
  GamepadInput in;
  for (const InputKey& k : keys) {
    if (k.time > time) break;
    in = k.input;
  }
  return in;
}

InputScript load_input_script(const std::string& path) {
  std::istringstream in(read_text_file(path, kMaxTextInputBytes, "input script"));
  InputScript script;
  std::map<std::string, size_t> column;
  std::string line;
  const char* required[] = {"time", "stick_x", "stick_y", "camera_deg", "strafe", "gait"};
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> cells = split_csv(line);
    if (column.empty()) {
      column = csv_columns(cells, where);
      for (const char* name : required) {
        if (!column.count(name)) throw InputError(where + "header lacks column '" + name + "'");
      }
      continue;
    }
    if (cells.size() != column.size()) {
      throw InputError(where + "expected " + std::to_string(column.size()) + " values, found " +
                       std::to_string(cells.size()));
    }
    auto value = [&](const char* name, bool finite_only) {
      float v = 0.0f;
      if (!column.count(name)) return 0.0f;
      if (!parse_number(cells[column[name]], finite_only, v)) {
        throw InputError(where + "column '" + name + "': '" + cells[column[name]] + "' is not a valid number");
      }
      return v;
    };
    InputKey key;
    key.time = value("time", true);
    key.input.left_x = value("stick_x", false);
    key.input.left_y = value("stick_y", false);
    key.input.camera_azimuth = value("camera_deg", false) * kDegToRad;
    key.input.strafe = value("strafe", true) != 0.0f;
    key.input.gait = value("gait", true);
    key.input.right_x = value("right_x", false);
    key.input.right_y = value("right_y", false);
    key.gameplay = gameplay_command(column, cells, where);
    key.line = number;
    if (!script.keys.empty() && key.time < script.keys.back().time) {
      throw InputError(where + "time goes backwards");
    }
    script.keys.push_back(key);
  }
  if (script.keys.empty()) throw InputError(path + ": no input rows");
  return script;
}

namespace {

// Seeded random strafing mixed with forward locomotion: each key (every 1-3 s) strafes (45%:
// facing the camera, held over consecutive strafing keys, stick left, right or back +-15 degrees
// at walk gait), moves (40%: any stick direction, camera drifting, run gait 40% of the time) or
// idles (15%).
InputScript random_strafe_script(uint32_t seed, float seconds) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  InputScript script;
  float camera = 0.0f;
  bool strafing = false;
  for (float t = 0.0f; t < seconds; t += 1.0f + 2.0f * unit(rng)) {
    InputKey key;
    key.time = t;
    const float kind = unit(rng);
    const bool held_facing = strafing && kind < 0.45f;
    if (!held_facing) camera += (unit(rng) - 0.5f) * 1.0f;
    key.input.camera_azimuth = camera;
    strafing = kind < 0.45f;
    if (strafing) {
      const float directions[] = {90.0f, 180.0f, 270.0f};  // stick left, back, right (degrees from up)
      const float degrees = directions[std::min(2, int(3.0f * unit(rng)))] + 30.0f * (unit(rng) - 0.5f);
      const float magnitude = 0.75f + 0.25f * unit(rng);
      key.input.strafe = true;
      key.input.left_x = -magnitude * std::sin(degrees * kDegToRad);
      key.input.left_y = magnitude * std::cos(degrees * kDegToRad);
    } else if (kind < 0.85f) {
      const float angle = 6.2831853f * unit(rng), magnitude = 0.5f + 0.5f * unit(rng);
      key.input.left_x = magnitude * std::sin(angle);
      key.input.left_y = magnitude * std::cos(angle);
      key.input.gait = unit(rng) < 0.4f ? 1.0f : 0.0f;
    }
    script.keys.push_back(key);
  }
  return script;
}

}  // namespace

InputScript random_input_script(uint32_t seed, float seconds, bool strafe) {
  if (strafe) return random_strafe_script(seed, seconds);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  InputScript script;
  float camera = 0.0f;
  for (float t = 0.0f; t < seconds; t += 1.0f + 2.0f * unit(rng)) {
    InputKey key;
    key.time = t;
    camera += (unit(rng) - 0.5f) * 1.0f;
    key.input.camera_azimuth = camera;
    if (unit(rng) > 0.15f) {
      const float angle = 6.2831853f * unit(rng), magnitude = 0.5f + 0.5f * unit(rng);
      key.input.left_x = magnitude * std::sin(angle);
      key.input.left_y = magnitude * std::cos(angle);
    }
    key.input.gait = unit(rng) < 0.4f ? 1.0f : 0.0f;
    unit(rng);  // the strafe roll of earlier versions: kept so that seeded scripts stay the same
    script.keys.push_back(key);
  }
  return script;
}

namespace {

// What the metrics need to know about the characters' skeleton and data.
struct SimShape {
  int joints = 0;
  std::vector<int> contact_joints;
  std::vector<int> legs;   // leg_joints of the contact joints
  int horizon_offset = 0;  // last trajectory offset (frames of the data)
  float fps = 30.0f;
  const Database* db = nullptr;      // the database characters play (null for learned ones)
  std::vector<Travel> clip_travel;   // direction of travel of each clip of `db`
};

// Index of the database clip a character plays (-1: none).
int played_clip(const DatabaseCharacter& character, const SimShape& shape) {
  return clip_index(*shape.db, character.current_frame());
}
int played_clip(const LearnedCharacter&, const SimShape&) { return -1; }

// Whether two inputs are exactly the same (every stick, the camera, strafe and gait).
bool same_input(const GamepadInput& a, const GamepadInput& b) {
  return a.left_x == b.left_x && a.left_y == b.left_y && a.right_x == b.right_x && a.right_y == b.right_y &&
         a.camera_azimuth == b.camera_azimuth && a.strafe == b.strafe && a.gait == b.gait;
}

// Seconds an unchanged input must be held before a frame counts for the strafing metrics.
constexpr float kSettleSeconds = 0.5f;

// The last trajectory offset of `schema`; InputError when it has none (nothing to steer with).
int steering_horizon(const FeatureSchema& schema) {
  if (schema.trajectory_offsets.empty()) {
    throw InputError("feature schema '" + schema.name + "' has no trajectory groups to steer with");
  }
  return schema.trajectory_offsets.back();
}

// The gameplay of a run's characters: their states, the scripts' commands as their keys come
// due, and a Recorder each (GameplayRecorder or LearnedGameplayRecorder), made by make_recorder().
template <typename Character, typename Recorder>
class ScriptedGameplay {
 public:
  ScriptedGameplay(std::function<std::unique_ptr<Recorder>()> make_recorder, const std::vector<StateConfig>& states)
      : make_recorder_(std::move(make_recorder)), states_(states) {}
  // Defines the states on a new character and starts measuring it.
  void begin(Character& character) {
    std::string error;
    if (!states_.empty() && !character.set_states(states_, error)) throw InputError("controller config: " + error);
    recorder_ = make_recorder_();
    next_key_ = 0;
  }
  // Applies the commands of the keys of `script` due by `time`.
  void before(Character& character, const InputScript& script, float time) {
    for (; next_key_ < script.keys.size() && script.keys[next_key_].time <= time; ++next_key_) {
      const InputKey& key = script.keys[next_key_];
      if (key.gameplay.empty()) continue;
      recorder_->apply(character, key.gameplay,
                       key.line > 0 ? "input script line " + std::to_string(key.line) : "random key " + std::to_string(next_key_));
    }
  }
  // Measures the update just made (see GameplayRecorder::record).
  void after(const Character& character, float stick, float time, int before, int transitions_before,
             const std::vector<Vec3>& previous) {
    recorder_->record(character, stick, time, before, transitions_before, previous);
  }
  // Adds the character's measurements to `m`.
  void end(const Character& character, SimMetrics& m) { recorder_->finish(character.stats(), m.gameplay); }

 private:
  std::function<std::unique_ptr<Recorder>()> make_recorder_;
  const std::vector<StateConfig>& states_;
  std::unique_ptr<Recorder> recorder_;
  size_t next_key_ = 0;
};

// Frame played by a character (-1 for a learned one).
int played_frame(const DatabaseCharacter& character) { return character.current_frame(); }
int played_frame(const LearnedCharacter&) { return -1; }

// Runs every script on a character set up by init(character, index) and measures the run.
template <typename Character, typename Init, typename Gameplay>
SimMetrics simulate(const SimShape& shape, const Init& init, Gameplay& gameplay, const std::vector<InputScript>& scripts,
                    float seconds, float dt, std::vector<CharacterTrack>& tracks) {
  SimMetrics m;
  m.characters = static_cast<int>(scripts.size());
  const double frames = std::floor(double(seconds) / dt + 1e-4);
  if (!(frames * double(scripts.size()) <= kMaxRecordedFrames)) {
    throw InputError(std::to_string(scripts.size()) + " character(s) x " + std::to_string(seconds) + " s at dt " +
                     std::to_string(dt) + " s is more than " + std::to_string(int(kMaxRecordedFrames)) +
                     " recorded frames: raise the time step or shorten the run");
  }
  if (frames < 1.0) {
    throw InputError(std::to_string(seconds) + " s at dt " + std::to_string(dt) +
                     " s is no whole frame: run for at least one time step");
  }
  m.frames = static_cast<int>(frames);
  const int joints = shape.joints;
  const int horizon = std::max(1, static_cast<int>(std::lround(float(shape.horizon_offset) / shape.fps / dt)));
  const int still_window = std::max(1, static_cast<int>(std::lround(0.25f / dt)));
  std::vector<double> update_us;
  MetricsAccumulator acc;
  StrafeMetrics requests(shape.clip_travel);
  tracks.assign(scripts.size(), CharacterTrack{});
  for (size_t c = 0; c < scripts.size(); ++c) {
    Character character;
    init(character, c);
    gameplay.begin(character);
    CharacterTrack& track = tracks[c];
    track.clip.fps = 1.0f / dt;
    track.clip.joints = joints;
    std::vector<Vec3> predicted;  // predicted root `horizon` updates ahead, per frame
    std::vector<Vec3> previous_positions, before_previous;
    float held_since = -1.0f, input_since = 0.0f;
    GamepadInput previous_input;
    for (int f = 0; f < m.frames; ++f) {
      const float time = float(f) * dt;
      const GamepadInput input = scripts[c].at(time);
      gameplay.before(character, scripts[c], time);
      const int frame_before = played_frame(character), transitions_before = character.stats().transitions;
      const auto start = std::chrono::steady_clock::now();
      character.update(input, dt);
      update_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());

      const std::vector<Vec3>& global = character.global_positions();
      track.clip.positions.insert(track.clip.positions.end(), character.local_positions().begin(),
                                  character.local_positions().end());
      track.clip.rotations.insert(track.clip.rotations.end(), character.local_rotations().begin(),
                                  character.local_rotations().end());
      track.root.push_back(character.root_position());
      track.desired.push_back(character.simulation().position);
      predicted.push_back(character.predicted_trajectory().back().position);
      if (f >= horizon) {
        const Vec3 d = track.root.back() - predicted[size_t(f - horizon)];
        acc.trajectory_sum += length(Vec3{d.x, 0.0f, d.z});
        ++acc.trajectory_count;
      }
      bool finite = true;
      for (const Vec3& p : global) {
        finite = finite && is_finite(p);
        m.max_joint_distance_m = std::max(m.max_joint_distance_m, double(length(p - global[0])));
      }
      m.nan_frames += finite ? 0 : 1;
      if (!before_previous.empty()) {
        for (int j = 0; j < joints; ++j) {
          const Vec3 a = (global[size_t(j)] - previous_positions[size_t(j)] * 2.0f + before_previous[size_t(j)]) / (dt * dt);
          acc.jitter_sum += length(a);
          ++acc.jitter_count;
        }
      }
      acc.slide.add(shape.contact_joints, [&](int k) { return character.in_contact(k); }, previous_positions, global,
                    dt);
      acc.legs.add(character.foot_ik_error(), shape.legs, previous_positions, global, dt);
      gameplay.after(character, stick_length(input), time, frame_before, transitions_before, previous_positions);
      before_previous = previous_positions;
      previous_positions = global;
      // "Held": the same stick input (at least half deflected) for 0.5 s.
      const bool held = stick_length(input) >= 0.5f;
      const bool same = std::fabs(input.left_x - previous_input.left_x) + std::fabs(input.left_y - previous_input.left_y) < 0.05f;
      held_since = held ? (held_since < 0.0f || !same ? time : held_since) : -1.0f;
      if (!same_input(input, previous_input)) input_since = time;
      previous_input = input;
      if (time - input_since >= kSettleSeconds) {
        const Quat desired_facing = desired_rotation(input, character.simulation().rotation, character.desired_velocity());
        requests.add(classify_request(input, desired_facing, character.desired_velocity()), character.root_rotation(),
                     character.root_velocity(), desired_facing, character.desired_velocity(),
                     played_clip(character, shape));
      }
      if (held && time - held_since >= 0.5f && f >= still_window) {
        // Standing still: neither moving (0.1 m/s) nor turning (0.3 rad/s) over the window.
        const Vec3 moved = track.root.back() - track.root[size_t(f - still_window)];
        const float turned = length(to_scaled_angle_axis(
            track.clip.rotation(f, 0) * inverse(track.clip.rotation(f - still_window, 0))));
        const float window = still_window * dt;
        if (length(Vec3{moved.x, 0.0f, moved.z}) / window < 0.1f && turned / window < 0.3f) ++m.still_frames;
      }
    }
    track.clip.frames = m.frames;
    m.searches += character.stats().searches;
    m.transitions += character.stats().transitions;
    m.sanitized_inputs += character.stats().sanitized_inputs;
    m.clamped_dt += character.stats().clamped_dt;
    m.forced_projections += character.stats().forced_projections;
    m.nonfinite_states += character.stats().nonfinite_states;
    m.clamped_states += character.stats().clamped_states;
    gameplay.end(character, m);
  }
  m.foot_slide_cm_per_s = acc.slide.mean();
  m.legs = acc.legs;
  m.jitter = acc.jitter_count ? acc.jitter_sum / double(acc.jitter_count) : 0.0;
  m.trajectory_error_m = acc.trajectory_count ? acc.trajectory_sum / double(acc.trajectory_count) : 0.0;
  m.us_per_update = median(update_us);
  m.us_per_update_mean = update_us.empty() ? 0.0 : std::accumulate(update_us.begin(), update_us.end(), 0.0) / double(update_us.size());
  m.strafe = requests.strafe();
  m.forward = requests.forward();
  m.strafe_clip_share = requests.strafe_clip_share();
  m.strafe_frames_per_clip = requests.strafe_frames_per_clip();
  return m;
}

}  // namespace

void add_random_constraints(InputScript& script, const TagNames& tags, TagMask present, uint32_t seed) {
  for (size_t k = 0; k < script.keys.size(); ++k) {
    const GameplayCommand random = random_constraint_command(tags, present, seed * 7919u + uint32_t(k));
    GameplayCommand& command = script.keys[k].gameplay;
    command.sets_constraint = true;
    command.require = random.require;
    command.require_any = random.require_any;
    command.exclude = random.exclude;
  }
}

SimMetrics run_simulation(const std::shared_ptr<const Database>& database, const FeatureSearch& search,
                          const CharacterSettings& settings, const std::vector<InputScript>& scripts, float seconds,
                          float dt, std::vector<CharacterTrack>& tracks, const std::vector<StateConfig>& states) {
  const Database& db = *database;
  const SimShape shape{db.joint_count(), db.contact_joints(), leg_joints(db.skeleton().parents, db.contact_joints()),
                       steering_horizon(db.schema()), db.fps(), &db, clip_travel(db)};
  auto init = [&](DatabaseCharacter& character, size_t c) {
    std::string error;
    if (!character.init(database, search, settings, Vec3{2.0f * float(c), 0.0f, 0.0f}, 0.0f, error)) throw InputError(error);
  };
  ScriptedGameplay<DatabaseCharacter, GameplayRecorder> gameplay(
      [&] { return std::make_unique<GameplayRecorder>(search, dt, settings.inertialization_halflife); }, states);
  return simulate<DatabaseCharacter>(shape, init, gameplay, scripts, seconds, dt, tracks);
}

SimMetrics run_simulation(const std::shared_ptr<const Model>& bundle, const LearnedSettings& settings,
                          const std::vector<InputScript>& scripts, float seconds, float dt,
                          std::vector<CharacterTrack>& tracks, const std::vector<StateConfig>& states) {
  const Model& model = *bundle;
  const SimShape shape{model.skeleton().joint_count(), model.contact_joints(),
                       leg_joints(model.skeleton().parents, model.contact_joints()), steering_horizon(model.schema()),
                       model.fps(), nullptr, {}};
  auto init = [&](LearnedCharacter& character, size_t c) {
    std::string error;
    if (!character.init(bundle, settings, Vec3{2.0f * float(c), 0.0f, 0.0f}, 0.0f, error)) throw InputError(error);
  };
  ScriptedGameplay<LearnedCharacter, LearnedGameplayRecorder> gameplay(
      [&] { return std::make_unique<LearnedGameplayRecorder>(model, dt); }, states);
  return simulate<LearnedCharacter>(shape, init, gameplay, scripts, seconds, dt, tracks);
}

float output_unit_scale(const std::string& units, float source_unit_scale, const std::string& source,
                        std::string& note) {
  note.clear();
  const std::pair<const char*, float> named[] = {{"m", 1.0f}, {"cm", 0.01f}, {"mm", 0.001f}};
  for (const auto& [name, scale] : named) {
    if (units == name) return scale;
  }
  if (units == "file") {
    if (source_unit_scale > 0.0f) return source_unit_scale;
    note = source + " does not record the unit of its source BVH files (written before meta.unit_scale): "
           "writing centimetres; pass --units to choose";
    return 0.01f;
  }
  float scale = 0.0f;
  if (!parse_number(units, true, scale) || !(scale >= kMinUnitScale && scale <= kMaxUnitScale)) {
    throw InputError("--units: '" + units + "' is not file, m, cm, mm or a number of metres per unit in " +
                     range_text(kMinUnitScale, kMaxUnitScale));
  }
  return scale;
}

void LegMetrics::add(float ik_error_m, const std::vector<int>& legs, const std::vector<Vec3>& previous,
                     const std::vector<Vec3>& global, float dt) {
  ik_error_max_cm = std::max(ik_error_max_cm, 100.0 * ik_error_m);
  ik_error_sum_cm += 100.0 * ik_error_m;
  ++updates;
  for (size_t i = 0; i < legs.size() && !previous.empty(); ++i) {
    const size_t j = size_t(legs[i]);
    leg_speed_max_m_s = std::max(leg_speed_max_m_s, double(length(global[j] - previous[j]) / dt));
  }
}

std::vector<int> leg_joints(const std::vector<int>& parents, const std::vector<int>& contact_joints) {
  std::vector<int> legs;
  for (int joint : contact_joints) {
    for (int level = 0, j = joint; level < 4 && j >= 0; ++level, j = parents[size_t(j)]) {
      if (std::find(legs.begin(), legs.end(), j) == legs.end()) legs.push_back(j);
    }
  }
  return legs;
}

void write_motion_files(const std::string& stem, const Skeleton& skeleton, const Clip& clip, float unit_scale,
                        const SkinnedMesh& mesh) {
  write_text_atomic(stem + ".bvh", write_bvh(bvh_from_clip(skeleton, clip, "ZXY", unit_scale)));
  write_text_atomic(stem + ".glb", write_glb(skeleton, {clip}, &mesh));
}

void write_root_csv(const std::string& path, const std::vector<CharacterTrack>& tracks, float dt) {
  std::string text = "t,character,x,z,heading_deg,desired_x,desired_z\n";
  char row[160];
  for (size_t c = 0; c < tracks.size(); ++c) {
    const CharacterTrack& t = tracks[c];
    for (int f = 0; f < t.clip.frames; ++f) {
      const Vec3 forward = rotate(t.clip.rotation(f, 0), Vec3{0, 0, 1});
      std::snprintf(row, sizeof row, "%.4f,%zu,%.4f,%.4f,%.2f,%.4f,%.4f\n", f * dt, c, t.root[size_t(f)].x,
                    t.root[size_t(f)].z, std::atan2(forward.x, forward.z) / kDegToRad,
                    t.desired[size_t(f)].x, t.desired[size_t(f)].z);
      text += row;
    }
  }
  write_text_atomic(path, text);
}

namespace {

constexpr double kFilmCell = 90.0;            // width and height of one filmstrip figure, pixels
constexpr double kFilmPixelsPerMetre = 40.0;  // side-view scale of the filmstrip
constexpr double kFilmStripHeight = 20.0 + kFilmCell + 56.0;  // caption, figures, times and scale bar

// Side-view stick figures of `clip` every `frames_per_cell` frames, `cells` (> 0) of them, below `top`:
// a caption, one figure per cell (character space: forward to the right) on a ground line, its
// time under it, and a scale bar.
std::string filmstrip_svg(const Skeleton& skeleton, const Clip& clip, float dt, int frames_per_cell, int cells,
                          double top) {
  const double margin = 20.0, ground = top + 20.0 + kFilmCell - 5.0;
  char caption[96];
  std::snprintf(caption, sizeof caption, "character 0, side view every %.2g s (forward to the right)",
                frames_per_cell * dt);
  std::string svg = svg_text(margin, top + 12.0, caption);
  std::vector<Vec3> global(size_t(skeleton.joint_count()));
  std::vector<Quat> rotations(size_t(skeleton.joint_count()));
  for (int k = 0; k < cells; ++k) {
    const int f = k * frames_per_cell;
    const double centre = margin + k * kFilmCell + kFilmCell / 2;
    forward_kinematics(skeleton.parents.data(), clip.joints, &clip.position(f, 0), &clip.rotation(f, 0),
                       global.data(), rotations.data());
    const Vec3 root = global[0];
    const Quat facing = clip.rotation(f, 0);
    auto side = [&](Vec3 p) {
      const Vec3 local = inverse_rotate(facing, p - root);
      return std::make_pair(centre + local.z * kFilmPixelsPerMetre, ground - local.y * kFilmPixelsPerMetre);
    };
    char line[200];
    std::snprintf(line, sizeof line, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbbbbb\"/>\n",
                  centre - 0.4 * kFilmCell, ground, centre + 0.4 * kFilmCell, ground);
    svg += line;
    for (int j = 1; j < clip.joints; ++j) {
      const int parent = skeleton.parents[size_t(j)];
      if (parent <= 0) continue;
      const auto a = side(global[size_t(parent)]), b = side(global[size_t(j)]);
      std::snprintf(line, sizeof line, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                    a.first, a.second, b.first, b.second);
      svg += line;
    }
    svg += svg_text(centre, ground + 19.0, tick_label(f * dt, frames_per_cell * dt, "s"), "middle");
  }
  return svg + svg_scale_bar(margin, ground + 40.0, 1.0, kFilmPixelsPerMetre);
}

}  // namespace

void write_svg(const std::string& path, const Skeleton& skeleton, const std::vector<CharacterTrack>& tracks,
               float dt) {
  PlotSpec spec = ground_plane_spec("lmm-sim: root paths, top view");
  for (const CharacterTrack& t : tracks) {
    spec.series.push_back(line_series("desired (simulated) root", "#d62728", 2.0, ground_points(t.desired)));
    spec.series.push_back(line_series("character root", "#1f77b4", 1.5, ground_points(t.root)));
  }
  const RenderedPlot plot = render_plot(spec);
  const int frames_per_cell = std::max(1, static_cast<int>(std::lround(0.5f / dt)));
  const int cells = tracks.empty() ? 0 : std::min(12, tracks[0].clip.frames / frames_per_cell);
  if (cells == 0) {
    write_text_atomic(path, svg_document(plot.width, plot.height, plot.body));
    return;
  }
  const std::string strip = filmstrip_svg(skeleton, tracks[0].clip, dt, frames_per_cell, cells, plot.height);
  const double width = std::max(plot.width, 40.0 + cells * kFilmCell);
  write_text_atomic(path, svg_document(width, plot.height + kFilmStripHeight, plot.body + strip));
}

}  // namespace lmm::pipeline
