// "Did you mean …?" for a name typed wrong: the known name nearest to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace flashlab::sim {

// The known name with the fewest single-character edits (insert, delete,
// replace, swap of neighbours) from `typed`, letter case aside, when that is at
// most a third of the longer name's length (and at least 1); ties go to the
// first. nullopt when nothing is that close, or `typed` is itself known.
std::optional<std::string> closest_name(const std::string& typed, const std::vector<std::string>& known);

// " (did you mean X?)" for closest_name's answer, "" without one.
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known);

}  // namespace flashlab::sim
