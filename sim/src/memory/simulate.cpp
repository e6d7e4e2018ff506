#include "flashlab/sim/memory/simulate.hpp"

#include "core/enum_names.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::sim {

namespace {

bool all_ok(const std::vector<Finding>& f) {
  for (const Finding& x : f)
    if (x.severity == Finding::Severity::error) return false;
  return true;
}

Finding error(std::string m) { return {Finding::Severity::error, std::move(m)}; }
Finding note(std::string m) { return {Finding::Severity::note, std::move(m)}; }

// The tile rule as a note names it.
constexpr detail::EnumName<TileRule> kRuleNotes[] = {{TileRule::paper, "the paper's rule"},
                                                     {TileRule::paper_transposed, "the transposed paper rule"},
                                                     {TileRule::paper_backward, "the backward rule (B_c = ⌈M/8d⌉)"}};
static_assert(detail::lists_through(kRuleNotes, TileRule::paper_backward));
std::string_view rule_name(TileRule r) { return detail::name_of(kRuleNotes, r, "the rule"); }

std::string tiles_str(TileShape t) {
  return "B_r=" + std::to_string(t.Br) + ", B_c=" + std::to_string(t.Bc);
}

// The requests of `s` through the L2 of `hw`, as `r`'s launch runs them.
void model_l2(SimResult& r, const Schedule& s, const HardwareModel& hw, const SimOptions& opt) {
  if (hw.l2_bytes <= 0) {
    r.l2.why_not = "the hardware model has no L2 size: DRAM bytes are taken equal to the requests "
                   "(the paper's two-level model)";
    r.findings.push_back(note(r.l2.why_not));
    return;
  }
  const Launch launch = opt.launch ? *opt.launch : model_launch(hw, r.sram_peak_bytes);
  try {
    L2Options l2_options = opt.l2_options;
    l2_options.l2_partitions = std::max<i64>(1, hw.l2_partitions);
    r.l2 = simulate_l2(s, launch, shared_l2_bytes(hw), l2_options);
    r.l2.l2_partitions = std::max<i64>(1, hw.l2_partitions);
    if (!r.l2.modelled && !r.l2.why_not.empty()) r.findings.push_back(note(r.l2.why_not));
  } catch (const OverflowError& e) {
    r.l2 = L2Result{};
    r.l2.why_not = std::string("the L2 model cannot follow this problem (") + e.what() +
                   "): DRAM bytes are taken equal to the requests";
    r.findings.push_back(note(r.l2.why_not));
  }
}

}  // namespace

bool TileChoice::ok() const { return all_ok(findings); }
bool SimResult::ok() const { return all_ok(findings); }

std::vector<std::string> SimResult::errors() const {
  std::vector<std::string> r;
  for (const Finding& f : findings)
    if (f.severity == Finding::Severity::error) r.push_back(f.message);
  return r;
}

std::vector<std::string> SimResult::messages() const {
  std::vector<std::string> r = errors();
  for (const Finding& f : findings)
    if (f.severity == Finding::Severity::note) r.push_back(f.message);
  return r;
}

i64 sram_peak_probe(const Schedule& s, i64 capacity, std::optional<SramOverflow>* overflow) {
  // The visits are independent (each frees what it allocates) and the first
  // outer iteration of every phase holds the largest tiles (row block 0 or
  // column block 0, whichever the phase's outer loop runs over), so its first
  // and last visit bound the peak; later iterations are equal or partial.
  SramTracker t(capacity);
  s.emit_prologue(t);
  for (int ph = 0; ph < s.phases(); ++ph) {
    if (s.phase_outer_count(ph) == 0) continue;
    const i64 o = s.phase_begin(ph);
    s.emit_outer_begin(o, t);
    const i64 visits = s.visit_count(o);
    if (visits > 0) s.emit_visit(o, 0, t);
    if (visits > 1) s.emit_visit(o, visits - 1, t);
    s.emit_outer_end(o, t);
  }
  s.emit_epilogue(t);
  if (overflow != nullptr) *overflow = t.first_overflow();
  return t.peak_bytes();
}

TileChoice choose_tiles(Algorithm a, const AttentionProblem& p, i64 sram_bytes,
                        std::optional<TileShape> explicit_tiles) {
  const AlgorithmInfo& info = algorithm_info(a);
  auto peak_of = [&](TileShape t) { return sram_peak_probe(Schedule(a, p, t)); };
  TileChoice c;
  if (explicit_tiles) {
    c.tiles = *explicit_tiles;
    c.rule = "explicit";
    if (c.tiles.Br < 1 || c.tiles.Bc < 1) {
      c.findings.push_back(error("tile sizes must be at least 1 (got " + tiles_str(c.tiles) + ")"));
      return c;
    }
    const i64 peak = peak_of(c.tiles);
    if (peak > sram_bytes)
      c.findings.push_back(note("these tiles need " + group_digits(peak) + " B of SRAM for " +
                                std::string(info.title) + "'s working set, more than M = " +
                                group_digits(sram_bytes) + " B"));
    return c;
  }
  c.tiles = tile_rule_shape(info.tile_rule, sram_bytes, p);
  c.rule = std::string(describe(info.tile_rule));
  const TileShape rule = c.tiles;
  const i64 rule_peak = peak_of(rule);
  if (rule_peak <= sram_bytes) return c;
  // The rule is asymptotic; shrink the block capped at d (B_r for the paper's
  // rule and the backward's, B_c for its transpose), then the other, until the
  // working set fits.
  const bool transposed = info.tile_rule == TileRule::paper_transposed;
  i64& first = transposed ? c.tiles.Bc : c.tiles.Br;
  i64& second = transposed ? c.tiles.Br : c.tiles.Bc;
  while (peak_of(c.tiles) > sram_bytes && (first > 1 || second > 1)) {
    if (first > 1) first = (first + 1) / 2;
    else second = (second + 1) / 2;
  }
  const i64 peak = peak_of(c.tiles);
  if (peak > sram_bytes) {
    c.findings.push_back(error("head dim d=" + std::to_string(p.head_dim) +
                               " does not fit: even B_r = B_c = 1 needs " + group_digits(peak) +
                               " B of SRAM, more than M = " + group_digits(sram_bytes) + " B"));
    return c;
  }
  c.rule += ", shrunk to fit";
  c.findings.push_back(note(std::string(rule_name(info.tile_rule)) + " gives " +
                            tiles_str(rule) + ", whose working set (" + group_digits(rule_peak) +
                            " B) exceeds M = " + group_digits(sram_bytes) + " B; shrunk to " + tiles_str(c.tiles)));
  return c;
}

bool Plan::ok() const { return all_ok(findings); }

Plan make_plan(Algorithm a, const AttentionProblem& p, const HardwareModel& hw, const SimOptions& opt) {
  Plan plan;
  plan.algorithm = a;
  plan.problem = p;
  plan.sram_capacity_bytes = opt.sram_bytes > 0 ? opt.sram_bytes : hw.sram_bytes_per_sm;
  for (const ProblemError& e : validate(p)) plan.findings.push_back(error(e.message));
  if (plan.sram_capacity_bytes < 1) plan.findings.push_back(error("SRAM size M must be at least 1 byte"));
  if (!plan.ok()) return plan;
  plan.tiles = choose_tiles(a, p, plan.sram_capacity_bytes, opt.tiles);
  for (const Finding& f : plan.tiles.findings)
    if (f.severity == Finding::Severity::error || plan.tiles.rule != "explicit") plan.findings.push_back(f);
  if (!plan.ok()) return plan;
  const TileGrid g(p, plan.tiles.tiles);
  plan.T_r = g.T_r;
  plan.T_c = g.T_c;
  try {
    plan.total_blocks = checked_mul(g.T_r, g.T_c, "T_r·T_c");
  } catch (const OverflowError& e) {
    plan.findings.push_back(error(std::string("problem too large: ") + e.what()));
    return plan;
  }
  plan.visited_blocks = g.visited_blocks();
  plan.partially_masked_blocks = g.partially_masked_blocks();
  plan.blocks_with_mask = g.blocks_with_mask();
  return plan;
}

SimResult simulate(Algorithm a, const AttentionProblem& p, const HardwareModel& hw, const SimOptions& opt) {
  SimResult r = simulate(a, make_plan(a, p, hw, opt), hw, opt);
  // A kernel's tiles that exceed M in the algorithm's accounting, which places
  // in SRAM what the kernel holds in registers, are counted against the SM's
  // SRAM and registers, with a note saying so.
  const i64 on_chip = on_chip_bytes_per_sm(hw);
  if (r.ok() || !opt.kernel_tiles || !opt.tiles || opt.sram_bytes > 0 || r.sram_peak_bytes <= r.sram_capacity_bytes ||
      r.sram_peak_bytes > on_chip)
    return r;
  SimOptions with_registers = opt;
  with_registers.sram_bytes = on_chip;
  SimResult k = simulate(a, make_plan(a, p, hw, with_registers), hw, with_registers);
  if (!k.ok()) return r;
  k.registers_on_chip = true;
  k.findings.push_back(note("the kernel's tiles (" + group_digits(k.sram_peak_bytes) + " B on chip) are counted against "
                            "the SM's SRAM and registers (" + group_digits(on_chip) + " B, M = " +
                            group_digits(hw.sram_bytes_per_sm) + " B): the kernel keeps part of them in registers"));
  return k;
}

SimResult simulate(Algorithm a, const Plan& plan, const HardwareModel& hw, const SimOptions& opt) {
  // A plan's tiles follow its algorithm's rule; another algorithm gets its own.
  if (plan.algorithm != a && !opt.tiles && plan.ok()) return simulate(a, make_plan(a, plan.problem, hw, opt), hw, opt);
  SimResult r;
  r.algorithm = a;
  r.problem = plan.problem;
  r.hardware = hw.name;
  r.sram_capacity_bytes = plan.sram_capacity_bytes;
  r.findings = plan.findings;
  if (!plan.ok()) return r;
  r.tiles = plan.tiles.tiles;
  r.tile_rule = plan.tiles.rule;
  const AttentionProblem& p = plan.problem;

  const Schedule s(a, p, r.tiles, opt.storage);
  const TileGrid& g = s.grid();
  r.T_r = plan.T_r;
  r.T_c = plan.T_c;
  r.total_blocks = plan.total_blocks;
  const bool skips = algorithm_info(a).skips_masked_blocks;
  r.visited_blocks = skips ? plan.visited_blocks : plan.total_blocks;
  r.masked_blocks = skips ? plan.partially_masked_blocks : plan.blocks_with_mask;
  try {
    const Counters cf = s.closed_form();
    r.events_per_head = cf.events;
    if (cf.events <= opt.stream_event_limit) {
      CounterSink counter;
      SramTracker sram(r.sram_capacity_bytes);
      struct Both : EventSink {
        EventSink *a, *b;
        void on_event(const TileEvent& e) override { a->on_event(e); b->on_event(e); }
      } both;
      both.a = &counter;
      both.b = &sram;
      s.emit(both);
      r.per_head = counter.counters;
      r.sram_peak_bytes = sram.peak_bytes();
      r.method = "event stream";
    } else {
      r.per_head = cf;
      r.sram_peak_bytes = sram_peak_probe(s);
      r.method = "closed form";
    }
    // B·H query heads; the passes run once per K/V head (the group's dK, dV accumulators) B·H_kv times.
    r.total = s.over_heads(r.per_head, s.cost_of_kv_head_outers(0, s.outer_count()));
  } catch (const OverflowError& e) {
    r.findings.push_back(error(std::string("problem too large: ") + e.what()));
    return r;
  }
  if (r.sram_peak_bytes > r.sram_capacity_bytes) {
    std::optional<SramOverflow> over;
    sram_peak_probe(s, r.sram_capacity_bytes, &over);
    r.findings.push_back(error("tiles " + tiles_str(r.tiles) + " do not fit in SRAM: " +
                               (over ? over->describe() : group_digits(r.sram_peak_bytes) + " B > M")));
  }
  if (p.causal && r.masked_blocks > 0)
    r.findings.push_back(note(std::to_string(r.masked_blocks) + " block(s) straddle the diagonal and are computed "
                              "in full, then masked"));
  if (g.n_q % g.Br != 0 || g.n_kv % g.Bc != 0)
    r.findings.push_back(note("the last row or column block is partial (N is not a multiple of the tile)"));
  // Only an algorithm that reads O back (it accumulates there) is affected.
  if (r.ok() && opt.storage.o_accumulator && *opt.storage.o_accumulator != p.dtype &&
      r.total.at(Level::HBM, Tensor::O).read_bytes > 0)
    r.findings.push_back(note("O accumulates in " + std::string(to_string(*opt.storage.o_accumulator)) +
                              " in global memory between outer iterations, as the kernel keeps it"));
  if (r.ok() && opt.storage.dq_accumulator && r.total.at(Level::HBM, Tensor::dQaccum).bytes() > 0)
    r.findings.push_back(note("dQ accumulates in " + std::string(to_string(*opt.storage.dq_accumulator)) +
                              " in global memory (dQaccum), which a pass of its own converts to dQ in " +
                              std::string(to_string(p.dtype)) + ", as the kernel keeps it"));
  if (r.ok() && opt.storage.dkv_accumulator && r.total.at(Level::HBM, Tensor::dKaccum).bytes() > 0)
    r.findings.push_back(note("the " + std::to_string(p.group_size()) + " query heads of a K/V head run in blocks of "
                              "their own: each adds its dK_j, dV_j into dKaccum, dVaccum (" +
                              std::string(to_string(*opt.storage.dkv_accumulator)) +
                              ", B·H_kv heads) in global memory, zeroed before and converted to dK, dV in " +
                              std::string(to_string(p.dtype)) + " after, as the kernel keeps them"));
  if (opt.l2 && r.ok()) model_l2(r, s, hw, opt);
  return r;
}

i64 SimResult::dram_read_bytes() const {
  if (!l2.modelled) return total.level(Level::HBM).read_bytes;
  return l2.total().dram_read_bytes;
}

i64 SimResult::dram_write_bytes() const {
  if (!l2.modelled) return total.level(Level::HBM).write_bytes;
  const TensorTraffic t = l2.total();
  return t.dram_write_bytes + t.dirty_at_end_bytes;
}

}  // namespace flashlab::sim
