#include "toml_reading.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "lmm/common/errors.hpp"

namespace lmm::pipeline {
namespace {

// parse() with its parse error turned into InputError "path:line: description".
template <typename Parse>
toml::table parse_or_throw(const std::string& path, Parse parse) {
  try {
    return parse();
  } catch (const toml::parse_error& e) {
    throw InputError(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

}  // namespace

toml::table parse_toml(const std::string& path) {
  return parse_or_throw(path, [&] { return toml::parse_file(path); });
}

toml::table parse_toml_text(const std::string& text, const std::string& path) {
  return parse_or_throw(path, [&] { return toml::parse(text, path); });
}

std::string source_line(const std::string& path, const toml::node& node) {
  const auto line = node.source().begin.line;
  return line == 0 ? path : path + ":" + std::to_string(line);
}

void check_keys(const toml::table& table, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& [key, value] : table) {
    if (allowed.count(std::string(key.str())) == 0) {
      throw InputError(where + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
}

float number(const toml::table& table, const char* key, float fallback, Range range, const std::string& where) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return fallback;
  const auto value = node->value<double>();
  if (!value || !std::isfinite(*value)) throw InputError(where + ": '" + key + "' must be a number");
  if (!(*value >= range.lo && *value <= range.hi)) {
    throw InputError(where + ": '" + key + "' = " + format_number(*value) + " is outside " +
                     range_text(range.lo, range.hi) + range.unit);
  }
  return static_cast<float>(*value);
}

void check_name(const std::string& name, const std::string& what) {
  const bool control =
      std::any_of(name.begin(), name.end(), [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); });
  const char* problem = name.empty() ? "is empty" : control ? "contains a control character"
                        : name.find('=') != std::string::npos ? "contains '='" : nullptr;
  if (problem != nullptr) throw InputError(what + " '" + printable(name) + "' " + problem);
}

std::string text(const toml::table& table, const char* key, const std::string& where) {
  const auto value = table[key].value<std::string>();
  if (!value) throw InputError(where + ": '" + key + "' must be a string");
  return *value;
}

std::vector<std::string> strings(const toml::table& table, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const toml::node* node = table.get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) throw InputError(where + ": '" + key + "' must be an array of strings");
  for (const toml::node& item : *array) {
    const auto s = item.value<std::string>();
    if (!s) throw InputError(where + ": '" + key + "' must be an array of strings");
    check_name(*s, where + ": '" + key + "' entry");
    out.push_back(*s);
  }
  return out;
}

const toml::table& subtable(const toml::table& root, const char* key, const std::string& where) {
  static const toml::table empty;
  const toml::node* node = root.get(key);
  if (node == nullptr) return empty;
  if (!node->is_table()) throw InputError(where + ": '" + key + "' must be a table");
  return *node->as_table();
}

}  // namespace lmm::pipeline
