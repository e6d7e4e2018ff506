// The assets folder and the named files in it (hardware presets, interconnects,
// sweeps, labs, rung timings): where it is, which names a folder holds, what a
// name or a path stands for, the one message for a name that is not there, and
// the reading of the file. Every loader of a named file goes through here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flashlab::sim {

// The folder holding hardware/, interconnects/, sweeps/ …: $FLASHLAB_ASSETS, else the
// build's configured source assets, else assets/ beside or above the executable (or its
// share/flashlab/assets). Empty when none is found.
std::string assets_dir();

// A path rather than a name: it has a '/' or ends in ".json".
bool names_a_file(std::string_view name_or_path);

// The names (file stems) of the *.json files in assets_dir()/folder, sorted; none
// without an assets folder.
std::vector<std::string> asset_names(std::string_view folder);

// The *.json files of root/folder (root: an assets folder), in the order of
// their names; none when the folder is not there.
std::vector<std::string> asset_files(const std::string& root, std::string_view folder);

// The file of assets_dir()/folder a name stands for, letter case aside; empty if none.
std::string asset_path(std::string_view folder, std::string_view name);

// "unknown WHAT 'NAME' (known: a, b, c)", or with more after the list: "(known: a, b; MORE)".
std::string unknown_asset_message(std::string_view what, std::string_view name, const std::vector<std::string>& known,
                                  std::string_view more = {});

// One kind of named file, as its loader's messages speak of it.
struct AssetKind {
  std::string_view folder;   // under assets_dir(): "hardware", "sweeps", "labs", "rungs"
  std::string_view what;     // "unknown WHAT 'NAME' (known: …)": "hardware preset"
  std::string_view file;     // "cannot read FILE file 'PATH'": "hardware"
  // "cannot find the assets folder with PLURAL (set FLASHLAB_ASSETS)" for a
  // name without an assets folder; empty: the unknown-name message says it.
  std::string_view plural;
  std::string_view more;     // after the known names: "or a file written by …"
  bool suggest = false;      // "unknown WHAT 'NAME' (did you mean X?) (known: …)"
  // A path that is no file: "FILE file 'PATH' not found" (not_found), "cannot
  // read 'PATH'" (unreadable), or the read's own message (read).
  enum class AbsentPath { read, not_found, unreadable } absent_path = AbsentPath::read;
};

// The file `name_or_path` stands for: a path (names_a_file) as it is, a name
// the file of assets_dir()/kind.folder it names, letter case aside. Empty,
// with the reason in `why`, when there is none.
std::string find_asset(const AssetKind& kind, std::string_view name_or_path, std::string* why);

// The whole file at `path`; false, with "cannot read KIND.FILE file 'PATH'" in
// `why`, when it cannot be read.
bool read_asset_text(const AssetKind& kind, const std::string& path, std::string* text, std::string* why);

// find_asset and read_asset_text, throwing each loader's own error type.
template <class Error>
std::string asset_file(const AssetKind& kind, std::string_view name_or_path) {
  std::string why;
  std::string path = find_asset(kind, name_or_path, &why);
  if (path.empty()) throw Error(why);
  return path;
}
template <class Error>
std::string read_asset(const AssetKind& kind, const std::string& path) {
  std::string text, why;
  if (!read_asset_text(kind, path, &text, &why)) throw Error(why);
  return text;
}

// ASCII lower case.
std::string lower(std::string_view s);

}  // namespace flashlab::sim
