#include "lmm/core/text.hpp"

#include <cstdio>

namespace lmm {
namespace {

constexpr std::string_view kSeparators = ",|\"#\\";
constexpr std::string_view kReservedNames[] = {"none", "cancel"};

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Bytes of the UTF-8 sequence that starts with `lead` (0: not a lead byte).
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// Whether `text` is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t length = sequence_length(lead);
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return false;
    }
    const unsigned char second = length > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) || (lead == 0xf0 && second < 0x90) ||
        (lead == 0xf4 && second > 0x8f)) {
      return false;
    }
    i += length;
  }
  return true;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::string name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameBytes) {
    return "is " + std::to_string(name.size()) + " bytes long, more than " + std::to_string(kMaxNameBytes);
  }
  if (!valid_utf8(name)) return "is not valid UTF-8";
  for (char c : name) {
    if (is_control(static_cast<unsigned char>(c))) return "contains a control character";
    if (kSeparators.find(c) != std::string_view::npos) {
      return std::string("contains '") + c + "' (names may not contain , | \" # or \\)";
    }
  }
  if (is_blank(name.front()) || is_blank(name.back())) return "begins or ends with a space";
  for (std::string_view reserved : kReservedNames) {
    if (name == reserved) return "is reserved ('" + std::string(reserved) + "' means no name in scripts)";
  }
  return "";
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_control(u)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lmm
