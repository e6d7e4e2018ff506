// The assets folder and the named files in it (hardware presets, interconnects,
// sweeps, scenarios): where it is, which names a folder holds, what a name stands
// for, and the one message for a name that is not there.
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

// The file of assets_dir()/folder a name stands for, letter case aside; empty if none.
std::string asset_path(std::string_view folder, std::string_view name);

// "unknown WHAT 'NAME' (known: a, b, c)", or with more after the list: "(known: a, b; MORE)".
std::string unknown_asset_message(std::string_view what, std::string_view name, const std::vector<std::string>& known,
                                  std::string_view more = {});

// ASCII lower case.
std::string lower(std::string_view s);

}  // namespace flashlab::sim
