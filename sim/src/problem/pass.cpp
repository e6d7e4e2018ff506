#include "flashlab/sim/problem/pass.hpp"

namespace flashlab::sim {

std::string_view to_string(Pass p) { return p == Pass::fwd ? "fwd" : "bwd"; }

std::string_view to_string(PassSelection p) {
  switch (p) {
    case PassSelection::fwd: return "fwd";
    case PassSelection::bwd: return "bwd";
    case PassSelection::fwd_bwd: return "fwd+bwd";
  }
  return "?";
}

std::optional<PassSelection> parse_pass_selection(std::string_view s) {
  if (s == "fwd" || s == "forward") return PassSelection::fwd;
  if (s == "bwd" || s == "backward") return PassSelection::bwd;
  if (s == "fwd+bwd" || s == "fwd_bwd" || s == "both" || s == "train" || s == "training") return PassSelection::fwd_bwd;
  return std::nullopt;
}

PassSelection selection_of(Pass p) { return p == Pass::fwd ? PassSelection::fwd : PassSelection::bwd; }

bool includes(PassSelection s, Pass p) { return s == PassSelection::fwd_bwd || s == selection_of(p); }

}  // namespace flashlab::sim
