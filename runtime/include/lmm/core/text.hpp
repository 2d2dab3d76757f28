// Text rules shared by the runtime and the tools: what may name a tag, an event or a game state,
// and text made safe to quote in an error message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lmm {

constexpr size_t kMaxNameBytes = 64;  // longest tag, event or state name, in bytes of UTF-8

// Why `name` cannot name a tag, an event or a game state, or "" when it can. A name is 1 to
// kMaxNameBytes bytes of valid UTF-8 with no control character, none of the characters that
// separate or quote names in lists, scripts and configs (, | " # \), no space or tab at either
// end, and not one of the words that mean "no name" in scripts (none, cancel). One rule for
// every name a game passes to a gameplay call, checked where the name is declared.
std::string name_problem(std::string_view name);

// `text` with control characters written as escapes (\n, \t, \x01), for error messages.
std::string printable(std::string_view text);

}  // namespace lmm
