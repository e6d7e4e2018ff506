#include "flashlab/sim/problem/pass.hpp"

#include "core/enum_names.hpp"

namespace flashlab::sim {

namespace {

using detail::EnumName;

constexpr EnumName<PassSelection> kSelectionNames[] = {
    {PassSelection::fwd, "fwd"},          {PassSelection::bwd, "bwd"},         {PassSelection::fwd_bwd, "fwd+bwd"},
    {PassSelection::fwd, "forward"},      {PassSelection::bwd, "backward"},    {PassSelection::fwd_bwd, "fwd_bwd"},
    {PassSelection::fwd_bwd, "both"},     {PassSelection::fwd_bwd, "train"},   {PassSelection::fwd_bwd, "training"}};
static_assert(detail::lists_through(kSelectionNames, PassSelection::fwd_bwd));

}  // namespace

std::string_view to_string(Pass p) { return to_string(selection_of(p)); }

std::string_view to_string(PassSelection p) { return detail::name_of(kSelectionNames, p); }

std::optional<PassSelection> parse_pass_selection(std::string_view s) { return detail::value_named(kSelectionNames, s); }

PassSelection selection_of(Pass p) { return p == Pass::fwd ? PassSelection::fwd : PassSelection::bwd; }

bool includes(PassSelection s, Pass p) { return s == PassSelection::fwd_bwd || s == selection_of(p); }

}  // namespace flashlab::sim
