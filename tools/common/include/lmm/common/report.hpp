// Small helpers shared by the CLI tools: a flat JSON object writer and the error wrapper.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lmm::pipeline {

// Builds one JSON object; values are numbers, strings, booleans, arrays or nested objects.
class JsonObject {
 public:
  // Adds a number (non-finite values are written as null).
  JsonObject& number(const std::string& key, double value);
  // Adds a string (escaped).
  JsonObject& text(const std::string& key, const std::string& value);
  // Adds a boolean.
  JsonObject& boolean(const std::string& key, bool value);
  // Adds an array of strings.
  JsonObject& texts(const std::string& key, const std::vector<std::string>& values);
  // Adds a nested object.
  JsonObject& object(const std::string& key, const JsonObject& value) { return raw(key, value.str()); }
  // Adds an array of nested objects.
  JsonObject& objects(const std::string& key, const std::vector<JsonObject>& values);
  // The object as JSON text.
  std::string str() const;

 private:
  JsonObject& raw(const std::string& key, const std::string& json);
  std::vector<std::string> fields_;
};

// The comma-separated cells of one CSV line, each trimmed of spaces, tabs and CRs (a trailing
// comma ends with an empty cell).
std::vector<std::string> split_csv(const std::string& line);

// Column index by name of a CSV header row's cells; throws InputError ("`where`column 'NAME'
// appears twice") when a name repeats, since rows are checked against the column count.
std::map<std::string, size_t> csv_columns(const std::vector<std::string>& header, const std::string& where);

// Parses a whole cell as a number (nan / inf allowed when `finite_only` is false).
bool parse_number(const std::string& text, bool finite_only, float& out);

// The median of `values` (the upper one for an even count), 0 when empty.
double median(std::vector<double> values);

// `text` with its ASCII letters in lower case.
std::string lowercase(std::string text);

// `value` as a quoted, escaped JSON string.
std::string json_quote(const std::string& value);

// Most bytes of a text input the tools read (controller config, input script, path).
constexpr uint64_t kMaxTextInputBytes = uint64_t(64) << 20;  // 64 MiB

// The whole text of the regular file `path`, `what` it is for the messages (e.g. "controller
// config"); throws InputError naming the file for a missing file, a directory, a special file
// (/dev/zero, a FIFO), a file over `max_bytes` or a read error.
std::string read_text_file(const std::string& path, uint64_t max_bytes, const std::string& what);

// Writes `text` to `path` atomically; throws InputError on failure.
void write_text_atomic(const std::string& path, const std::string& text);

// Writes `json` to `path` atomically; throws InputError on failure.
void write_json(const std::string& path, const JsonObject& json);

// Runs a CLI body, turning exceptions into an error message and exit code 1.
int run_cli(const char* tool, const std::function<int()>& body);

}  // namespace lmm::pipeline
