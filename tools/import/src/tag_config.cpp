// Reading tag declarations: the skeleton config's [tags] and [events], and sidecar files.
#include "tag_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/motion.hpp"

#include "toml_reading.hpp"

namespace lmm::pipeline {
namespace {

// Largest sidecar file read, and most [[range]] plus [[event]] entries in one.
constexpr uint64_t kMaxSidecarBytes = uint64_t(1) << 20;  // 1 MiB
constexpr size_t kMaxSidecarEntries = 10000;

// [tags] names plus the derived standing tag (appended unless declared), checked for repeats
// and for at most kMaxTags.
std::vector<std::string> tag_names(const toml::table& tags, bool standing, const std::string& where) {
  std::vector<std::string> names = strings(tags, "names", where);
  std::set<std::string> seen;
  for (const std::string& name : names) {
    check_gameplay_name(name, "tag", where + " names");
    if (!seen.insert(name).second) throw InputError(where + ": tag '" + name + "' is declared twice in 'names'");
  }
  if (standing && seen.count(kStandingTag) == 0) names.push_back(kStandingTag);
  if (names.size() > size_t(kMaxTags)) {
    throw InputError(where + ": " + std::to_string(names.size()) + " tags" + (standing ? " (with standing)" : "") +
                     ", more than a database holds (" + std::to_string(kMaxTags) + ")");
  }
  return names;
}

// The [left, right] string pair `node`; throws naming `where` otherwise.
std::pair<std::string, std::string> name_pair(const toml::node& node, const std::string& where) {
  const toml::array* pair = node.as_array();
  if (pair == nullptr || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string()) {
    throw InputError(where + ": each 'mirror' entry must be a [left, right] pair of strings");
  }
  return {*(*pair)[0].value<std::string>(), *(*pair)[1].value<std::string>()};
}

// Throws naming `where` when `name` is a tag derived from the motion (`standing` with
// [tags.standing]), which `what` ("a mirror pair", "an action") may not hold.
void check_not_derived(const TagConfig& config, const std::string& name, const char* what, const std::string& where) {
  if (config.standing && name == kStandingTag) {
    throw InputError(where + ": '" + name + "' is derived from the motion ([tags.standing]) and cannot be " + what);
  }
}

// [tags] mirror: pairs of two declared tags (not derived ones) or of two event names, each name
// in one pair at most (that an event pair names events is checked once the events are known).
void read_mirror_pairs(const toml::table& tags, const std::string& path, TagConfig& config) {
  const toml::node* node = tags.get("mirror");
  if (node == nullptr) return;
  const std::string where = source_line(path, *node) + ": [tags] mirror";
  if (!node->is_array()) throw InputError(where + " must be an array of [left, right] pairs");
  std::set<std::string> paired;
  for (const toml::node& entry : *node->as_array()) {
    const auto pair = name_pair(entry, where);
    for (const std::string& name : {pair.first, pair.second}) {
      check_gameplay_name(name, "name", where);
      if (!paired.insert(name).second) throw InputError(where + ": '" + printable(name) + "' is in two pairs");
      check_not_derived(config, name, "in a mirror pair", where);
    }
    const bool left_tag = config.tag(pair.first) >= 0, right_tag = config.tag(pair.second) >= 0;
    if (left_tag != right_tag) {
      const std::string& unknown = left_tag ? pair.second : pair.first;
      throw InputError(where + ": unknown tag '" + printable(unknown) + "' (paired with the tag '" +
                       (left_tag ? pair.first : pair.second) + "'; a pair holds two tags or two event names)");
    }
    config.mirror.push_back(pair);
  }
  config.mirror_where = where;
}

// [tags] actions (declared tags, not derived ones) and enter_actions_freely: the tags whose
// frames searches that require no tag leave out.
void read_actions(const toml::table& tags, const std::string& path, TagConfig& config) {
  const toml::node* node = tags.get("actions");
  if (node == nullptr) return;
  const std::string where = source_line(path, *node) + ": [tags] actions";
  const std::vector<std::string> actions = strings(tags, "actions", where);
  for (const std::string& name : actions) check_not_derived(config, name, "an action", where);
  config.actions = config.mask(actions, where);
  if (const toml::node* freely = tags.get("enter_actions_freely")) {
    const auto value = freely->value_exact<bool>();
    if (!value) throw InputError(source_line(path, *freely) + ": [tags] 'enter_actions_freely' must be true or false");
    config.enter_actions_freely = *value;
  }
}

// [[tags.files]] rules: pattern and tags.
void read_file_rules(const toml::table& tags, const std::string& path, TagConfig& config) {
  const toml::node* node = tags.get("files");
  if (node == nullptr) return;
  const toml::array* rules = node->as_array();
  if (rules == nullptr) throw InputError(source_line(path, *node) + ": [tags] 'files' must be [[tags.files]] tables");
  for (const toml::node& entry : *rules) {
    const std::string where = source_line(path, entry) + ": [[tags.files]]";
    const toml::table* rule = entry.as_table();
    if (rule == nullptr) throw InputError(where + " must be a table");
    check_keys(*rule, {"pattern", "tags"}, where);
    FileTagRule r;
    r.pattern = text(*rule, "pattern", where);
    r.tags = config.mask(strings(*rule, "tags", where), where);
    if (r.tags == 0) throw InputError(where + ": 'tags' is empty or missing");
    config.files.push_back(std::move(r));
  }
}

StandingSettings read_standing(const toml::table& table, const std::string& where) {
  check_keys(table, {"max_root_speed", "max_turn_rate", "max_contact_speed", "max_joint_speed", "min_duration"}, where);
  StandingSettings s;
  const Range speed{0.0, kMaxStandingSpeed, " m/s"};
  s.max_root_speed = number(table, "max_root_speed", s.max_root_speed, speed, where);
  s.max_turn_rate = number(table, "max_turn_rate", s.max_turn_rate, Range{0.0, kMaxStandingTurnRate, " deg/s"}, where);
  s.max_contact_speed = number(table, "max_contact_speed", s.max_contact_speed, speed, where);
  if (table.get("max_joint_speed") != nullptr) s.max_joint_speed = number(table, "max_joint_speed", 0.0f, speed, where);
  s.min_duration = number(table, "min_duration", s.min_duration, Range{0.0, kMaxStandingDuration, " s"}, where);
  return s;
}

// [events] foot_plants: one event name per contact joint.
std::vector<std::string> read_foot_plants(const toml::table& root, const std::string& path, size_t contact_joints) {
  const toml::node* node = root.get("events");
  if (node == nullptr) return {};
  const std::string where = source_line(path, *node) + ": [events]";
  if (!node->is_table()) throw InputError(where + " must be a table");
  check_keys(*node->as_table(), {"foot_plants"}, where);
  const std::vector<std::string> names = strings(*node->as_table(), "foot_plants", where);
  for (const std::string& name : names) check_gameplay_name(name, "event name", where + " foot_plants");
  if (!names.empty() && names.size() != contact_joints) {
    throw InputError(where + ": 'foot_plants' names " + std::to_string(names.size()) +
                     " events, one per [contacts] joint is needed (" + std::to_string(contact_joints) + ")");
  }
  return names;
}

// The integer at `node` within [0, frames); throws naming `key`, the frame and the frame count.
int file_frame(const toml::node& node, const char* key, int frames, const std::string& where) {
  const auto value = node.value_exact<int64_t>();
  if (!value) throw InputError(where + ": '" + key + "' must be an integer frame number");
  if (*value < 0 || *value >= frames) {
    throw InputError(where + ": frame " + std::to_string(*value) + " is outside the file's " + std::to_string(frames) +
                     " frames (0 to " + std::to_string(frames - 1) + ")");
  }
  return int(*value);
}

// Where the frames of a file lie for a sidecar: its count and the leading frames dropped.
struct FileFrames {
  int frames = 0, dropped = 0;
};

// Throws when file frames [first, last] all lie among the dropped leading frames.
void check_not_dropped(int first, int last, FileFrames file, const std::string& where) {
  if (last >= file.dropped) return;
  const std::string frames = first == last ? "frame " + std::to_string(first)
                                           : "frames " + std::to_string(first) + " to " + std::to_string(last);
  throw InputError(where + ": " + frames + " lie" + (first == last ? "s" : "") + " in the first " +
                   std::to_string(file.dropped) + " frames, which the importer drops as a pose before the take");
}

// A [[range]] table.
TaggedRange read_range(const toml::table& table, const TagConfig& config, FileFrames file, const std::string& where) {
  check_keys(table, {"frames", "tags", "exclude", "no_entry", "cost_bias"}, where);
  TaggedRange r;
  r.where = where;
  const toml::array* frames = table["frames"].as_array();
  if (frames == nullptr || frames->size() != 2) throw InputError(where + ": 'frames' must be [first, last]");
  r.first = file_frame((*frames)[0], "frames", file.frames, where);
  r.last = file_frame((*frames)[1], "frames", file.frames, where);
  if (r.first > r.last) {
    throw InputError(where + ": 'frames' = [" + std::to_string(r.first) + ", " + std::to_string(r.last) +
                     "]: first is after last");
  }
  check_not_dropped(r.first, r.last, file, where);
  r.tags = config.mask(strings(table, "tags", where), where);
  for (const auto& [key, flag] : {std::pair<const char*, bool*>{"exclude", &r.exclude}, {"no_entry", &r.no_entry}}) {
    if (!table.contains(key)) continue;
    const auto value = table[key].value_exact<bool>();
    if (!value) throw InputError(where + ": '" + key + "' must be true or false");
    *flag = *value;
  }
  if (table.contains("cost_bias")) {
    r.cost_bias = number(table, "cost_bias", 0.0f, Range{-kMaxCostBias, kMaxCostBias, ""}, where);
  }
  const bool other = r.tags != 0 || r.no_entry || r.cost_bias;
  if (r.exclude && other) throw InputError(where + ": an 'exclude' range cannot also have tags, no_entry or cost_bias");
  if (!r.exclude && !other) throw InputError(where + ": the range declares nothing (tags, exclude, no_entry or cost_bias)");
  return r;
}

// An [[event]] table.
MarkedEvent read_event(const toml::table& table, FileFrames file, const std::string& where) {
  check_keys(table, {"frame", "name"}, where);
  MarkedEvent e;
  e.where = where;
  if (!table.contains("frame")) throw InputError(where + ": 'frame' is missing");
  e.frame = file_frame(*table.get("frame"), "frame", file.frames, where);
  check_not_dropped(e.frame, e.frame, file, where);
  e.name = text(table, "name", where);
  check_gameplay_name(e.name, "event name", where);
  return e;
}

// The tables of the array of tables `key` of `root`, each with its "PATH:LINE: [[key]]".
std::vector<std::pair<const toml::table*, std::string>> entries(const toml::table& root, const char* key,
                                                                const std::string& path) {
  std::vector<std::pair<const toml::table*, std::string>> out;
  const toml::node* node = root.get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) throw InputError(source_line(path, *node) + ": '" + key + "' must be [[" + key + "]] tables");
  for (const toml::node& entry : *array) {
    const std::string where = source_line(path, entry) + ": [[" + key + "]]";
    if (!entry.is_table()) throw InputError(where + " must be a table");
    out.emplace_back(entry.as_table(), where);
  }
  return out;
}

bool overlap(const TaggedRange& a, int first, int last) { return a.first <= last && first <= a.last; }

// Throws at the first contradiction: an exclude range over another kind of range or an event,
// two different cost biases over one frame.
void check_contradictions(const FileAnnotations& file) {
  for (const TaggedRange& a : file.ranges) {
    for (const TaggedRange& b : file.ranges) {
      if (&a == &b || !overlap(a, b.first, b.last)) continue;
      if (a.exclude && !b.exclude) {
        throw InputError(b.where + ": the range overlaps the excluded frames of " + a.where);
      }
      if (a.cost_bias && b.cost_bias && *a.cost_bias != *b.cost_bias) {
        throw InputError(b.where + ": cost_bias " + format_number(*b.cost_bias) + " overlaps cost_bias " +
                         format_number(*a.cost_bias) + " of " + a.where);
      }
    }
    for (const MarkedEvent& e : file.events) {
      if (a.exclude && overlap(a, e.frame, e.frame)) {
        throw InputError(e.where + ": event '" + printable(e.name) + "' at frame " + std::to_string(e.frame) +
                         " lies in the excluded frames of " + a.where);
      }
    }
  }
}

}  // namespace

TagConfig read_tag_config(const toml::table& root, const std::string& path, size_t contact_joints) {
  TagConfig config;
  config.source = path;
  config.foot_plants = read_foot_plants(root, path, contact_joints);
  const toml::node* node = root.get("tags");
  if (node == nullptr) return config;
  const std::string where = source_line(path, *node) + ": [tags]";
  if (!node->is_table()) throw InputError(where + " must be a table");
  const toml::table& tags = *node->as_table();
  check_keys(tags, {"names", "mirror", "files", "standing", "actions", "enter_actions_freely"}, where);
  if (const toml::node* standing = tags.get("standing")) {
    const std::string standing_where = source_line(path, *standing) + ": [tags.standing]";
    if (!standing->is_table()) throw InputError(standing_where + " must be a table");
    config.standing = read_standing(*standing->as_table(), standing_where);
    if (contact_joints == 0) throw InputError(standing_where + ": needs [contacts] joints (their speeds are judged)");
  }
  config.names = tag_names(tags, config.standing.has_value(), where);
  read_mirror_pairs(tags, path, config);
  read_actions(tags, path, config);
  read_file_rules(tags, path, config);
  return config;
}

std::string sidecar_path(const std::string& bvh_path) {
  return std::filesystem::path(bvh_path).replace_extension(".tags.toml").string();
}

FileAnnotations load_file_annotations(const std::string& bvh_path, const TagConfig& config, int file_frames,
                                      int dropped) {
  FileAnnotations file;
  const std::string path = sidecar_path(bvh_path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return file;
  file.sidecar = path;
  const toml::table root = parse_toml_text(read_text_file(path, kMaxSidecarBytes, "tag sidecar"), path);
  check_keys(root, {"tags", "range", "event"}, path);
  if (const toml::node* tags = root.get("tags")) {
    const std::string where = source_line(path, *tags);
    file.tags = config.mask(strings(root, "tags", where), where);
  }
  const FileFrames frames{file_frames, dropped};
  const auto ranges = entries(root, "range", path), events = entries(root, "event", path);
  if (ranges.size() + events.size() > kMaxSidecarEntries) {
    throw InputError(path + ": " + std::to_string(ranges.size() + events.size()) +
                     " [[range]] and [[event]] entries, more than " + std::to_string(kMaxSidecarEntries));
  }
  for (const auto& [table, where] : ranges) file.ranges.push_back(read_range(*table, config, frames, where));
  for (const auto& [table, where] : events) file.events.push_back(read_event(*table, frames, where));
  check_contradictions(file);
  return file;
}

}  // namespace lmm::pipeline
