// Errors of the tools' inputs and the helpers that word their messages.
#pragma once

#include <stdexcept>
#include <string>

#include "lmm/core/text.hpp"  // printable, name_problem

namespace lmm::pipeline {

// Error in an input file; the message names the file and, where known, the line.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `v` printed shortly (%g), for error messages.
std::string format_number(double v);
// "[lo, hi]" with the bounds printed by format_number, for errors that state an accepted range.
std::string range_text(double lo, double hi);
// Throws "WHERE: WHAT 'NAME' PROBLEM" when `name` breaks the rule of lmm::name_problem (`what`:
// "tag", "event name", "state", ...).
void check_gameplay_name(const std::string& name, const std::string& what, const std::string& where);

}  // namespace lmm::pipeline
