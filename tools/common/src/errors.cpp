#include "lmm/common/errors.hpp"

#include <cstdio>

namespace lmm::pipeline {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(double lo, double hi) { return "[" + format_number(lo) + ", " + format_number(hi) + "]"; }

void check_gameplay_name(const std::string& name, const std::string& what, const std::string& where) {
  const std::string problem = name_problem(name);
  if (!problem.empty()) throw InputError(where + ": " + what + " '" + printable(name) + "' " + problem);
}

}  // namespace lmm::pipeline
