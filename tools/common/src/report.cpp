#include "lmm/common/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/asset/blob.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/common/errors.hpp"

namespace lmm::pipeline {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    cell.erase(0, cell.find_first_not_of(" \t\r"));
    cell.erase(cell.find_last_not_of(" \t\r") + 1);
    cells.push_back(cell);
  }
  const size_t end = line.find_last_not_of(" \t\r");
  if (end != std::string::npos && line[end] == ',') cells.emplace_back();  // a trailing empty cell
  return cells;
}

std::map<std::string, size_t> csv_columns(const std::vector<std::string>& header, const std::string& where) {
  std::map<std::string, size_t> column;
  for (size_t c = 0; c < header.size(); ++c) {
    if (!column.emplace(header[c], c).second) throw InputError(where + "column '" + header[c] + "' appears twice");
  }
  return column;
}

bool parse_number(const std::string& text, bool finite_only, float& out) {
  char* end = nullptr;
  out = std::strtof(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && (!finite_only || std::isfinite(out));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
  return values[values.size() / 2];
}

std::string lowercase(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string json_quote(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

JsonObject& JsonObject::raw(const std::string& key, const std::string& json) {
  fields_.push_back(json_quote(key) + ": " + json);
  return *this;
}

JsonObject& JsonObject::number(const std::string& key, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  return raw(key, std::isfinite(value) ? buf : "null");
}

JsonObject& JsonObject::text(const std::string& key, const std::string& value) {
  return raw(key, json_quote(value));
}

JsonObject& JsonObject::boolean(const std::string& key, bool value) {
  return raw(key, value ? "true" : "false");
}

JsonObject& JsonObject::texts(const std::string& key, const std::vector<std::string>& values) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) json += (i ? ", " : "") + json_quote(values[i]);
  return raw(key, json + "]");
}

JsonObject& JsonObject::objects(const std::string& key, const std::vector<JsonObject>& values) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) json += (i ? ", " : "") + values[i].str();
  return raw(key, json + "]");
}

std::string JsonObject::str() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) out += (i ? ", " : "") + fields_[i];
  return out + "}";
}

void write_json(const std::string& path, const JsonObject& json) {
  write_text_atomic(path, json.str() + "\n");
}

std::string read_text_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  uint64_t size = 0;
  std::string error;
  if (!lmm::regular_file_size(path, max_bytes, size, error)) throw InputError(error + " (the " + what + ")");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf()) && size > 0) throw InputError(path + ": cannot read the " + what);
  return text.str();
}

void write_text_atomic(const std::string& path, const std::string& text) {
  std::string error;
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  if (!write_file_atomic(path, bytes, text.size(), error) || !file_holds(path, bytes, text.size(), error)) {
    throw InputError(error);
  }
}

int run_cli(const char* tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const cxxopts::exceptions::exception& e) {
    spdlog::error("{}: {} (see --help)", tool, e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", tool, e.what());
    return 1;
  }
}

}  // namespace lmm::pipeline
