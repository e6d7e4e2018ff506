// A link between GPUs as measured (`flashlab links`, the ring's exchange
// measured after its runs): one point per message size. Plain values.
#pragma once

namespace flashlab::sim {

// One message size of a measured link: what one message took and the rates
// that follow from it.
struct LinkCurvePoint {
  double bytes = 0;            // one message
  double time_s = 0;           // one message, one direction, the other direction idle
  double bandwidth = 0;        // bytes/s one direction: bytes / time_s
  double bidir_bandwidth = 0;  // bytes/s per direction with both directions busy; 0 when not measured
};

}  // namespace flashlab::sim
