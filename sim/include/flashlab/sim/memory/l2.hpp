// The L2 between SRAM and DRAM. The simulator's Counters count requests to
// global memory — the FlashAttention paper's "HBM accesses", the quantity of
// its Θ(N²d²/M) theorem. On a GPU those requests go to a 40–60 MB L2 first,
// and only its misses (and the dirty lines it evicts) reach DRAM. This model
// runs the same loop nest as a launch — resident thread blocks stepping
// through their visits together, in dispatch order — through an LRU L2 of the
// hardware's capacity, and reports per tensor: requests, L2 hits and DRAM
// bytes. The query heads of a group (grouped-query attention) share the L2
// lines of their K, V, dK, dV. docs/model.md says what it assumes and how it
// compares with the DRAM bytes a GPU's counters measure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/schedule/schedule.hpp"

namespace flashlab::sim {

// How a schedule runs on the GPU: how many thread blocks (CTAs) are resident at
// once and in which order the grid hands them out. Head-major dispatch: every
// CTA of head 0, then head 1, ... (the heads of a K/V group one after
// another); within a head by outer index, ascending, or descending when the
// kernel starts the heaviest causal row blocks first. A
// phase whose outer loop runs over column blocks (the backward's one CTA per
// K_j, V_j) is dispatched ascending either way: its heaviest causal blocks
// are the first. Each phase of a schedule is a launch of its own.
//
// slot_stagger: with several CTAs per SM, the blocks in the same slot of
// every SM may walk as a cohort of their own, apart from the other slots'
// (docs/model.md §7b, "Two CTAs on an SM"): slot s starts s × slot_stagger of a
// mean block's walk after slot 0 and is refilled as its own blocks finish
// (1/c: the c slots evenly apart). 0, the default: the resident CTAs start
// together and refill one pool of slots, so the blocks dispatched together
// walk in step whichever slots they run in.
struct Launch {
  i64 sm_count = 0;
  i64 ctas_per_sm = 1;
  bool heaviest_first = false;
  double slot_stagger = 0;
  std::string source;  // where the numbers come from ("occupancy of fa2_tc on ...", "model: ...")
  i64 concurrent_ctas() const { return sm_count * ctas_per_sm; }
};

// The launch the model assumes for an algorithm on a machine: every SM of the
// preset, as many CTAs per SM as its SRAM holds working sets of this schedule
// (`working_set_bytes`, the SRAM peak), at least 1 and at most 32 (the Hopper
// and Ampere limit).
Launch model_launch(const HardwareModel& hw, i64 working_set_bytes);

struct TensorTraffic {
  i64 request_read_bytes = 0, request_write_bytes = 0;  // what the loop nest asks of global memory
  i64 l2_hit_read_bytes = 0;                            // reads served by the L2
  i64 dram_read_bytes = 0;                              // reads that missed
  i64 dram_write_bytes = 0;                             // dirty data the L2 evicted during the run
  i64 dirty_at_end_bytes = 0;                           // written, still in L2 when the run ends
  i64 l2_absorbed_write_bytes = 0;  // writes over data still dirty in L2: the later one replaces it there
  // request_read = l2_hit_read + dram_read;
  // request_write = dram_write + dirty_at_end + l2_absorbed_write.
  TensorTraffic& operator+=(const TensorTraffic& o);
};

// What one step-through visit of the first head found in the L2.
struct VisitL2 {
  float dram_fraction = 0;  // of the visit's read requests, the part that came from DRAM
  // The same, with a tile the CTAs of the wave share (K_j, V_j) counted once
  // for the wave: its miss split among the CTAs that asked for it. Summed over
  // visits (× their read requests) this gives the first head's DRAM reads.
  float dram_share = 0;
  std::int32_t wave = -1;   // index into L2Result::waves
};

// A group of CTAs of the first head dispatched together: they walk the same
// K_j, V_j at the same time, so one of them brings a tile into L2 and the
// others find it there (over column blocks: the same Q_i, dO_i, dQ_i, when
// they are at the same row block).
struct WaveGroup {
  int phase = 0;
  i64 launch = 0;                 // outer iteration whose launch this is (one launch per outer iteration), else 0
  i64 start_step = 0;             // when the group started, in visit steps since the launch began
  std::vector<i64> ctas;          // outer indices (a CTA per outer iteration) or visit indices (a CTA per visit)
};

struct L2Result {
  bool modelled = false;
  std::string why_not;  // e.g. "the hardware model has no L2 size": DRAM is then taken equal to the requests
  Launch launch;
  i64 l2_bytes = 0;        // the capacity modelled: the L2 a working set read by every SM sees
  i64 l2_partitions = 1;   // of an L2 of l2_bytes × l2_partitions (hardware.hpp)
  std::array<TensorTraffic, kTensorCount> tensors{};  // all B·H heads
  std::string method;   // "simulated: 264 resident CTAs ..."; "; followed the first 4 of 64 heads ..."
  i64 heads_followed = 0;  // of all_heads: walked through the cache; the rest scaled from them
  i64 all_heads = 0;

  // The first head's visits, in the schedule's order (outer o, visit k at
  // visit_index(o) + k), when it has at most kMaxTracedVisits of them.
  static constexpr i64 kMaxTracedVisits = 4'000'000;
  std::vector<i64> visit_index;  // per outer iteration of one head
  std::vector<VisitL2> visits;
  std::vector<WaveGroup> waves;

  TensorTraffic total() const;
  i64 dram_bytes() const;           // read + write
  i64 request_bytes() const;        // read + write
  double read_hit_rate() const;     // L2 hits / read requests; 0 when there are none
  const VisitL2* visit(i64 outer, i64 k) const;  // null when not traced
};

struct L2Options {
  // Above this many cache accesses the model follows a prefix of the heads and
  // extrapolates the rest (every head runs the same schedule); the method says so.
  i64 access_budget = 1'000'000;
  // A hard stop: a problem whose minimum (three waves of the grid, four L2s of
  // traffic per pass) needs more cache accesses than this is not modelled, and
  // why_not says so, rather than keep the caller waiting.
  i64 access_limit = 40'000'000;
  bool trace_first_head = false;
  // The partitions of the L2 whose one partition l2_bytes is (hardware.hpp,
  // shared_l2_bytes). A line an SM reads may be held in every partition; the
  // atomic adds of the thread blocks of a wave into one tile are done at its
  // line's home partition, so such a line is held once and takes 1/partitions
  // of its bytes of one partition.
  i64 l2_partitions = 1;
};

// The sequence length N at which K and V of one head fill the L2:
// 2·N·d·s = l2_bytes (s: the bytes of an element of the dtype), so
// N = l2_bytes / (2·d·s). Beyond it a head's K_j, V_j no longer stay in the
// L2 between the row blocks that re-read them. 0 when the hardware has no L2
// size or d is not positive.
double seq_where_kv_fill_l2(i64 head_dim, DType dtype, i64 l2_bytes);

// The first head's reads in the schedule's order, split by where they came
// from, derived from the visit trace (L2Result::visits): visit (o, k) asked for
// its read requests — with outer iteration o's own loads at k = 0, where the
// trace counts them — and its part of the DRAM reads is VisitL2::dram_share of
// them (a tile the wave shares is read from DRAM once, not once per CTA). The
// prologue, outer_end and epilogue pieces are not in the trace and not here,
// nor are the outer iterations without visits (a backward pre- or post-pass);
// nor are writes (written-back lines leave the L2 whenever it evicts them).
// Built once per result, O(visits); a query costs the visits of one outer
// iteration.
struct ReadSplit {
  double request_bytes = 0;  // read requests (HBM and L2 loads of the loop nest)
  double dram_bytes = 0;     // the part the L2 model took from DRAM
};
class TracedReads {
 public:
  TracedReads() = default;
  TracedReads(const Schedule& s, const L2Result& r);
  // False when the result has no trace (L2 not modelled, or the first head has
  // more than L2Result::kMaxTracedVisits visits); why_not() says which.
  bool available() const { return !outer_prefix_.empty(); }
  const std::string& why_not() const { return why_not_; }
  // Reads of the first k visits of outer iteration o and of every visit of
  // the outer iterations before it (k is clamped to o's visit count).
  ReadSplit before(i64 o, i64 k) const;
  ReadSplit total() const;

 private:
  std::vector<i64> visit_index_;              // as L2Result::visit_index
  std::vector<float> requested_, from_dram_;  // per visit, bytes
  std::vector<ReadSplit> outer_prefix_;       // per outer iteration o: the sum over outer iterations < o
  std::string why_not_;
};

// Runs `s` (all B·H heads) as `launch` through an LRU L2 of `l2_bytes`.
// l2_bytes ≤ 0: not modelled (why_not says so), DRAM taken equal to the requests.
L2Result simulate_l2(const Schedule& s, const Launch& launch, i64 l2_bytes, const L2Options& options = {});

}  // namespace flashlab::sim
