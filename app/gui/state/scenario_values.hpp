// Reading a scenario file's values, and the tables of its keys. Each reader
// names the key in its error ("problem.seq must be a number or a string like
// \"16K\""); each table row says the key, the form of its value and what it
// means, so the schema (`flashlab gui --list-settings`), the error messages'
// lists of keys and the appliers come from one place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace flashlab::gui {

// Sizes and counts as numbers or text ("16K"): the model parses the text.
std::string text_of(const nlohmann::json& v, const std::string& what);
bool bool_of(const nlohmann::json& v, const std::string& what);
double number_of(const nlohmann::json& v, const std::string& what);
// A path relative to the working directory if it exists there, else to the scenario's folder.
std::string resolve_path(const std::string& p, const std::string& base_dir);

// What every key table's row says of its key, for the schema.
struct KeyDoc {
  std::string_view key;      // as written in a scenario file
  std::string_view kind;     // the value's form: bool, number, text, PATH, an object, the names it takes
  std::string_view meaning;  // one line
};

// "a, b, c": the keys of a table, in its order.
template <class Row>
std::string key_list(const std::vector<Row>& rows) {
  std::string out;
  for (const Row& r : rows) out += (out.empty() ? "" : ", ") + std::string(r.doc.key);
  return out;
}

// The row of `key`, or nullptr.
template <class Row>
const Row* find_key(const std::vector<Row>& rows, std::string_view key) {
  for (const Row& r : rows)
    if (r.doc.key == key) return &r;
  return nullptr;
}

}  // namespace flashlab::gui
