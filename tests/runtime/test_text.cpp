// The one rule for tag, event and state names (lmm::name_problem) and printable().
#include <gtest/gtest.h>

#include <string>

#include "lmm/core/text.hpp"

using namespace lmm;

TEST(Names, UsableNamesPass) {
  for (const char* name : {"walk", "foot_plant_l", "Walk Fast", "wave-left", "a.b:c", "caf\xc3\xa9", "\xe6\xad\xa9\xe3\x81\x8f",
                           "nonesuch", "x"}) {
    EXPECT_EQ(name_problem(name), "") << name;
  }
  EXPECT_EQ(name_problem(std::string(kMaxNameBytes, 'a')), "");
}

TEST(Names, EachBrokenRuleIsNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "is empty"},
      {std::string(kMaxNameBytes + 1, 'a'), "is 65 bytes long, more than 64"},
      {"a,b", "contains ','"},
      {"x|y", "contains '|'"},
      {"say \"hi\"", "contains '\"'"},
      {"a#b", "contains '#'"},
      {"a\\b", "contains '\\'"},
      {" sp ", "begins or ends with a space"},
      {"walk\t", "contains a control character"},
      {"tab\tbed", "contains a control character"},
      {std::string("nul\0l", 5), "contains a control character"},
      {"del\x7f", "contains a control character"},
      {"caf\xe9", "is not valid UTF-8"},
      {"\xc0\xaf", "is not valid UTF-8"},        // overlong '/'
      {"\xed\xa0\x80", "is not valid UTF-8"},    // a surrogate
      {"\xe6\xad", "is not valid UTF-8"},        // cut short
      {"none", "is reserved"},
      {"cancel", "is reserved"},
  };
  for (const auto& [name, problem] : cases) {
    EXPECT_NE(name_problem(name).find(problem), std::string::npos) << printable(name) << " -> " << name_problem(name);
  }
}

TEST(Names, PrintableEscapesControlCharacters) {
  EXPECT_EQ(printable("a\nb\tc\x01" "d"), "a\\nb\\tc\\x01d");
  EXPECT_EQ(printable("plain caf\xc3\xa9"), "plain caf\xc3\xa9");
}
