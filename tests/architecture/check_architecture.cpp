// The include rules of the source tree, read from the READMEs that state them and
// held against every #include:
//   - a library's README (sim/, analysis/, kernels/, app/) has a line
//     "May include: <libraries>"; a file of the library may include the public
//     headers of those libraries and no other library of the tree;
//   - each concept folder of a library (sim/src/ring/, app/gui/panels/, …) has a
//     README with a line "May include: <concepts of the same library>" (or "nothing");
//     a file of the concept may include its own concept's files and those listed.
//     Public headers belong to the concept named by their folder under
//     include/flashlab/<library>/;
//   - the concepts' "May include" lists form no cycle, so every library is a stack of
//     floors and no include arrow runs back up.
// usage: flashlab_check_architecture SOURCE_DIR [--stats]
// Exit 0 when every rule holds, 1 with one line per broken rule, 2 on bad usage.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The libraries and the folders their public headers live in: the include string
// "flashlab/<prefix>/..." belongs to the library; a prefix of a sub-library
// (export, ceilings) names its concept too.
struct PublicPrefix {
  std::string prefix;   // "flashlab/sim/"
  std::string library;  // "sim"
  std::string concept_name;  // "" when the next path part names it
};
const std::vector<PublicPrefix> kPublic = {
    {"flashlab/sim/", "sim", ""},          {"flashlab/analysis/", "analysis", ""},
    {"flashlab/export/", "analysis", "export"}, {"flashlab/kernels/", "kernels", ""},
    {"flashlab/ceilings/", "kernels", "ceilings"}, {"flashlab/sim.hpp", "sim", ""},
    {"flashlab/analysis.hpp", "analysis", ""},
};
const std::vector<std::string> kLibraries = {"sim", "analysis", "kernels", "app"};

std::vector<std::string> split_names(std::string s) {
  std::vector<std::string> out;
  std::replace(s.begin(), s.end(), ',', ' ');
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    while (!w.empty() && (w.back() == '.' || w.back() == '`')) w.pop_back();
    while (!w.empty() && w.front() == '`') w.erase(w.begin());
    if (!w.empty() && w != "nothing" && w != "and") out.push_back(w);
  }
  return out;
}

// The "May include:" line of a README, when it has one.
std::optional<std::vector<std::string>> may_include(const fs::path& readme) {
  std::ifstream in(readme);
  for (std::string line; std::getline(in, line);) {
    const std::string key = "May include:";
    const auto at = line.find(key);
    if (at == std::string::npos || at > 0) continue;  // the rule starts its line
    std::string names = line.substr(key.size());
    names = names.substr(0, names.find('('));  // a remark in parentheses is no name
    return split_names(names);
  }
  return std::nullopt;
}

struct Concept {
  std::string library, name;
  fs::path dir;  // relative to the source dir
  std::set<std::string> allowed;
};

struct Tree {
  fs::path root;
  std::map<std::string, std::set<std::string>> library_allowed;
  std::map<std::pair<std::string, std::string>, Concept> concepts;  // (library, name)
  std::vector<std::string> problems;
};

// The file of a line `#include "file"` (spaces allowed around '#'); nullopt for any other line.
std::optional<std::string> quoted_include(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  const std::string key = "include";
  if (i == std::string::npos || line.compare(i, key.size(), key) != 0) return std::nullopt;
  i = line.find_first_not_of(" \t", i + key.size());
  if (i == std::string::npos || line[i] != '"') return std::nullopt;
  const std::size_t end = line.find('"', i + 1);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(i + 1, end - i - 1);
}

bool is_source(const fs::path& p) {
  static const std::set<std::string> ext = {".cpp", ".hpp", ".cu", ".cuh", ".h"};
  return ext.count(p.extension().string()) > 0;
}

std::string library_of(const fs::path& rel) {
  const std::string first = rel.begin()->string();
  return std::find(kLibraries.begin(), kLibraries.end(), first) != kLibraries.end() ? first : "";
}

// The concept a file of the tree belongs to: the nearest folder above it that
// holds a concept README, or the folder a public header sits in.
std::optional<std::pair<std::string, std::string>> concept_of(const Tree& t, const fs::path& rel) {
  const std::string lib = library_of(rel);
  if (lib.empty()) return std::nullopt;
  const std::string s = rel.generic_string();
  const auto inc = s.find("/include/");
  if (inc != std::string::npos) {
    const std::string tail = s.substr(inc + std::string("/include/").size());
    for (const auto& p : kPublic) {
      if (tail.rfind(p.prefix, 0) != 0 || p.library != lib) continue;
      if (!p.concept_name.empty()) return std::make_pair(lib, p.concept_name);
      const std::string rest = tail.substr(p.prefix.size());
      const auto slash = rest.find('/');
      if (slash == std::string::npos) return std::nullopt;  // the library's umbrella header
      return std::make_pair(lib, rest.substr(0, slash));
    }
  }
  for (fs::path d = rel.parent_path(); !d.empty(); d = d.parent_path()) {
    for (const auto& [key, c] : t.concepts)
      if (c.dir == d) return key;
  }
  return std::nullopt;
}

// Where an include string points: a file of the tree (found next to the includer,
// or under one of the library's source roots) or a public header.
struct Target {
  std::string library;
  std::optional<std::pair<std::string, std::string>> concept_key;
};
std::optional<Target> resolve(const Tree& t, const fs::path& includer_rel, const std::string& inc) {
  for (const auto& p : kPublic) {
    if (inc.rfind(p.prefix, 0) != 0) continue;
    if (!p.concept_name.empty()) return Target{p.library, std::make_pair(p.library, p.concept_name)};
    const std::string rest = inc.substr(p.prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos) return Target{p.library, std::nullopt};
    return Target{p.library, std::make_pair(p.library, rest.substr(0, slash))};
  }
  std::vector<fs::path> candidates = {includer_rel.parent_path() / inc};
  // a library's private root: <lib>/src, and each folder of app/ and kernels/
  // whose concepts sit directly under it
  const std::string lib = library_of(includer_rel);
  for (const char* r : {"src", "gui", "cli", "", "ceilings/src", "export/src"})
    candidates.push_back(fs::path(lib) / r / inc);
  for (auto c : candidates) {
    c = c.lexically_normal();
    if (fs::exists(t.root / c)) {
      Target out{library_of(c), concept_of(t, c)};
      return out;
    }
  }
  return std::nullopt;
}

void load_rules(Tree& t) {
  for (const auto& lib : kLibraries) {
    const auto allowed = may_include(t.root / lib / "README.md");
    if (!allowed) {
      t.problems.push_back(lib + "/README.md: no 'May include:' line");
      continue;
    }
    t.library_allowed[lib] = {allowed->begin(), allowed->end()};
    for (const auto& e : fs::recursive_directory_iterator(t.root / lib)) {
      if (!e.is_regular_file() || e.path().filename() != "README.md") continue;
      const fs::path dir = fs::relative(e.path().parent_path(), t.root);
      if (dir == fs::path(lib)) continue;
      const auto list = may_include(e.path());
      if (!list) continue;  // a README that is not a concept's
      Concept c{lib, dir.filename().string(), dir, {list->begin(), list->end()}};
      const auto key = std::make_pair(lib, c.name);
      if (t.concepts.count(key))
        t.problems.push_back(dir.generic_string() + ": a second concept named '" + c.name + "' in " + lib);
      t.concepts[key] = c;
    }
  }
  for (const auto& [key, c] : t.concepts)
    for (const auto& a : c.allowed)
      if (!t.concepts.count({key.first, a}))
        t.problems.push_back((c.dir / "README.md").generic_string() + ": 'May include' names '" + a +
                             "', which is no concept of " + key.first);
}

// The floors of a library: a concept's floor is one above the highest floor it
// may include; a cycle is reported with its members.
std::map<std::string, int> floors(Tree& t, const std::string& lib) {
  std::map<std::string, int> floor;
  std::set<std::string> visiting;
  std::function<int(const std::string&)> visit = [&](const std::string& name) -> int {
    if (auto f = floor.find(name); f != floor.end()) return f->second;
    if (visiting.count(name)) {
      t.problems.push_back(lib + ": the 'May include' lists run in a cycle through '" + name + "'");
      return 0;
    }
    visiting.insert(name);
    int f = 0;
    for (const auto& a : t.concepts.at({lib, name}).allowed)
      if (t.concepts.count({lib, a})) f = std::max(f, visit(a) + 1);
    visiting.erase(name);
    return floor[name] = f;
  };
  for (const auto& [key, c] : t.concepts)
    if (key.first == lib) visit(key.second);
  return floor;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: flashlab_check_architecture SOURCE_DIR [--stats]\n";
    return 2;
  }
  Tree t;
  t.root = argv[1];
  const bool stats = argc > 2 && std::string(argv[2]) == "--stats";
  if (!fs::is_directory(t.root / "sim")) {
    std::cerr << "flashlab_check_architecture: " << t.root << " is not FlashLab's source folder\n";
    return 2;
  }
  load_rules(t);
  std::map<std::string, std::map<std::string, int>> lib_floors;
  for (const auto& lib : kLibraries) lib_floors[lib] = floors(t, lib);

  std::map<std::string, int> files_in_folder;
  int arrows = 0, arrows_up = 0, unplaced = 0;
  for (const auto& lib : kLibraries) {
    for (const auto& e : fs::recursive_directory_iterator(t.root / lib)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), t.root);
      files_in_folder[rel.parent_path().generic_string()]++;
      if (!is_source(rel)) continue;
      const auto from = concept_of(t, rel);
      const bool umbrella = rel.generic_string().find("/include/flashlab/") != std::string::npos &&
                            rel.parent_path().filename() == "flashlab";
      if (from && !t.concepts.count(*from)) {
        t.problems.push_back(rel.generic_string() + ": its folder '" + from->second + "' of " + lib +
                             " has no concept README with a 'May include:' line");
        ++unplaced;
      } else if (!from && !umbrella) {
        t.problems.push_back(rel.generic_string() + ": in no concept folder (no README with 'May include:' above it)");
        ++unplaced;
      }
      std::ifstream in(e.path());
      int line_no = 0;
      for (std::string line; std::getline(in, line);) {
        ++line_no;
        const auto inc_or = quoted_include(line);
        if (!inc_or) continue;
        const std::string& inc = *inc_or;
        const auto to = resolve(t, rel, inc);
        if (!to || to->library.empty()) continue;  // a system or third-party header
        const std::string where = rel.generic_string() + ":" + std::to_string(line_no) + ": ";
        if (to->library != lib) {
          if (!t.library_allowed[lib].count(to->library))
            t.problems.push_back(where + lib + " may not include " + to->library + " (\"" + inc + "\")");
          continue;
        }
        if (!from || !to->concept_key || *from == *to->concept_key) continue;
        if (!t.concepts.count(*from) || !t.concepts.count(*to->concept_key)) continue;  // reported below
        ++arrows;
        const auto& c = t.concepts.at(*from);
        if (!c.allowed.count(to->concept_key->second)) {
          t.problems.push_back(where + from->second + " may not include " + to->concept_key->second +
                               " (\"" + inc + "\"; " + (c.dir / "README.md").generic_string() +
                               " lists what it may include)");
          const auto& fl = lib_floors[lib];
          if (fl.count(to->concept_key->second) && fl.at(to->concept_key->second) >= fl.at(from->second))
            ++arrows_up;
        }
      }
    }
  }
  if (stats) {
    for (const auto& lib : kLibraries) {
      std::cout << lib << ":";
      std::map<int, std::vector<std::string>> by_floor;
      for (const auto& [name, f] : lib_floors[lib]) by_floor[f].push_back(name);
      for (const auto& [f, names] : by_floor) {
        std::cout << " [" << f << "]";
        for (const auto& n : names) std::cout << " " << n;
      }
      std::cout << "\n";
    }
    int most = 0;
    std::string most_at;
    for (const auto& [dir, n] : files_in_folder)
      if (n > most) most = n, most_at = dir;
    std::cout << "concepts: " << t.concepts.size() << ", include arrows between concepts: " << arrows
              << ", running back up: " << arrows_up << ", files in no concept: " << unplaced
              << ", fullest folder: " << most_at << " (" << most << " files)\n";
  }
  for (const auto& p : t.problems) std::cout << p << "\n";
  if (!t.problems.empty()) {
    std::cout << t.problems.size() << " broken rule" << (t.problems.size() == 1 ? "" : "s") << "\n";
    return 1;
  }
  std::cout << "every include follows the READMEs' rules (" << t.concepts.size() << " concepts)\n";
  return 0;
}
