#include "flashlab/sim/ring/link_measurement.hpp"

namespace flashlab::sim {

std::string_view link_transport_name(LinkTransport t) {
  return t == LinkTransport::nccl ? "nccl" : "copy-engine";
}

const LinkSeries* LinkPairMeasurement::find(LinkTransport t) const {
  for (const LinkSeries& s : series)
    if (s.transport == t) return &s;
  return nullptr;
}

}  // namespace flashlab::sim
