#include "lmm/common/errors.hpp"

#include <cctype>
#include <cstdio>

namespace lmm::pipeline {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(double lo, double hi) { return "[" + format_number(lo) + ", " + format_number(hi) + "]"; }

std::string printable(const std::string& text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (std::iscntrl(u)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lmm::pipeline
