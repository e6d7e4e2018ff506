// The links measured (`flashlab links`, sim/ring/link_measurement.hpp) made into
// what people read: bandwidths per message size, a table, CSV, and the
// measured link (a sim::InterconnectModel of kind "measured", format
// flashlab-interconnect/1) that `flashlab ring --link` and the GUI take.
// GB/s = 1e9 bytes per second.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/ring/link_measurement.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::analysis {

// "NVIDIA H200" for GPUs of one kind, else their names joined.
std::string gpu_kinds(const std::vector<std::string>& names);
// The link code every GPU pair of the matrix has ("NV18"); empty when they
// differ or there is no pair.
std::string uniform_link_code(const sim::GpuTopology& t);
// "4× NVIDIA H200 (NVLink, 18 links between every pair)": the GPUs of a run
// and the links nvidia-smi showed between them (the GPUs alone without its
// summary); with_code adds the pairs' code when they share one ("...: NV18)").
// Empty without names.
std::string gpus_and_links(const std::vector<std::string>& names, const sim::GpuTopology& t, bool with_code = false);

// One size of one pair and one transport, its rates derived from its median times.
struct LinkRate {
  sim::i64 bytes = 0;
  double one_way_us = 0;         // one message, the other direction idle
  double one_way_gbs = 0;        // bytes / one_way_us
  double both_us = 0;            // one message each way, both at once
  double both_per_direction_gbs = 0;  // bytes / both_us
  double both_total_gbs = 0;     // 2·bytes / both_us
};
LinkRate link_rate(const sim::LinkSample& s);

// The pair whose one-direction NCCL bandwidth at the largest message is the
// lowest: a ring moves in lockstep, so its slowest hop sets every step.
// Throws std::invalid_argument when nothing was measured.
const sim::LinkPairMeasurement& slowest_link_pair(const sim::LinkMeasurements& m);

// The datasheet preset the measured pairs correspond to: "nvlink4" when every
// pair is "NV18" in the topology (18 NVLink 4 links, H100/H200 SXM); empty
// when the topology is unknown or says anything else.
std::string matching_datasheet_link(const sim::LinkMeasurements& m);

struct MeasuredLinkNames {
  std::string id;     // empty: "measured-<gpu>-<P>gpu-<date>"
  std::string label;  // empty: "NCCL send/recv measured on P× <gpu> (<topology>)"
};

// The measured link: bandwidth_gbs and latency_us from the slowest pair's
// NCCL one-direction curve (largest and smallest message), the curve itself,
// the copy engines' curve of the same pair, every pair's figures, the GPUs,
// NCCL's version, the topology, a source line, and notes that say the rule
// and set the figure beside `datasheet` (when given) as a ratio. Throws
// std::invalid_argument when nothing was measured.
sim::InterconnectModel measured_link(const sim::LinkMeasurements& m, const MeasuredLinkNames& names = {},
                                     const sim::InterconnectModel* datasheet = nullptr);

// Per pair, a table of every size: NCCL and the copy engines, one way and
// both ways (µs, GB/s one direction, GB/s per direction and together), under
// a header naming the GPUs, NCCL and the topology.
std::string link_table(const sim::LinkMeasurements& m);
// The host's issuing of a measurement with its source line ("measured on 2×
// NVIDIA H200, 2026-11-27, one host thread, medians of 15 rounds"); none when
// it was not measured.
sim::HostIssueCosts measured_host(const sim::LinkMeasurements& m);
// The ring's exchange as a curve (message size → time, per GPU and
// direction); empty when not measured.
std::vector<sim::LinkCurvePoint> ring_exchange_curve(const sim::LinkMeasurements& m);

// One row per pair, transport and size, with the times (median, min, max)
// and the rates.
std::string links_csv(const sim::LinkMeasurements& m);

}  // namespace flashlab::analysis
