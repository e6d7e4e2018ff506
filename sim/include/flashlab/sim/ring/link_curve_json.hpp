// The JSON form of a measured link curve, for the files that carry one (a
// measured link's "curve", "copy_engine_curve" and "ring_curve"; ring
// results' "ring_exchange"): [{"bytes", "time_us", "gbs", "bidir_gbs"}, ...],
// ascending bytes, each rate its bytes over its time. Needs nlohmann-json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::sim {

nlohmann::json link_curve_json(const std::vector<LinkCurvePoint>& curve);
// The curve in field `name` of object `j`; empty when absent. Throws
// InterconnectError naming `origin` and the field.
std::vector<LinkCurvePoint> parse_link_curve(const nlohmann::json& j, const std::string& name,
                                             const std::string& origin);

}  // namespace flashlab::sim
