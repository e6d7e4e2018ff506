// One call from inputs to a result: choose tiles, check they fit, count.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/memory/l2.hpp"
#include "flashlab/sim/schedule/schedule.hpp"
#include "flashlab/sim/schedule/sram.hpp"

namespace flashlab::sim {

struct Finding {
  enum class Severity { note, error };
  Severity severity = Severity::note;
  std::string message;
};

struct TileChoice {
  TileShape tiles;
  std::string rule;  // "paper", "paper, shrunk to fit", "explicit"
  std::vector<Finding> findings;
  bool ok() const;
};

// Peak SRAM bytes of a schedule, from the stream of the pieces that hold the
// largest tiles: the prologue and epilogue, and the first outer iteration of
// every phase (row block 0 or column block 0, as the phase's outer loop runs)
// with its first and last visit. Equal to the full stream's peak; the tests check it.
i64 sram_peak_probe(const Schedule& s, i64 capacity = std::numeric_limits<i64>::max(),
                    std::optional<SramOverflow>* overflow = nullptr);

// Tiles for algorithm `a` on an SRAM of `sram_bytes`. Explicit tiles are taken
// as given (an error later if they do not fit). Otherwise the algorithm's rule
// (AlgorithmInfo::tile_rule: the paper's for FlashAttention-1, its transpose for
// an outer loop over Q_i, the backward rule B_c = ⌈M/8d⌉ for the backward
// passes over K_j, V_j); when its tile set does not fit (the rule is
// asymptotic), the block capped at d and then the other are halved until the
// algorithm's own working set fits, and a note says so.
TileChoice choose_tiles(Algorithm a, const AttentionProblem& p, i64 sram_bytes, std::optional<TileShape> explicit_tiles);

struct SimOptions {
  std::optional<TileShape> tiles;
  i64 sram_bytes = 0;  // 0: the hardware's sram_bytes_per_sm
  // The tiles are a compiled kernel's (they ran): where they exceed M in the
  // algorithm's accounting they are counted against the SM's SRAM and register
  // file (on_chip_bytes_per_sm), with a note, instead of refused — the kernels
  // keep dK_j, dV_j, S_ij and P_ij in registers. Not with M set (sram_bytes).
  bool kernel_tiles = false;
  // Above this many events per head the counters come from the closed forms
  // (equal by test) instead of running the stream.
  i64 stream_event_limit = 20'000'000;
  // The L2 between SRAM and DRAM (l2.hpp): on unless turned off; the launch is
  // the model's (model_launch) unless a kernel gives its own.
  bool l2 = true;
  std::optional<Launch> launch;
  L2Options l2_options;
  // Element types a kernel keeps in global memory where they differ from the
  // paper's (a kernel's O accumulated in fp32); default: the paper's algorithm.
  StorageTypes storage;
};

struct SimResult {
  Algorithm algorithm = Algorithm::fa2;
  AttentionProblem problem;
  std::string hardware;
  TileShape tiles;
  std::string tile_rule;
  i64 T_r = 0, T_c = 0;
  i64 total_blocks = 0, visited_blocks = 0;
  i64 masked_blocks = 0;  // visited blocks holding masked entries
  Counters per_head;      // one head's schedule
  Counters total;         // × B·H (its passes run once per K/V head × B·H_kv: Schedule::over_heads)
  i64 sram_capacity_bytes = 0, sram_peak_bytes = 0;
  bool registers_on_chip = false;  // the capacity is the SM's SRAM and registers (SimOptions::kernel_tiles)
  i64 events_per_head = 0;
  std::string method;     // "event stream" or "closed form"
  std::vector<Finding> findings;
  // What reaches DRAM after the L2. Not modelled (l2.modelled false, l2.why_not
  // says why): DRAM is taken equal to the requests, the paper's two-level model.
  L2Result l2;

  // Bytes that cross the DRAM interface: L2 misses read, and every byte written
  // that leaves the L2 (evicted during the run or dirty at its end, written back
  // later). Equal to the requests (total, HBM level) when the L2 is not modelled.
  i64 dram_read_bytes() const;
  i64 dram_write_bytes() const;
  i64 dram_bytes() const { return dram_read_bytes() + dram_write_bytes(); }

  bool ok() const;
  std::vector<std::string> errors() const;
  std::vector<std::string> messages() const;  // every finding, errors first
};

// One algorithm's inputs on one problem: validated, its tiles chosen, the
// block grid's statistics. A sweep plans each point once per algorithm;
// simulate() with a plan of another algorithm (and no explicit tiles) plans
// again for its own tile rule.
struct Plan {
  Algorithm algorithm = Algorithm::fa1;  // whose tile rule chose the tiles
  AttentionProblem problem;
  i64 sram_capacity_bytes = 0;
  TileChoice tiles;
  i64 T_r = 0, T_c = 0;
  i64 total_blocks = 0, visited_blocks = 0, partially_masked_blocks = 0, blocks_with_mask = 0;
  std::vector<Finding> findings;  // errors here stop every algorithm
  bool ok() const;
};

Plan make_plan(Algorithm a, const AttentionProblem& p, const HardwareModel& hw, const SimOptions& opt = {});
SimResult simulate(Algorithm a, const Plan& plan, const HardwareModel& hw, const SimOptions& opt = {});
SimResult simulate(Algorithm a, const AttentionProblem& p, const HardwareModel& hw, const SimOptions& opt = {});

}  // namespace flashlab::sim
