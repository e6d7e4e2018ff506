// Checks of a printed text against the lines a test expects in it: a list of
// parts instead of a check written out per part. Each part is a check of its
// own, so a failure names the part that is missing and the others still run.
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

namespace flashlab::test {

// Each of `parts` somewhere in `text`, as written.
inline void check_contains_each(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) CHECK_THAT(text, Catch::Contains(part));
}

// Each of `patterns` (ECMAScript regular expressions) matching somewhere in
// `text`, across lines: a figure between columns of spaces ("hbm_read +3010").
inline void check_matches_each(const std::string& text, std::initializer_list<std::string> patterns) {
  for (const std::string& pattern : patterns) CHECK_THAT(text, Catch::Matches("[\\s\\S]*" + pattern + "[\\s\\S]*"));
}

}  // namespace flashlab::test
