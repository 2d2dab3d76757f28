#include "lmm/training/config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "lmm/core/text.hpp"

namespace lmm::training {
namespace {

using Keys = std::set<std::string>;

void check_keys(const toml::table& table, const Keys& allowed, const std::string& where) {
  for (const auto& [key, value] : table) {
    if (allowed.count(std::string(key.str())) == 0) {
      throw std::runtime_error(where + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
}

template <typename T>
void read(const toml::table& t, const char* key, T& out, const std::string& where) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return;
  if constexpr (std::is_same_v<T, bool>) {
    if (!node->is_boolean()) throw std::runtime_error(where + ": '" + key + "' must be true or false");
    out = *node->value<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!node->is_string()) throw std::runtime_error(where + ": '" + key + "' must be a string");
    out = *node->value<std::string>();
  } else {
    const auto v = node->value<double>();
    if (!v) throw std::runtime_error(where + ": '" + key + "' must be a number");
    out = static_cast<T>(*v);
  }
}

void read_sizes(const toml::table& t, const char* key, std::vector<int64_t>& out, const std::string& where) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return;
  const toml::array* array = node->as_array();
  if (array == nullptr) throw std::runtime_error(where + ": '" + key + "' must be an array of sizes");
  out.clear();
  for (const toml::node& item : *array) {
    const auto v = item.value<int64_t>();
    if (!v || *v <= 0) throw std::runtime_error(where + ": '" + key + "' must hold positive integers");
    out.push_back(*v);
  }
}

const toml::table* section(const toml::table& root, const char* name, const std::string& where) {
  const toml::node* node = root.get(name);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) throw std::runtime_error(where + ": '" + name + "' must be a table");
  return node->as_table();
}

// Throws naming `key` of `where` and its accepted `range` unless `ok`.
void require(bool ok, const std::string& where, const char* key, const char* range) {
  if (!ok) throw std::runtime_error(where + ": '" + key + "' must be " + range);
}

// Reads `anneal` of table `t` into `out` where it is set, checked to lie in [0, 1).
void read_anneal(const toml::table& t, double& out, const std::string& where) {
  if (t.get("anneal") == nullptr) return;
  read(t, "anneal", out, where);
  require(out >= 0.0 && out < 1.0, where, "anneal", "at least 0 and below 1");
}

// The distinct tag names of array `key` of `t` (none when it is absent), each one that
// lmm::name_problem accepts; errors name `path` and the line.
std::vector<std::string> tag_list(const toml::table& t, const char* key, const std::string& path) {
  std::vector<std::string> out;
  const toml::node* node = t.get(key);
  if (node == nullptr) return out;
  const std::string where = path + ":" + std::to_string(node->source().begin.line) + ": [tags] " + key;
  const toml::array* names = node->as_array();
  if (names == nullptr) throw std::runtime_error(where + " must be an array of tag names");
  for (const toml::node& item : *names) {
    const auto name = item.value<std::string>();
    if (!name) throw std::runtime_error(where + " must hold strings");
    const std::string problem = name_problem(*name);
    if (!problem.empty()) throw std::runtime_error(where + ": tag '" + printable(*name) + "' " + problem);
    if (std::find(out.begin(), out.end(), *name) != out.end()) {
      throw std::runtime_error(where + ": tag '" + *name + "' is listed twice");
    }
    out.push_back(*name);
  }
  return out;
}

// [tags]: the database tags the state carries and the projector is constrained by.
void read_tags(const toml::table& root, TrainingConfig& c, const std::string& path) {
  const toml::table* t = section(root, "tags", path);
  if (t == nullptr) return;
  const std::string where = path + " [tags]";
  check_keys(*t, {"names", "actions", "enter_actions_freely", "constrained_share"}, where);
  c.tags = tag_list(*t, "names", path);
  c.actions = tag_list(*t, "actions", path);
  read(*t, "enter_actions_freely", c.enter_actions_freely, where);
  require(c.tags.size() <= 64, where, "names", "at most 64 tags");
  for (const std::string& action : c.actions) {
    if (std::find(c.tags.begin(), c.tags.end(), action) == c.tags.end()) {
      throw std::runtime_error(where + ": action '" + action + "' is not one of 'names'");
    }
  }
  // The projector's labels pack each action's run-start bit above the tag bits of a 64-bit mask.
  require(c.tags.size() + c.actions.size() <= 64, where, "actions", "at most 64 tags and actions together");
  read(*t, "constrained_share", c.constrained_share, where);
  require(c.constrained_share >= 0.0 && c.constrained_share <= 1.0, where, "constrained_share", "in [0, 1]");
}

void read_network(const toml::table& root, const char* name, NetworkConfig& n, const std::string& path) {
  const toml::table* t = section(root, name, path);
  if (t == nullptr) return;
  const std::string where = path + " [" + name + "]";
  Keys keys{"experts", "top_k", "expert_hidden", "expert_out", "post_hidden", "hidden", "steps", "batch",
            "learning_rate", "anneal"};
  if (std::string(name) == "stepper") keys.insert("normalize_input");
  check_keys(*t, keys, where);
  read(*t, "normalize_input", n.normalize_input, where);
  read(*t, "steps", n.steps, where);
  read(*t, "batch", n.batch, where);
  read(*t, "learning_rate", n.learning_rate, where);
  read_anneal(*t, n.anneal, where);
  read(*t, "experts", n.experts, where);
  read(*t, "top_k", n.top_k, where);
  read(*t, "expert_out", n.expert_out, where);
  read_sizes(*t, "expert_hidden", n.expert_hidden, where);
  read_sizes(*t, "post_hidden", n.post_hidden, where);
  read_sizes(*t, "hidden", n.hidden, where);
  if (n.learning_rate < 0.0) throw std::runtime_error(where + ": learning_rate must be > 0 (0 or left out: [train]'s)");
  if (n.experts < 0 || (n.experts > 0 && (n.top_k < 1 || n.top_k > n.experts))) {
    throw std::runtime_error(where + ": need experts >= top_k >= 1 (or experts = 0 for a plain MLP)");
  }
}

void read_strings(const toml::table& t, const char* key, std::vector<std::string>& out, const std::string& where) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return;
  const toml::array* array = node->as_array();
  if (array == nullptr) throw std::runtime_error(where + ": '" + key + "' must be an array of strings");
  out.clear();
  for (const toml::node& item : *array) {
    const auto v = item.value<std::string>();
    if (!v || v->empty()) throw std::runtime_error(where + ": '" + key + "' must hold non-empty strings");
    out.push_back(*v);
  }
}

void read_direction(const toml::table& root, DirectionConfig& d, const std::string& path) {
  const toml::table* t = section(root, "direction", path);
  if (t == nullptr) return;
  const std::string where = path + " [direction]";
  check_keys(*t, {"hidden", "window_seconds", "future_seconds", "step_hz", "steps", "batch", "learning_rate", "holdout"},
             where);
  read(*t, "hidden", d.hidden, where);
  read(*t, "window_seconds", d.window_seconds, where);
  read(*t, "future_seconds", d.future_seconds, where);
  read(*t, "step_hz", d.step_hz, where);
  read(*t, "steps", d.steps, where);
  read(*t, "batch", d.batch, where);
  read(*t, "learning_rate", d.learning_rate, where);
  read_strings(*t, "holdout", d.holdout, where);
  if (d.hidden < 1 || d.hidden > 1024 || d.steps < 1 || d.batch < 1 || !(d.learning_rate > 0.0)) {
    throw std::runtime_error(where + ": need 1 <= hidden <= 1024, steps >= 1, batch >= 1 and learning_rate > 0");
  }
  if (!(d.step_hz > 0.0 && d.step_hz <= 240.0) || !(d.future_seconds > 0.0) ||
      !(d.window_seconds > d.future_seconds + 1.0 / d.step_hz) || d.window_seconds * d.step_hz > 4096.0) {
    throw std::runtime_error(where + ": need 0 < step_hz <= 240, future_seconds > 0 and window_seconds > "
                             "future_seconds + one step, at most 4096 steps");
  }
}

void read_phase(const toml::table& root, PhaseConfig& p, const std::string& path) {
  const toml::table* t = section(root, "phase", path);
  if (t == nullptr) return;
  const std::string where = path + " [phase]";
  check_keys(*t, {"channels", "window_seconds", "step_hz", "hidden", "kernel", "steps", "batch", "learning_rate"}, where);
  read(*t, "channels", p.channels, where);
  read(*t, "window_seconds", p.window_seconds, where);
  read(*t, "step_hz", p.step_hz, where);
  read(*t, "hidden", p.hidden, where);
  read(*t, "kernel", p.kernel, where);
  read(*t, "steps", p.steps, where);
  read(*t, "batch", p.batch, where);
  read(*t, "learning_rate", p.learning_rate, where);
  require(p.channels >= 1 && p.channels <= 64, where, "channels", "between 1 and 64");
  require(p.step_hz > 0.0 && p.step_hz <= 240.0, where, "step_hz", "above 0 and at most 240");
  require(p.window_seconds * p.step_hz >= 4.0 && p.window_seconds * p.step_hz <= 1000.0, where, "window_seconds",
          "between 4 and 1000 samples of step_hz (window_seconds x step_hz)");
  require(p.hidden >= 1 && p.hidden <= 1024, where, "hidden", "between 1 and 1024");
  require(p.kernel >= 1 && p.kernel <= 255 && p.kernel % 2 == 1, where, "kernel", "an odd number between 1 and 255");
  require(p.steps >= 1, where, "steps", "at least 1");
  require(p.batch >= 1 && p.batch <= 65536, where, "batch", "between 1 and 65536");
  require(p.learning_rate > 0.0 && p.learning_rate < 1.0, where, "learning_rate", "above 0 and below 1");
}

// The whole text of preset file `path`; throws naming it when it is missing, not a regular file
// or unreadable.
std::string read_preset_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::runtime_error("training config " + path + " not found");
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("training config " + path + " is not a file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in.is_open() || in.bad()) throw std::runtime_error("training config " + path + " cannot be read");
  return text.str();
}

// The parsed preset `path` (text in `text`).
toml::table parse_preset(const std::string& path, const std::string& text) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

// Writes `overlay`'s keys over `base`: tables merge key by key, any other value replaces.
void merge_tables(toml::table& base, const toml::table& overlay) {
  for (const auto& [key, value] : overlay) {
    toml::table* into = base[key].as_table();
    if (into != nullptr && value.is_table()) {
      merge_tables(*into, *value.as_table());
    } else {
      base.insert_or_assign(key, value);
    }
  }
}

// Presets a chain of `extends` may pass through.
constexpr int kMaxExtendsDepth = 8;

// The preset file an `extends` value of preset `path` names: a path as given, a name as the file
// NAME.toml beside `path` or else as the shipped preset of `config_dir`.
std::string extended_file(const std::string& path, const std::string& name, const std::string& config_dir) {
  const std::filesystem::path beside = std::filesystem::path(path).parent_path() / (name + ".toml");
  const bool is_name = name.find('/') == std::string::npos && name.find(".toml") == std::string::npos;
  if (is_name && std::filesystem::exists(beside)) return beside.string();
  return training_config_file(name, config_dir);
}

// Preset `path` with its `extends` chain resolved: the named preset (extended_file) read first and
// this file's keys written over it. `text` is set to the file's own text, or for an extending
// preset to the merged table (what training folders record).
toml::table resolved_preset(const std::string& path, const std::string& config_dir, std::string& text, int depth) {
  text = read_preset_text(path);
  toml::table root = parse_preset(path, text);
  const toml::node* extends = root.get("extends");
  if (extends == nullptr) return root;
  if (!extends->is_string()) throw std::runtime_error(path + ": 'extends' must be a preset name or path");
  if (depth >= kMaxExtendsDepth) throw std::runtime_error(path + ": 'extends' chain longer than 8 presets (a cycle?)");
  const std::string base_path = extended_file(path, *extends->value<std::string>(), config_dir);
  std::string base_text;
  toml::table merged = resolved_preset(base_path, config_dir, base_text, depth + 1);
  root.erase("extends");
  merge_tables(merged, root);
  std::ostringstream out;
  out << "# " << path << " (extends " << base_path << ") with its base's keys resolved\n" << merged << "\n";
  text = out.str();
  return merged;
}

}  // namespace

TagMask kept_out_tags(const TrainingConfig& c) {
  TagMask mask = 0;
  for (const int64_t t : action_indices(c)) mask |= c.enter_actions_freely ? 0 : TagMask(1) << t;
  return mask;
}

std::vector<int64_t> action_indices(const TrainingConfig& c) {
  std::vector<int64_t> out;
  for (const std::string& a : c.actions) out.push_back(int64_t(std::find(c.tags.begin(), c.tags.end(), a) - c.tags.begin()));
  return out;
}

TrainingConfig for_network(TrainingConfig config, const NetworkConfig& network) {
  if (network.steps > 0) config.steps = network.steps;
  if (network.batch > 0) config.batch = network.batch;
  if (network.learning_rate > 0.0) config.learning_rate = network.learning_rate;
  if (network.anneal >= 0.0) config.anneal = network.anneal;
  return config;
}

double scheduled_learning_rate(const TrainingConfig& c, double progress, double current) {
  const double p = std::clamp(progress, 0.0, 1.0);
  if (c.schedule == "linear") return c.learning_rate * (1.0 - p);
  if (c.schedule == "cosine") return c.learning_rate * 0.5 * (1.0 + std::cos(3.141592653589793 * p));
  return current;
}

double anneal_factor(const TrainingConfig& c, double progress) {
  const double left = 1.0 - std::clamp(progress, 0.0, 1.0);
  return c.anneal > 0.0 && left < c.anneal ? left / c.anneal : 1.0;
}

TrainingConfig with_schedule(TrainingConfig config, int64_t steps, int64_t batch, double learning_rate) {
  config.steps = steps;
  config.batch = batch;
  config.learning_rate = learning_rate;
  return config;
}

std::string training_config_file(const std::string& name_or_path, const std::string& config_dir) {
  const std::string suffix = ".toml";
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() >= suffix.size() &&
                        name_or_path.compare(name_or_path.size() - suffix.size(), suffix.size(), suffix) == 0);
  if (is_path) return name_or_path;
  if (name_or_path.empty()) throw std::runtime_error("training config: empty preset name");
  const std::string path = config_dir + "/training/" + name_or_path + ".toml";
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("training config '" + name_or_path + "' is not a shipped preset (no " + path +
                             "); give your own file as a path containing '/' or ending in .toml");
  }
  return path;
}

TrainingConfig load_training_config(const std::string& name_or_path, const std::string& config_dir) {
  const std::string path = training_config_file(name_or_path, config_dir);
  TrainingConfig c;
  const toml::table root = resolved_preset(path, config_dir, c.text, 0);
  if (root.empty()) throw std::runtime_error(path + ": empty preset (no keys)");
  c.source = path;
  check_keys(root, {"name", "model", "decoder", "stepper", "projector", "direction", "phase", "train", "loss", "tags"},
             path);
  read(root, "name", c.name, path);
  read_tags(root, c, path);
  if (const toml::table* m = section(root, "model", path)) {
    const std::string where = path + " [model]";
    check_keys(*m, {"latent", "encoder_hidden", "lipschitz"}, where);
    read(*m, "latent", c.latent, where);
    read_sizes(*m, "encoder_hidden", c.encoder_hidden, where);
    read(*m, "lipschitz", c.lipschitz, where);
  }
  read_network(root, "decoder", c.decoder, path);
  read_network(root, "stepper", c.stepper, path);
  read_network(root, "projector", c.projector, path);
  read_direction(root, c.direction, path);
  read_phase(root, c.phase, path);
  if (const toml::table* t = section(root, "train", path)) {
    const std::string where = path + " [train]";
    check_keys(*t, {"seed", "threads", "batch", "steps", "steps_per_epoch", "learning_rate", "weight_decay",
                    "schedule", "plateau_gamma", "plateau_patience", "anneal", "checkpoint_minutes", "rollout",
                    "free_rollout", "start_noise"}, where);
    read(*t, "seed", c.seed, where);
    read(*t, "threads", c.threads, where);
    read(*t, "batch", c.batch, where);
    read(*t, "steps", c.steps, where);
    read(*t, "steps_per_epoch", c.steps_per_epoch, where);
    read(*t, "learning_rate", c.learning_rate, where);
    read(*t, "weight_decay", c.weight_decay, where);
    read(*t, "schedule", c.schedule, where);
    read(*t, "plateau_gamma", c.plateau_gamma, where);
    read(*t, "plateau_patience", c.plateau_patience, where);
    read_anneal(*t, c.anneal, where);
    read(*t, "checkpoint_minutes", c.checkpoint_minutes, where);
    read(*t, "rollout", c.rollout, where);
    read(*t, "free_rollout", c.free_rollout, where);
    require(c.free_rollout >= 0, where, "free_rollout", "at least 0");
    read(*t, "start_noise", c.start_noise, where);
  }
  if (const toml::table* t = section(root, "loss", path)) {
    const std::string where = path + " [loss]";
    check_keys(*t, {"position", "rotation", "velocity", "contact", "contact_velocity", "latent_l1", "latent_l2",
                    "latent_velocity", "lipschitz", "load_balance", "projector_features", "projector_latent",
                    "projector_distance", "projector_tags", "balance", "stepper_pose", "stepper_pose_every"}, where);
    read(*t, "position", c.w_position, where);
    read(*t, "rotation", c.w_rotation, where);
    read(*t, "velocity", c.w_velocity, where);
    read(*t, "contact", c.w_contact, where);
    read(*t, "contact_velocity", c.w_contact_velocity, where);
    read(*t, "latent_l1", c.w_latent_l1, where);
    read(*t, "latent_l2", c.w_latent_l2, where);
    read(*t, "latent_velocity", c.w_latent_velocity, where);
    read(*t, "lipschitz", c.w_lipschitz, where);
    read(*t, "load_balance", c.w_load_balance, where);
    read(*t, "projector_features", c.w_projector_features, where);
    read(*t, "projector_latent", c.w_projector_latent, where);
    read(*t, "projector_distance", c.w_projector_distance, where);
    read(*t, "projector_tags", c.w_projector_tags, where);
    read(*t, "stepper_pose", c.w_stepper_pose, where);
    read(*t, "stepper_pose_every", c.stepper_pose_every, where);
    require(c.w_stepper_pose >= 0.0, where, "stepper_pose", "at least 0");
    require(c.stepper_pose_every >= 1, where, "stepper_pose_every", "at least 1");
    std::string balance = c.balance == LoadBalance::kKl ? "kl" : "dispatch";
    read(*t, "balance", balance, where);
    if (balance != "kl" && balance != "dispatch") {
      throw std::runtime_error(where + " balance: '" + balance + "' is not kl or dispatch");
    }
    c.balance = balance == "kl" ? LoadBalance::kKl : LoadBalance::kDispatch;
  }
  if (c.schedule != "plateau" && c.schedule != "linear" && c.schedule != "cosine") {
    throw std::runtime_error(path + " [train] schedule: '" + c.schedule + "' is not plateau, linear or cosine");
  }
  if (c.batch < 2 || c.steps < 1 || c.steps_per_epoch < 1 || c.latent < 1 || !(c.learning_rate > 0.0) ||
      c.threads < 1 || c.rollout < 1) {
    throw std::runtime_error(path + ": batch >= 2, steps, steps_per_epoch, latent, threads, rollout >= 1 and "
                             "learning_rate > 0 are required");
  }
  return c;
}

}  // namespace lmm::training
