// Internal to the import library: reading the tools' TOML files (skeleton maps, feature schemas,
// thresholds, tag sidecars) with errors that name the file, line and key at fault.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace lmm::pipeline {

// Reads a TOML file; parse errors become InputError "path:line: description".
toml::table parse_toml(const std::string& path);
// Parses `text` read from `path` (for messages) as parse_toml does.
toml::table parse_toml_text(const std::string& text, const std::string& path);

// "path:line" of `node` (just "path" when the node has no source position).
std::string source_line(const std::string& path, const toml::node& node);

// Throws InputError "where: unknown key 'K'" when `table` has a key outside `allowed`.
void check_keys(const toml::table& table, const std::set<std::string>& allowed, const std::string& where);

// Accepted range of a config number (unit for messages).
struct Range {
  double lo, hi;
  const char* unit;
};

// A number at `key` within `range` (`fallback` when absent); throws naming the key and the range
// when it is present with another type or out of range.
float number(const toml::table& table, const char* key, float fallback, Range range, const std::string& where);

// Throws naming `what` when `name` is empty or holds a control character or '=': names are
// stored one per line, roles as "name=joint".
void check_name(const std::string& name, const std::string& what);

// The string at `key`; throws naming the key when it is absent or not a string.
std::string text(const toml::table& table, const char* key, const std::string& where);

// An array of names at `key` (empty when absent), each checked by check_name.
std::vector<std::string> strings(const toml::table& table, const char* key, const std::string& where);

// The table at `key` (an empty one when absent); throws when `key` holds something else.
const toml::table& subtable(const toml::table& root, const char* key, const std::string& where);

}  // namespace lmm::pipeline
