// The GUI's entry points (gui/state/gui.hpp) in a flashlab built without the
// window: `flashlab gui` and `flashlab` with a display see that it is absent
// and say so, and the CLI's sources are the same with and without it.
#include <ostream>

#include "state/gui.hpp"

namespace flashlab::gui {

bool built() { return false; }

RunResult run(const Options&) { return {2, "this flashlab was built without the GUI", true}; }

void write_settings_list(std::ostream&) {}

const std::vector<std::string>& screenshot_panels() {
  static const std::vector<std::string> none;
  return none;
}

}  // namespace flashlab::gui
