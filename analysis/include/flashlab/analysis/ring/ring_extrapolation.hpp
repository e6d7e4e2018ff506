// The ring's simulation as people read it: a summary, the per-GPU timeline,
// JSON and CSV (flashlab ring), and the extrapolation over GPUs and sequence
// lengths that says where communication stops hiding under compute.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::analysis {

using sim::i64;

// ---- one simulation ------------------------------------------------------------------

// The problem, the links, each pass's time, compute, communication, exposed
// communication and idle time, the single-GPU time and scaling efficiency,
// and the memory of the largest GPU term by term.
std::string ring_summary_text(const sim::RingSimulation& s, const sim::RingTopology& topo,
                              const sim::RingComputeModel& cm);
// Every GPU's bars: pass, GPU, step, kind, start, end, duration, K/V owner, bytes, pairs.
std::string ring_timeline_table(const sim::RingSimulation& s);
std::vector<std::string> ring_events_csv_header();
std::string ring_events_csv(const sim::RingSimulation& s);
nlohmann::json ring_simulation_json(const sim::RingSimulation& s, const sim::RingTopology& topo,
                                     const sim::RingComputeModel& cm, bool with_events = true);
nlohmann::json interconnect_json(const sim::InterconnectModel& l);
// The host's measured prices as the ring's texts give them: "0.25 µs a stream
// call, 4.40 µs a launch, 20.8 µs an exchange over 2 GPUs (SOURCE)", the
// exchange's time and words as given.
std::string host_prices_text(const sim::HostIssueCosts& h, double exchange_s, const std::string& exchange_words);

// ---- the extrapolation -----------------------------------------------------------------

// A point is "hidden" while, in every pass, the communication its steps
// expose (the longest wait for a transfer before a GPU's last compute) stays
// within this fraction of the pass's time. The backward's tail — dK,
// dV coming home after the last step — is reported beside it: no compute of
// the layer can hide it (a framework overlaps it with the next layer's).
inline constexpr double kExposedCommThreshold = 0.05;

struct RingScalePoint {
  int gpus = 1;
  int nodes = 1;
  double time_s = 0;            // the passes together
  double compute_s = 0;         // the busiest GPU's, summed over the passes
  double comm_s = 0;
  double exposed_comm_s = 0;    // every wait for a transfer, the tail included
  double exposed_steps_s = 0;   // the waits before the last compute
  double tail_s = 0;            // the backward's homecoming after the last compute
  double exposed_fraction = 0;  // the criterion: the largest pass's exposed_steps_s / its time_s
  double tail_fraction = 0;     // tail_s / time_s
  double scaling_efficiency = 0;
  i64 peak_bytes_per_gpu = 0;   // the largest GPU's
  bool fits = true;             // within the hardware's HBM (when it gives one)
  bool hidden() const { return exposed_fraction <= kExposedCommThreshold; }
};

struct RingScaleRow {
  std::string model;            // an attention_models() id, or "custom"
  sim::AttentionProblem problem = sim::default_ring_problem();  // the shape; gpus is the first point's
  std::vector<RingScalePoint> points;  // one per GPU count, in order
  std::optional<int> first_exposed_gpus;  // the smallest P whose communication is not hidden
};

struct RingScaleShape {
  std::string model;
  sim::AttentionProblem problem = sim::default_ring_problem();  // seq and gpus are replaced by the sweep's
};

struct RingExtrapolation {
  std::vector<int> gpus;
  std::vector<i64> seqs;
  sim::RingTopology topology;
  sim::RingComputeModel compute;
  std::vector<RingScaleRow> rows;  // shape-major, then sequence length
};

// P = 1, 2, 4, 8 (one node) and 16, 32 (2 and 4 nodes of 8): the default sweep.
std::vector<int> default_extrapolation_gpus();
std::vector<i64> default_extrapolation_seqs();  // 8K, 16K, 32K, 64K, 128K

// Points a sequence cannot fill (fewer tokens than chunks) are left out of
// the row. Throws std::invalid_argument for a shape the ring cannot simulate.
RingExtrapolation extrapolate_ring(const std::vector<RingScaleShape>& shapes, const std::vector<i64>& seqs,
                                   const std::vector<int>& gpus, const sim::RingTopology& topo,
                                   const sim::RingComputeModel& cm);

// One row per (shape, N): "time ms / scaling efficiency" for each P, "*"
// where the steps' exposed communication exceeds kExposedCommThreshold of the time,
// "!" where a GPU's memory exceeds the hardware's; the last column says from
// which P communication stops hiding. Markdown-friendly when `markdown`.
std::string ring_extrapolation_table(const RingExtrapolation& x, bool markdown = false);
std::vector<std::string> ring_extrapolation_csv_header();
std::string ring_extrapolation_csv(const RingExtrapolation& x);
nlohmann::json ring_extrapolation_json(const RingExtrapolation& x);

}  // namespace flashlab::analysis
