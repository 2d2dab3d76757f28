// Errors of the tools' inputs and the helpers that word their messages.
#pragma once

#include <stdexcept>
#include <string>

namespace lmm::pipeline {

// Error in an input file; the message names the file and, where known, the line.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `v` printed shortly (%g), for error messages.
std::string format_number(double v);
// "[lo, hi]" with the bounds printed by format_number, for errors that state an accepted range.
std::string range_text(double lo, double hi);
// `text` with control characters written as escapes (\n, \t, \x01), for error messages.
std::string printable(const std::string& text);

}  // namespace lmm::pipeline
