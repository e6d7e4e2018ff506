// The L2 model: the loop nest run as a launch through an LRU L2.
//
// What each piece of the loop nest asks of global memory is read off its own
// emission (a probe emission, as the cost model does): loads from HBM or L2
// are read requests, stores to HBM write requests, each a tile of a tensor
// indexed by the visit's row block i, column block j, both, or neither (a
// whole tensor): l2_accesses.hpp. Nothing about the algorithms is restated
// here. The L2 holds lines of tiles (l2_lines.hpp); this file runs the launch.
//
// The launch: W = SMs × CTAs per SM thread blocks are resident; the grid hands
// them out head-major. Blocks dispatched together for the same head walk their
// visits in lockstep, one visit per step, so they form a cohort: an access
// that depends on j only (K_j, V_j) is made once per cohort and step — the
// first block brings the tile in, the others find it in L2 — and accesses that
// depend on a block's own row i (Q_i, O_i, S_ij) are made for each member,
// grouped into the L2 lines they fall in. Steps are visits; every block takes
// one step per visit, so blocks that started together stay together. A phase
// whose outer loop runs over column blocks (a CTA per K_j, V_j) mirrors it:
// K_j, V_j, dK_j, dV_j are each member's, and Q_i, dO_i, dQ_i are shared by the
// members at the same row block in the step (cols_piece). A phase without
// visits takes one step per block. Each phase is a launch of its own.
// With Launch::slot_stagger, each CTA slot of the SMs is a pool of its own,
// opened later by the stagger and refilled as its blocks finish: the slots'
// cohorts walk apart (run_cta_per_outer).
//
// A line is keyed by the head of the tensor's memory it holds (memory_head):
// with grouped-query attention the G query heads of a group read the same
// K_j, V_j and add into the same dK_j, dV_j, so they share those lines; the
// traffic is counted for the head that asks.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/memory/l2.hpp"

#include "flashlab/sim/core/format.hpp"
#include "l2_accesses.hpp"
#include "l2_cache.hpp"
#include "l2_lines.hpp"
#include "schedule/loop_nest.hpp"

namespace flashlab::sim {

using detail::AccessOutcome;
using detail::Emitter;
using detail::LineShape;
using detail::LoopNest;
using detail::SectoredLru;

TensorTraffic& TensorTraffic::operator+=(const TensorTraffic& o) {
  request_read_bytes += o.request_read_bytes;
  request_write_bytes += o.request_write_bytes;
  l2_hit_read_bytes += o.l2_hit_read_bytes;
  dram_read_bytes += o.dram_read_bytes;
  dram_write_bytes += o.dram_write_bytes;
  dirty_at_end_bytes += o.dirty_at_end_bytes;
  l2_absorbed_write_bytes += o.l2_absorbed_write_bytes;
  return *this;
}

double seq_where_kv_fill_l2(i64 head_dim, DType dtype, i64 l2_bytes) {
  if (l2_bytes <= 0 || head_dim <= 0) return 0;
  return static_cast<double>(l2_bytes) / static_cast<double>(2 * head_dim * dtype_bytes(dtype));
}

TensorTraffic L2Result::total() const {
  TensorTraffic t;
  for (const TensorTraffic& x : tensors) t += x;
  return t;
}
i64 L2Result::dram_bytes() const {
  const TensorTraffic t = total();
  return t.dram_read_bytes + t.dram_write_bytes;
}
i64 L2Result::request_bytes() const {
  const TensorTraffic t = total();
  return t.request_read_bytes + t.request_write_bytes;
}
double L2Result::read_hit_rate() const {
  const TensorTraffic t = total();
  return t.request_read_bytes > 0 ? static_cast<double>(t.l2_hit_read_bytes) / static_cast<double>(t.request_read_bytes)
                                  : 0.0;
}
const VisitL2* L2Result::visit(i64 outer, i64 k) const {
  if (outer < 0 || static_cast<size_t>(outer) + 1 >= visit_index.size()) return nullptr;
  const i64 at = visit_index[static_cast<size_t>(outer)] + k;
  if (k < 0 || at >= visit_index[static_cast<size_t>(outer) + 1]) return nullptr;
  return &visits[static_cast<size_t>(at)];
}

Launch model_launch(const HardwareModel& hw, i64 working_set_bytes) {
  Launch l;
  l.sm_count = std::max<i64>(1, hw.sm_count);
  const i64 fit = working_set_bytes > 0 ? hw.sram_bytes_per_sm / working_set_bytes : 1;
  l.ctas_per_sm = std::clamp<i64>(fit, 1, 32);
  l.source = "model: " + std::to_string(l.sm_count) + " SMs × " + std::to_string(l.ctas_per_sm) +
             " CTA(s) per SM (SRAM per SM / the schedule's working set)";
  if (hw.sm_count < 1) l.source += "; the hardware model gives no SM count, 1 assumed";
  return l;
}

namespace {

using l2_detail::Access;
using l2_detail::Extent;
using l2_detail::mark_atomic_adds;
using l2_detail::Memory;
using l2_detail::NotModelled;
using l2_detail::PhaseAccesses;
using l2_detail::record;

// ---- the launch -----------------------------------------------------------------

struct Member {
  i64 outer = 0;  // the CTA's outer iteration (or, one CTA per visit, its visit index)
  i64 i = 0;      // its row block (an outer loop over rows, or a CTA per visit)
  i64 steps = 1;
  // An outer loop over columns: the CTA's column block, and the row block of
  // its first visit (first_row(j) when causal); at step t it visits row lo + t.
  i64 j = -1, lo = 0;
  i64 slot = 0;  // the CTA slot of its SM it runs in (Runner::run_cta_per_outer)
};

struct Cohort {
  i64 head = 0;
  i64 start = 0;
  std::vector<Member> members;  // by steps, longest first
  size_t active = 0;            // members still running
  std::int32_t wave = -1;       // in the trace, for the first head
  bool counted = true;          // a followed head's (else it only takes its place in the L2)
  // +1 or −1 when the members' rows run consecutively in that direction from
  // first_row (so do those of any prefix: the active members), else 0.
  int row_step = 0;
  i64 first_row = 0;
  void find_row_step() {
    row_step = 0;
    first_row = members.empty() ? 0 : members.front().i;
    if (members.size() < 2) {
      row_step = 1;
      return;
    }
    const i64 d = members[1].i - members[0].i;
    if (d != 1 && d != -1) return;
    for (size_t k = 1; k < members.size(); ++k)
      if (members[k].i - members[k - 1].i != d) return;
    row_step = static_cast<int>(d);
  }
};

// Per-member read bytes and DRAM bytes of one step, for the trace of the first head.
struct StepTraffic {
  // from_dram: what each member found missing (a shared tile's miss, for each
  // member that asked for it); dram_share: its part of the DRAM reads (a shared
  // tile's miss split among the members), so that the shares add up to them.
  std::vector<double> requested, from_dram, dram_share;
  void reset(size_t n) {
    requested.assign(n, 0.0);
    from_dram.assign(n, 0.0);
    dram_share.assign(n, 0.0);
  }
};

class Runner {
 public:
  Runner(const Schedule& s, const Launch& l, i64 l2_bytes, const L2Options& o, i64 heads)
      : s_(s),
        launch_(l),
        opt_(o),
        heads_(heads),
        all_heads_(s.problem().head_count()),
        mem_(s.grid(), s.problem(), l2_bytes, o.l2_partitions) {
    mem_.set_limit(o.access_limit);
    const LoopNest& nest = s.loop_nest();
    const AttentionProblem& p = s.problem();
    for (int ph = 0; ph < nest.phases(); ++ph) {
      PhaseAccesses a;
      a.begin = record(p, s.storage(), [&](Emitter& e) { nest.outer_begin(ph, 1, e); });
      if (nest.has_visits(ph)) a.visit = record(p, s.storage(), [&](Emitter& e) { nest.visit(ph, 1, 2, false, e); });
      // A CTA per K_j, V_j (not a launch per K_j with a CTA per row block, FlashAttention-1's).
      a.end = record(p, s.storage(), [&](Emitter& e) { nest.outer_end(ph, 1, e); });
      if (s.info().grid == GridShape::cta_per_outer_iteration && !nest.outer_over_rows(ph)) mark_atomic_adds(a);
      phases_.push_back(a);
    }
    prologue_ = record(p, s.storage(), [&](Emitter& e) { nest.prologue(e); });
    epilogue_ = record(p, s.storage(), [&](Emitter& e) { nest.epilogue(e); });
    W_ = std::max<i64>(1, l.concurrent_ctas());
  }

  i64 followed() const { return heads_; }
  void follow_first(i64 heads) { heads_ = heads; }
  i64 min_heads_ = 1;
  // The followed heads are a multiple of it: G, the heads of a group, or 1.
  i64 head_unit_ = 1;
  // The heads Memory::finish counts apart: the first group, when the followed
  // heads are at least two groups; else the first head.
  i64 first_heads() const {
    return heads_ >= 2 * head_unit_ && heads_ % head_unit_ == 0 ? head_unit_ : 1;
  }

  // The fewest cache accesses one head can take: every outer iteration's own
  // accesses, and each visit's shared by at most all resident CTAs at once.
  i64 least_accesses_per_head() const {
    i64 n = static_cast<i64>(prologue_.size() + epilogue_.size());
    for (i64 o = 0; o < s_.outer_count(); ++o) {
      const PhaseAccesses& a = phases_[static_cast<size_t>(s_.phase_of(o))];
      n += static_cast<i64>(a.begin.size() + a.end.size());
      n += (s_.visit_count(o) * static_cast<i64>(a.visit.size()) + W_ - 1) / W_;
    }
    return n;
  }

  void run(L2Result& out) {
    if (trace_) begin_trace(out);
    whole(prologue_);
    for (int ph = 0; ph < s_.phases(); ++ph) {
      if (s_.info().grid == GridShape::cta_per_outer_iteration) {
        run_cta_per_outer(ph, out);
      } else {
        if (s_.outer_over_rows(ph) || !s_.has_visits(ph))
          throw NotModelled{"the L2 model runs a launch per outer iteration only for an outer loop over column "
                            "blocks with visits (a thread block per row block of each K_j, V_j); phase " +
                            std::to_string(ph + 1) + " of this schedule is not one"};
        for (i64 idx = 0; idx < s_.phase_outer_count(ph); ++idx) run_launch_per_outer(ph, s_.phase_begin(ph) + idx, out);
      }
    }
    whole(epilogue_);
    out.tensors = mem_.finish(heads_, all_heads_, first_heads());
  }

  bool trace_ = false;

 private:
  // A whole-tensor access (an initialisation in HBM): every row tile (N_q
  // rows: Q, O, dQ) or column tile (N_kv rows: dK, dV) of every head.
  void whole(const std::vector<Access>& accesses) {
    const TileGrid& g = s_.grid();
    for (Access a : accesses) {
      if (a.rows == Extent::n_q) {
        a.rows = Extent::r;
        a.uses_i = true;
        for (i64 h = 0; h < heads_; ++h) group_rows(a, h, -1, 0, g.T_r, +1);
      } else if (a.rows == Extent::n_kv) {
        a.rows = Extent::c;
        a.uses_j = true;
        for (i64 h = 0; h < heads_; ++h) {
          std::uint64_t mask = 0;
          Memory::Line cur;
          for (i64 j = 0; j < g.T_c; ++j) {
            const Memory::Line l = mem_.line_of(a, h, -1, j);
            if (mask != 0 && l.key != cur.key) {
              mem_.touch(a, cur, mask);
              mask = 0;
            }
            cur = l;
            mask |= std::uint64_t{1} << l.bit;
          }
          if (mask != 0) mem_.touch(a, cur, mask);
        }
      } else {
        throw NotModelled{"the L2 model places whole tensors of N_q or N_kv rows only"};
      }
    }
  }

  // Accesses `a` for members [lo, hi) (row block of member k: row_of(k)), grouped into lines.
  template <class RowOf>
  void group_members(const Access& a, i64 head, i64 j, i64 lo, i64 hi, const RowOf& row_of, StepTraffic* traffic) {
    const i64 gsz = mem_.group(a);
    std::uint64_t mask = 0;
    i64 cur_line = -1, first = lo, cur_i = 0;
    auto flush = [&](i64 end) {
      if (mask == 0) return;
      const AccessOutcome o = mem_.touch(a, mem_.line_of(a, head, cur_i, j), mask);
      if (traffic != nullptr && !a.write) {
        const double frac = o.hit_bytes + o.miss_bytes > 0
                                ? static_cast<double>(o.miss_bytes) / static_cast<double>(o.hit_bytes + o.miss_bytes)
                                : 0.0;
        for (i64 k = first; k < end; ++k) {
          const double b = static_cast<double>(mem_.tile_bytes(a, row_of(k), j));
          traffic->requested[static_cast<size_t>(k)] += b;
          traffic->from_dram[static_cast<size_t>(k)] += b * frac;
          traffic->dram_share[static_cast<size_t>(k)] += b * frac;
        }
      }
      mask = 0;
    };
    for (i64 k = lo; k < hi; ++k) {
      const i64 i = row_of(k);
      const i64 line = i / gsz;
      if (line != cur_line) {
        flush(k);
        first = k;
        cur_line = line;
        cur_i = i;
      }
      mask |= std::uint64_t{1} << (i % gsz);
    }
    flush(hi);
  }

  // The same as group_members for members whose rows run consecutively from
  // `first`, ascending (step +1) or descending (step −1): the lines they cover
  // follow from the range alone, touched in the order the members would touch
  // them, at the cost of one step per line instead of one per member.
  void group_rows(const Access& a, i64 head, i64 j, i64 first, i64 count, int step) {
    const i64 gsz = mem_.group(a);
    const i64 lo = step > 0 ? first : first - count + 1, hi = lo + count;  // rows [lo, hi)
    auto bits = [](i64 from, i64 to) {                                      // bits [from, to) of a line
      const std::uint64_t upto = to >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << to) - 1;
      return upto & ~((std::uint64_t{1} << from) - 1);
    };
    // Every line but the tensor's last has the shape of the first and a key
    // that differs in its line index alone (Memory::line_of).
    const Memory::Line first_line = mem_.line_of(a, head, lo, j);
    const i64 last_line = (s_.grid().T_r - 1) / gsz;
    if (last_line >= (i64{1} << 20)) throw OverflowError("too many heads or blocks for the L2 model's line index");
    auto line = [&](i64 i) {
      const i64 q = i / gsz;
      if (q == last_line || q == lo / gsz) return mem_.line_of(a, head, i, j);
      Memory::Line l = first_line;
      l.key = (first_line.key & ~(std::uint64_t{0xFFFFF} << 20)) | (static_cast<std::uint64_t>(q) << 20);
      return l;
    };
    if (step > 0) {
      for (i64 i = lo; i < hi;) {
        const i64 end = std::min(hi, (i / gsz + 1) * gsz);
        mem_.touch(a, line(i), bits(i % gsz, i % gsz + (end - i)));
        i = end;
      }
    } else {
      for (i64 i = hi; i > lo;) {
        const i64 begin = std::max(lo, ((i - 1) / gsz) * gsz);
        mem_.touch(a, line(i - 1), bits(begin % gsz, begin % gsz + (i - begin)));
        i = begin;
      }
    }
  }

  // One access shared by every member of a cohort (it depends on j only).
  void shared(const Access& a, i64 head, i64 j, size_t members, StepTraffic* traffic) {
    const Memory::Line l = mem_.line_of(a, head, -1, j);
    const AccessOutcome o = mem_.touch(a, l, std::uint64_t{1} << l.bit, static_cast<i64>(members));
    if (traffic != nullptr && !a.write) {
      const double b = static_cast<double>(o.hit_bytes + o.miss_bytes);
      for (size_t k = 0; k < members; ++k) {
        traffic->requested[k] += b;
        traffic->from_dram[k] += static_cast<double>(o.miss_bytes);
        traffic->dram_share[k] += static_cast<double>(o.miss_bytes) / static_cast<double>(members);
      }
    }
  }

  // Every access of one piece template for the active members [0, n) of a
  // cohort. An access that depends on j only is asked for by each member
  // (`per_member`), or once for the launch (the outer iteration's own loads
  // when a launch runs one outer iteration).
  void piece(const std::vector<Access>& accesses, const Cohort& c, size_t n, i64 j, StepTraffic* traffic,
             bool per_member = true) {
    for (const Access& a : accesses) {
      if (a.uses_i && traffic == nullptr && c.row_step != 0 && n > 0)
        group_rows(a, c.head, j, c.first_row, static_cast<i64>(n), c.row_step);
      else if (a.uses_i)
        group_members(a, c.head, j, 0, static_cast<i64>(n), [&](i64 k) { return c.members[static_cast<size_t>(k)].i; },
                      traffic);
      else if (a.uses_j)
        shared(a, c.head, j, per_member ? n : 1, traffic);
      else
        throw std::logic_error("the L2 model expects per-block accesses inside the loop");
    }
  }

  // Where a member of a cohort over column blocks is in a step: the query head
  // it runs and its row block.
  struct Pos {
    i64 head = 0, row = 0;
  };

  // Every access of one piece template for members [m0, m1) of a cohort whose
  // outer loop runs over column blocks; member m is at row block lo_m + step
  // and column block j_m. An access of the row block alone (Q_i, dO_i, L_i,
  // D_i, dQ_i) is asked for by each member: members at the same row block in
  // this step (all of them, unless causal starts them apart) share the tile —
  // the first brings it in, the others find it. An access of the column block
  // (K_j, V_j, dK_j, dV_j) or of both (P_ij, dS_ij) is each member's own;
  // members whose tiles fall in one L2 line touch it together.
  void cols_piece(const std::vector<Access>& accesses, const Cohort& c, size_t m0, size_t m1, i64 step,
                  StepTraffic* traffic) {
    ks_.clear();
    for (size_t k = m0; k < m1; ++k) ks_.push_back(k);
    cols_touch(accesses, c, ks_, [&](size_t k) { return Pos{c.head, c.members[k].lo + step}; }, traffic, false);
  }

  // cols_piece for the members `ks` (indices into c.members, in order), member
  // k at pos_of(k): members at the same head and row block share its tiles.
  // `per_head_counting`: members of one cohort at different query heads (a
  // block walking its group), each counted as its head is followed or not.
  template <class PosOf>
  void cols_touch(const std::vector<Access>& accesses, const Cohort& c, const std::vector<size_t>& ks,
                  const PosOf& pos_of, StepTraffic* traffic, bool per_head_counting) {
    const size_t n = ks.size();
    auto count_for = [&](i64 head) {
      if (per_head_counting) mem_.set_counting(c.counted && head < heads_);
    };
    for (const Access& a : accesses) {
      if (!a.uses_i && !a.uses_j) throw NotModelled{"the L2 model expects per-block accesses inside the loop"};
      auto row_of = [&](size_t x) { return pos_of(ks[x]).row; };
      auto head_of = [&](size_t x) { return pos_of(ks[x]).head; };
      // One touch of the tiles of members [from, to) in one line: each member
      // asked for its own tile's bytes, and the line's misses fall on them in
      // proportion.
      auto share_touch = [&](const AccessOutcome& o, size_t from, size_t to) {
        if (traffic == nullptr || a.write) return;
        const i64 all = o.hit_bytes + o.miss_bytes;
        const double frac = all > 0 ? static_cast<double>(o.miss_bytes) / static_cast<double>(all) : 0.0;
        for (size_t x = from; x < to; ++x) {
          const size_t m = ks[x];
          const double b =
              static_cast<double>(mem_.tile_bytes(a, a.uses_i ? row_of(x) : -1, a.uses_j ? c.members[m].j : -1));
          traffic->requested[m] += b;
          traffic->from_dram[m] += b * frac;
          traffic->dram_share[m] += b * frac;
        }
      };
      size_t x = 0;
      while (x < n) {
        const i64 h = head_of(x);
        const i64 i = a.uses_i ? row_of(x) : -1, j = a.uses_j ? c.members[ks[x]].j : -1;
        const Memory::Line l = mem_.line_of(a, h, i, j);
        count_for(h);
        size_t e = x + 1;
        if (!a.uses_j) {
          while (e < n && row_of(e) == i && head_of(e) == h) ++e;  // the same tile
          const auto copies = static_cast<i64>(e - x);
          if (copies > 1) {
            const AccessOutcome o = mem_.touch(a, l, std::uint64_t{1} << l.bit, copies);
            if (traffic != nullptr && !a.write) {
              const double b = static_cast<double>(o.hit_bytes + o.miss_bytes);
              for (size_t y = x; y < e; ++y) {
                const size_t m = ks[y];
                traffic->requested[m] += b;
                traffic->from_dram[m] += static_cast<double>(o.miss_bytes);
                traffic->dram_share[m] += static_cast<double>(o.miss_bytes) / static_cast<double>(copies);
              }
            }
            x = e;
            continue;
          }
          // A tile one member asks for alone: the next members' tiles of the
          // same line that are also theirs alone join the touch (causal members
          // at consecutive rows).
          std::uint64_t mask = std::uint64_t{1} << l.bit;
          while (e < n) {
            const i64 r = row_of(e);
            const Memory::Line nl = mem_.line_of(a, head_of(e), r, -1);
            if (nl.key != l.key || head_of(e) != h || (mask >> nl.bit & 1U) != 0 ||
                (e + 1 < n && row_of(e + 1) == r && head_of(e + 1) == head_of(e)))
              break;
            mask |= std::uint64_t{1} << nl.bit;
            ++e;
          }
          share_touch(mem_.touch(a, l, mask), x, e);
        } else {
          std::uint64_t mask = std::uint64_t{1} << l.bit;
          while (e < n) {  // other tiles of the same line
            const Memory::Line nl = mem_.line_of(a, head_of(e), a.uses_i ? row_of(e) : -1, c.members[ks[e]].j);
            if (nl.key != l.key || head_of(e) != h || (mask >> nl.bit & 1U) != 0) break;
            mask |= std::uint64_t{1} << nl.bit;
            ++e;
          }
          share_touch(mem_.touch(a, l, mask), x, e);
        }
        x = e;
      }
    }
  }

  // One step of a cohort whose blocks each walk the G query heads of their
  // group in turn (LoopNest::walks_group: fa2_bwd summing dK_j, dV_j on chip).
  // Member m has V_m visits per head (its steps / G) and in step t runs visit
  // t mod V_m of query head cohort head + ⌊t / V_m⌋. K_j, V_j come into the
  // block at its first head's first visit and dK_j, dV_j leave after its last
  // head's last visit; at the other heads' ends and starts the loop nest still
  // asks for them (requests stay per query head), and the block finds them on
  // chip. A block holds its K_j for G heads' worth of visits: the members of
  // a cohort that a wave boundary cut apart run each query head a whole walk
  // apart, and the L2 may have lost the head's Q_i, dO_i, dQaccum_i between.
  void walk_step(const PhaseAccesses& acc, const Cohort& co, i64 step, StepTraffic* traffic) {
    const i64 G = s_.problem().group_size();
    auto pos = [&](size_t k) {
      const i64 v = co.members[k].steps / G;
      return Pos{co.head + step / v, co.members[k].lo + step % v};
    };
    auto per_head = [&](size_t k) { return co.members[k].steps / G; };
    // The pieces the loop nest emits at a head's start (first = true) or end.
    auto boundary = [&](const std::vector<Access>& accesses, bool first) {
      ks_.clear();
      walk_on_chip_.clear();
      for (size_t k = 0; k < co.active; ++k) {
        const i64 v = per_head(k), q = step / v, r = step % v;
        if (r != (first ? 0 : v - 1)) continue;
        ((first ? q == 0 : q == G - 1) ? ks_ : walk_on_chip_).push_back(k);
      }
      if (!ks_.empty()) cols_touch(accesses, co, ks_, pos, first ? traffic : nullptr, true);
      for (size_t k : walk_on_chip_)
        for (const Access& a : accesses) {
          const Pos at = pos(k);
          mem_.set_counting(co.counted && at.head < heads_);
          mem_.on_chip(a, at.head, mem_.tile_bytes(a, a.uses_i ? at.row : -1, a.uses_j ? co.members[k].j : -1));
        }
    };
    boundary(acc.begin, true);
    ks_.clear();
    for (size_t k = 0; k < co.active; ++k) ks_.push_back(k);
    cols_touch(acc.visit, co, ks_, pos, traffic, true);
    boundary(acc.end, false);
  }

  // ---- a CTA per outer iteration (FlashAttention-2, the materialising passes) ----
  // When the model follows fewer heads than the run has, the blocks of the
  // next heads still take the slots the followed ones free, as on the GPU, until
  // the last followed block is done: they compete for the L2 with its tail, and
  // are not counted (Cohort::counted). Each phase is a launch of its own: the
  // blocks of the heads not followed that did not run beside the last followed
  // one still run before the next phase starts, and bring into the L2 as many
  // bytes per block as the blocks walked brought (as between the launches of
  // run_launch_per_outer). Without them the next phase of the first heads would
  // find in the L2 what their own previous phase left there (the backward's
  // dQaccum zeroed by the pre-pass, O_i and dO_i it read, dQaccum the main loop
  // added into), which the whole run has evicted by then.
  //
  // An outer loop over column blocks (the backward passes: one CTA per K_j,
  // V_j) is dispatched by column block, ascending — the heaviest causal
  // blocks first already; its cohort's members walk their row blocks in step
  // (cols_piece). A phase without visits takes one step per CTA.
  //
  // A pass run once per K/V head (zeroing or converting the dK, dV
  // accumulators of a group) has a block per K/V head and column block: K/V
  // head u's blocks are counted for the group's first query head, u·G, whose
  // lines (memory_head) are the K/V head's.
  void run_cta_per_outer(int ph, L2Result& out) {
    const PhaseAccesses& acc = phases_[static_cast<size_t>(ph)];
    const i64 per = s_.phase_outer_count(ph), base = s_.phase_begin(ph);
    const bool rows = s_.outer_over_rows(ph), visits = s_.has_visits(ph);
    // A block per K/V head and column block: a pass once per K/V head, or one whose blocks walk a group.
    const bool walk = s_.loop_nest().walks_group(ph) && s_.problem().group_size() > 1;
    if (walk && (rows || !visits)) throw std::logic_error("a block walks a group's query heads over column blocks only");
    const i64 G = s_.once_per_kv_head(ph) || walk ? std::max<i64>(1, s_.problem().group_size()) : 1;
    i64 total = (heads_ + G - 1) / G * per;  // the followed blocks
    const i64 grid = all_heads_ / G * per;   // every block of the run
    // The CTA slots of the SMs (Launch::slot_stagger): slot s of every SM
    // (sm_count places) opens s × slot_stagger of a mean block's walk after
    // slot 0 and is refilled as its own blocks finish; blocks that slots take
    // in the same step still form one cohort. Without a stagger: one slot of W places.
    const bool staggered = launch_.ctas_per_sm > 1 && launch_.slot_stagger > 0 && launch_.concurrent_ctas() == W_;
    const i64 slots = staggered ? launch_.ctas_per_sm : 1;
    std::vector<i64> free(static_cast<size_t>(slots), W_ / slots), opens(static_cast<size_t>(slots), 0);
    if (staggered) {
      i64 walk_steps = 0;  // of all the phase's blocks of one head (or K/V head)
      for (i64 idx = 0; idx < per; ++idx) walk_steps += std::max<i64>(1, s_.visit_count(base + idx)) * (walk ? G : 1);
      const double mean_walk = static_cast<double>(walk_steps) / static_cast<double>(per);
      for (i64 sl = 1; sl < slots; ++sl)
        opens[static_cast<size_t>(sl)] =
            static_cast<i64>(launch_.slot_stagger * static_cast<double>(sl) * mean_walk);
    }
    i64 next = 0, t = 0;
    const i64 brought_before = mem_.brought_in_bytes();
    std::vector<Cohort> cohorts;
    StepTraffic traffic;
    auto followed_running = [&] {
      return std::any_of(cohorts.begin(), cohorts.end(), [](const Cohort& c) { return c.counted; });
    };
    while (next < total || followed_running()) {
      // Hand out free slots in grid order; blocks of one head dispatched together form a cohort.
      size_t first_new = cohorts.size();
      for (i64 sl = 0; sl < slots; ++sl) {
        while (t >= opens[static_cast<size_t>(sl)] && free[static_cast<size_t>(sl)] > 0 && next < grid) {
          const i64 h = next / per * G, k = next % per;  // the (first) query head the block counts for
          // The first pass decides how many heads to follow: once the budget is
          // spent, at a group boundary and past the minimum, no new head is followed.
          if (ph == 0 && k == 0 && h >= min_heads_ && h % head_unit_ == 0 && heads_ == all_heads_ &&
              mem_.accesses() > opt_.access_budget) {
            heads_ = h;
            total = next;
          }
          if (next >= total && !followed_running()) break;  // no followed block left to compete with
          const i64 idx = launch_.heaviest_first && rows ? per - 1 - k : k;
          const i64 o = base + idx;
          if (cohorts.size() == first_new || cohorts.back().head != h) {
            cohorts.push_back(Cohort{h, t, {}, 0, -1});
            cohorts.back().counted = h < heads_;
          }
          Member mb{o, rows ? idx : 0, std::max<i64>(1, s_.visit_count(o)) * (walk ? G : 1)};
          if (!rows) {
            mb.j = idx;
            mb.lo = visits ? s_.visit_block(o, 0).first : 0;
          }
          mb.slot = sl;
          cohorts.back().members.push_back(mb);
          ++next;
          --free[static_cast<size_t>(sl)];
        }
      }
      for (size_t c = first_new; c < cohorts.size(); ++c) {
        Cohort& co = cohorts[c];
        std::stable_sort(co.members.begin(), co.members.end(),
                         [](const Member& a, const Member& b) { return a.steps > b.steps; });
        co.active = co.members.size();
        co.find_row_step();
        if (trace_ && co.head == 0) co.wave = new_wave(out, ph, 0, t, co.members);
      }
      for (Cohort& co : cohorts) {
        const i64 step = t - co.start;
        mem_.set_counting(co.counted);
        StepTraffic* step_traffic = (trace_ && co.head == 0) ? &traffic : nullptr;
        if (step_traffic) step_traffic->reset(co.active);
        size_t still = co.active;
        while (still > 0 && co.members[still - 1].steps <= step + 1) --still;
        if (rows) {
          // lo = 0: the column block is shared by the cohort
          const i64 j = visits ? s_.visit_block(co.members.front().outer, step).second : -1;
          if (step == 0) piece(acc.begin, co, co.active, j, step_traffic);
          piece(acc.visit, co, co.active, j, step_traffic);
          if (still < co.active) {
            // Members that ran their last visit write their results; they leave at the end of the step.
            Cohort ending = co;
            ending.members.assign(co.members.begin() + static_cast<std::ptrdiff_t>(still),
                                  co.members.begin() + static_cast<std::ptrdiff_t>(co.active));
            ending.find_row_step();
            piece(acc.end, ending, ending.members.size(), j, nullptr);
          }
        } else if (walk) {
          walk_step(acc, co, step, step_traffic);
        } else {
          if (step == 0) cols_piece(acc.begin, co, 0, co.active, step, step_traffic);
          cols_piece(acc.visit, co, 0, co.active, step, step_traffic);
          if (still < co.active) cols_piece(acc.end, co, still, co.active, step, nullptr);
        }
        for (size_t m = still; m < co.active; ++m) ++free[static_cast<size_t>(co.members[m].slot)];
        if (step_traffic && visits) record_step(out, co, step, traffic);
        co.active = still;
      }
      cohorts.erase(std::remove_if(cohorts.begin(), cohorts.end(), [](const Cohort& c) { return c.active == 0; }),
                    cohorts.end());
      ++t;
    }
    mem_.set_counting(true);
    if (ph + 1 < s_.phases() && next < grid && next > 0) {
      const double per_block = static_cast<double>(mem_.brought_in_bytes() - brought_before) /
                               static_cast<double>(next);
      mem_.bring_in_other(static_cast<i64>(per_block * static_cast<double>(grid - next)));
    }
  }

  // ---- a launch per outer iteration, a CTA per visit (FlashAttention-1) ----------
  // When the model follows fewer heads than the run has, the launch's blocks
  // of the other heads come after the followed ones: those sharing the last
  // followed wave run in it, uncounted; the rest are the bytes they bring into
  // the L2 (as many per block as the followed blocks brought) before the next
  // launch starts.
  void run_launch_per_outer(int ph, i64 o, L2Result& out) {
    const PhaseAccesses& acc = phases_[static_cast<size_t>(ph)];
    const i64 visits = s_.visit_count(o);
    const i64 j = s_.visit_block(o, 0).second;  // the launch's column block (outer over columns)
    const i64 total = heads_ * visits;           // the followed blocks
    const i64 grid = all_heads_ * visits;        // every block of the launch
    const i64 brought_before = mem_.brought_in_bytes();
    StepTraffic traffic;
    i64 next = 0, t = 0;
    while (next < total) {
      const i64 end = std::min(grid, next + W_);
      while (next < end) {
        const i64 h = next / visits, k0 = next % visits;
        const i64 k1 = std::min(visits, k0 + (end - next));
        mem_.set_counting(h < heads_);
        const i64 lo = s_.visit_block(o, 0).first;  // a launch's visits are row blocks lo, lo + 1, ...
        // The wave's CTAs run row blocks lo + k0 ... lo + k1 − 1: the range is
        // all the accesses need; the members themselves only for the trace.
        Cohort co{h, t, {}, static_cast<size_t>(k1 - k0), -1};
        co.row_step = 1;
        co.first_row = lo + k0;
        StepTraffic* step_traffic = nullptr;
        if (trace_ && h == 0) {
          co.members.reserve(co.active);
          for (i64 k = k0; k < k1; ++k) co.members.push_back(Member{k, lo + k, 1});
          co.wave = new_wave(out, ph, o, t, co.members);
          traffic.reset(co.active);
          step_traffic = &traffic;
        }
        if (k0 == 0) piece(acc.begin, co, co.active, j, step_traffic, false);  // the head's first CTA of this launch
        piece(acc.visit, co, co.active, j, step_traffic);
        if (k1 == visits) piece(acc.end, co, co.active, j, nullptr, false);
        if (step_traffic) {
          for (size_t m = 0; m < co.members.size(); ++m) {
            const Member& mb = co.members[m];
            set_visit(out, o, mb.outer, co.wave, traffic, m);
          }
        }
        next += k1 - k0;
      }
      ++t;
    }
    mem_.set_counting(true);
    if (next < grid && next > 0) {
      const double per_block = static_cast<double>(mem_.brought_in_bytes() - brought_before) /
                               static_cast<double>(next);
      mem_.bring_in_other(static_cast<i64>(per_block * static_cast<double>(grid - next)));
    }
  }

  // ---- the trace of the first head --------------------------------------------
  void begin_trace(L2Result& out) {
    const i64 n = s_.outer_count();
    out.visit_index.assign(static_cast<size_t>(n) + 1, 0);
    for (i64 o = 0; o < n; ++o) out.visit_index[static_cast<size_t>(o) + 1] = out.visit_index[static_cast<size_t>(o)] + s_.visit_count(o);
    out.visits.assign(static_cast<size_t>(out.visit_index.back()), VisitL2{});
  }
  std::int32_t new_wave(L2Result& out, int ph, i64 launch, i64 t, const std::vector<Member>& members) {
    WaveGroup w;
    w.phase = ph;
    w.launch = launch;
    w.start_step = t;
    for (const Member& m : members) w.ctas.push_back(m.outer);
    std::sort(w.ctas.begin(), w.ctas.end());
    out.waves.push_back(std::move(w));
    return static_cast<std::int32_t>(out.waves.size() - 1);
  }
  void set_visit(L2Result& out, i64 o, i64 k, std::int32_t wave, const StepTraffic& traffic, size_t m) {
    const i64 at = out.visit_index[static_cast<size_t>(o)] + k;
    VisitL2& v = out.visits[static_cast<size_t>(at)];
    v.wave = wave;
    const double req = traffic.requested[m];
    v.dram_fraction = req > 0 ? static_cast<float>(traffic.from_dram[m] / req) : 0.0f;
    v.dram_share = req > 0 ? static_cast<float>(traffic.dram_share[m] / req) : 0.0f;
  }
  void record_step(L2Result& out, const Cohort& co, i64 step, const StepTraffic& traffic) {
    // The first head's visits (a block walking a group runs the others after them).
    for (size_t m = 0; m < co.active; ++m)
      if (step < s_.visit_count(co.members[m].outer)) set_visit(out, co.members[m].outer, step, co.wave, traffic, m);
  }

  const Schedule& s_;
  Launch launch_;
  L2Options opt_;
  i64 heads_;            // followed
  const i64 all_heads_;  // of the run
  Memory mem_;
  i64 W_ = 1;
  std::vector<size_t> ks_, walk_on_chip_;  // members of a step's touches (reused)
  std::vector<PhaseAccesses> phases_;
  std::vector<Access> prologue_, epilogue_;
};

}  // namespace

L2Result simulate_l2(const Schedule& s, const Launch& launch, i64 l2_bytes, const L2Options& options) {
  L2Result r;
  r.launch = launch;
  r.l2_bytes = l2_bytes;
  if (l2_bytes <= 0) {
    r.why_not = "the hardware model has no L2 size: DRAM bytes are taken equal to the global-memory requests "
                "(the two-level model)";
    return r;
  }
  const i64 heads = s.problem().head_count();
  const i64 W = std::max<i64>(1, launch.concurrent_ctas());
  const bool per_outer = s.info().grid == GridShape::cta_per_outer_iteration;
  // Every head runs the same schedule; when following all of them would take too
  // long, the model follows the first few — at least two, three waves of the
  // grid (so that the hand-over between waves and heads is in what is followed)
  // and enough that each pass moves several times the L2 (so nothing is reused
  // across passes that the whole run would not reuse) — and scales (Memory::finish).
  // The blocks of the heads after the followed ones still run beside them, uncounted. With
  // a CTA per outer iteration the first pass decides when the budget is spent —
  // unless it has no visits (the backward's pre-pass, whose accesses say
  // nothing of the main loop's); then, as with a launch per outer iteration
  // (each launch holds every head), the prefix is chosen up front: each launch
  // must still move several times the L2.
  const Counters one = s.closed_form();
  const i64 passes = per_outer ? std::max(1, s.phases()) : std::max<i64>(1, s.outer_count());
  const i64 pass_bytes = std::max<i64>(1, one.level(Level::HBM).bytes() / passes);
  // CTAs of one head in the largest pass: T_r for an outer loop over rows, T_c over columns.
  i64 ctas_per_pass = 1;
  for (int ph = 0; ph < s.phases(); ++ph) ctas_per_pass = std::max(ctas_per_pass, s.phase_outer_count(ph));
  // A block that walks a group's G query heads (LoopNest::walks_group) is a
  // G-th of a block per query head: G times the heads make the same waves.
  i64 walk = 1;
  for (int ph = 0; ph < s.phases(); ++ph)
    if (s.loop_nest().walks_group(ph)) walk = std::max<i64>(1, s.problem().group_size());
  const i64 ctas_per_head = per_outer ? std::max<i64>(1, ctas_per_pass / walk) : std::max<i64>(1, s.grid().T_r);
  const i64 for_waves = (3 * W + ctas_per_head - 1) / ctas_per_head;
  const i64 for_bytes = (4 * l2_bytes + pass_bytes - 1) / pass_bytes;
  // Two at least: the first head starts with an empty L2, every other beside
  // the tail of the one before; the second is what the others are scaled from.
  const i64 fewest = std::max({i64{2}, for_waves, for_bytes});
  // Grouped heads (G = H / H_kv query heads per K/V head) share the lines of
  // K, V, dK, dV: the first head of a group brings K_j, V_j into the L2, the
  // other G − 1 may find them there, so a head's traffic depends on its place
  // in its group. G + 1 heads would put a group boundary in what is followed,
  // but the heads after the first would be one group's first head too many
  // for the mean they are scaled by. So the model follows whole groups, two
  // at least: the first, which starts with an empty L2 and is counted apart,
  // and the groups after it, from which the others are scaled. When the
  // access limit does not allow two groups, heads are followed as without
  // groups. G = 1: the rule above, unchanged.
  const i64 G = std::max<i64>(1, s.problem().group_size());
  Runner run(s, launch, l2_bytes, options, heads);
  auto over_limit = [&](i64 followed_heads) {
    return s.outer_count() <= options.access_limit &&
           checked_mul(followed_heads, run.least_accesses_per_head(), "L2 model") > options.access_limit;
  };
  i64 unit = G;
  i64 min_heads = std::min(heads, (std::max(fewest, 2 * G) + G - 1) / G * G);
  if (G > 1 && over_limit(min_heads)) {
    unit = 1;
    min_heads = std::min(heads, fewest);
  }
  i64 start_heads = heads;
  if (!per_outer || (s.phases() > 0 && !s.has_visits(0))) {
    const i64 head_accesses = std::max<i64>(1, one.events);  // an upper bound on the accesses of one head
    start_heads = std::min(heads, std::max(min_heads, options.access_budget / head_accesses / unit * unit));
  }
  run.follow_first(start_heads);
  run.min_heads_ = min_heads;
  run.head_unit_ = unit;
  auto not_modelled = [&] {
    L2Result none;
    none.launch = launch;
    none.l2_bytes = l2_bytes;
    none.why_not = "the L2 model stops after " + group_digits(options.access_limit) +
                   " cache accesses and this problem needs more (" + std::to_string(min_heads) +
                   " head(s) at least): DRAM bytes are taken equal to the requests";
    return none;
  };
  // Known to exceed the limit before walking: say so at once.
  if (over_limit(min_heads)) return not_modelled();
  run.trace_ = options.trace_first_head &&
               s.closed_form().events <= L2Result::kMaxTracedVisits * 4;  // events ≥ visits
  try {
    run.run(r);
  } catch (const Memory::AccessLimit&) {
    return not_modelled();
  } catch (const NotModelled& e) {
    L2Result none;
    none.launch = launch;
    none.l2_bytes = l2_bytes;
    none.why_not = e.why + ": DRAM bytes are taken equal to the requests";
    return none;
  }
  const i64 followed = run.followed();
  r.modelled = true;
  r.heads_followed = followed;
  r.all_heads = heads;
  const i64 waves = (checked_mul(followed, ctas_per_pass, "CTAs") + W - 1) / W;
  r.method = "simulated: " + std::to_string(W) + " resident CTAs (" + launch.source + ")";
  if (per_outer) r.method += ", " + std::to_string(waves) + " wave(s) of the grid";
  if (per_outer && launch.ctas_per_sm > 1 && launch.slot_stagger > 0)
    r.method += "; each SM's CTA slots walk apart, slot s started " + shortest(launch.slot_stagger) +
                "·s of a block's walk after slot 0";
  if (followed < heads && run.first_heads() > 1)
    r.method += "; followed the first " + std::to_string(followed) + " of " + std::to_string(heads) +
                " heads, whole groups of " + std::to_string(G) +
                " sharing K, V (the next ones' blocks beside them) and scaled: the first group as walked, the "
                "others as the groups after it (every group runs the same schedule)";
  else if (followed < heads)
    r.method += "; followed the first " + std::to_string(followed) + " of " + std::to_string(heads) +
                " heads (the next ones' blocks beside them) and scaled: the first head as walked, the others as "
                "the heads after it (every head runs the same schedule)";
  return r;
}

}  // namespace flashlab::sim
