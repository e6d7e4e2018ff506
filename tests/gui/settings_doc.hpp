// The copy of `flashlab gui --list-settings` in docs/user-guide.md: the lines
// of the ```text block under the comment that names the command.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace flashlab::test {

inline constexpr const char* kSettingsDocMarker = "<!-- flashlab gui --list-settings -->";

// Empty when the file, the marker or the block is missing.
inline std::string settings_block_of(const std::string& user_guide_path) {
  std::ifstream in(user_guide_path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const auto marker = doc.find(kSettingsDocMarker);
  if (marker == std::string::npos) return "";
  const std::string open = "```text\n";
  const auto start = doc.find(open, marker);
  if (start == std::string::npos) return "";
  const auto body = start + open.size();
  const auto end = doc.find("\n```", body - 1);
  if (end == std::string::npos) return "";
  return doc.substr(body, end + 1 - body);
}

}  // namespace flashlab::test
