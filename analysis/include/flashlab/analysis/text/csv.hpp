// CSV with RFC 4180 quoting, and a whole-file writer that never leaves a
// half-written file behind.
#pragma once

#include <string>
#include <vector>

namespace flashlab::analysis {

std::string csv_escape(const std::string& field);
std::string csv_row(const std::vector<std::string>& fields);
// Parses one CSV document (quoted fields, embedded commas/quotes/newlines).
std::vector<std::vector<std::string>> csv_parse(const std::string& text);

// Writes `contents` to `path` through a temporary file in the same folder and
// a rename. Throws std::runtime_error naming the path and the reason.
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace flashlab::analysis
