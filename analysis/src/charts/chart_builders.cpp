// Model charts: roofline, HBM traffic against N / M / d, arithmetic intensity.
#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/roofline_ceilings.hpp"
#include "text/missing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

// An algorithm in a legend: its title without the paper it names
// ("FlashAttention-2 (Dao 2023, Algorithm 1)" -> "FlashAttention-2"), which the
// chart's context and the docs give.
std::string legend_name(sim::Algorithm a) {
  const std::string_view t = sim::algorithm_info(a).title;
  return std::string(t.substr(0, t.find(" (")));
}

}  // namespace

namespace {

// Model points that land on one spot (FA1 and FA2 at one head, short N)
// hide each other's marker: the first names them all ("fa1 = fa2 518
// FLOP/B"), the others keep no label of their own.
void merge_coinciding_labels(std::vector<Series>& series) {
  const auto same_spot = [](const Series& a, const Series& b) {
    return a.x.size() == 1 && b.x.size() == 1 && a.x[0] > 0 && b.x[0] > 0 && a.y[0] > 0 && b.y[0] > 0 &&
           std::fabs(std::log10(a.x[0] / b.x[0])) < 0.01 && std::fabs(std::log10(a.y[0] / b.y[0])) < 0.01;
  };
  for (size_t i = 0; i < series.size(); ++i) {
    if (series[i].point_labels.size() != 1 || series[i].point_labels[0].empty()) continue;
    std::string& label = series[i].point_labels[0];
    const size_t name_end = label.find(' ');
    std::string names = label.substr(0, name_end);
    for (size_t j = i + 1; j < series.size(); ++j)
      if (series[j].point_labels.size() == 1 && !series[j].point_labels[0].empty() && same_spot(series[i], series[j])) {
        names += " = " + series[j].point_labels[0].substr(0, series[j].point_labels[0].find(' '));
        series[j].point_labels[0].clear();
      }
    if (name_end != std::string::npos) label = names + label.substr(name_end);
  }
}


MarkerShape marker_shape(sim::Marker m) {
  switch (m) {
    case sim::Marker::circle: return MarkerShape::circle;
    case sim::Marker::square: return MarkerShape::square;
    case sim::Marker::diamond: return MarkerShape::diamond;
    case sim::Marker::triangle: return MarkerShape::triangle;
  }
  return MarkerShape::circle;
}

MarkerShape algorithm_marker(sim::Algorithm a) { return marker_shape(sim::algorithm_info(a).marker); }

// How an algorithm is drawn: the colour of the rung that implements it (the
// implementations table), the marker of its record, open for a backward pass,
// which shares its forward's colour and marker.
void draw_as(Series& s, sim::Algorithm a) {
  s.color = algorithm_colour(a);
  s.marker = algorithm_marker(a);
  s.open_marker = sim::algorithm_info(a).pass == sim::Pass::bwd;
}

sim::i64 sram_of(const ChartContext& ctx) {
  return ctx.options.sram_bytes > 0 ? ctx.options.sram_bytes : ctx.hw.sram_bytes_per_sm;
}

std::string subtitle_of(const ChartContext& ctx) {
  return sim::describe(ctx.problem) + " · " + (ctx.hw.display_name.empty() ? ctx.hw.name : ctx.hw.display_name) +
         " · M = " + sim::bytes_iec(static_cast<double>(sram_of(ctx))) +
         (ctx.options.tiles ? " · B_r×B_c = " + std::to_string(ctx.options.tiles->Br) + "×" +
                                  std::to_string(ctx.options.tiles->Bc)
                            : " · tiles by the paper's rule");
}

sim::ComputeUnit unit_of(const sim::AttentionProblem& p) { return sim::HardwareModel::default_unit(p.dtype); }

std::string dtype_unit_label(sim::DType d, sim::ComputeUnit u) {
  std::string s(sim::to_string(d));
  if (d == sim::DType::fp32 && u == sim::ComputeUnit::tensor_core) s = "tf32";
  return s + " " + std::string(sim::to_string(u));
}

std::string flops_label(double f) { return format_tick(f / 1e12, TickFormat::plain) + " TFLOP/s"; }

// The first error of each algorithm over a sweep, once, as a footnote.
void note_errors(const std::vector<SweepRow>& rows, SweepAxis axis, std::vector<std::string>& notes) {
  std::map<sim::Algorithm, std::pair<int, std::string>> errs;
  for (const SweepRow& r : rows)
    if (!r.result.ok()) {
      auto& e = errs[r.result.algorithm];
      if (e.first++ == 0)
        e.second = std::string(to_string(axis)) + " = " + sim::group_digits(r.value) + ": " +
                   (r.result.errors().empty() ? "not simulated" : r.result.errors().front());
    }
  for (const auto& [a, e] : errs)
    notes.push_back(std::string(sim::to_string(a)) + ": " + std::to_string(e.first) + " point(s) left out (" + e.second + ")");
}

}  // namespace

// ---- roofline ---------------------------------------------------------------------

HierarchicalCeilings ceilings_of(const ChartContext& ctx) {
  return ctx.profile ? hierarchical_ceilings(*ctx.profile) : hierarchical_ceilings(ctx.hw);
}

ChartSpec roofline_chart(const ChartContext& ctx, const BenchResults* measured) {
  const sim::HardwareModel& hw = ctx.hw;
  const sim::ComputeUnit unit = unit_of(ctx.problem);
  const double bw = hw.hbm_bandwidth;
  const double peak = hw.peak(ctx.problem.dtype, unit);
  ChartSpec c;
  c.id = "roofline";
  c.title = "Roofline — " + (hw.display_name.empty() ? hw.name : hw.display_name);
  c.subtitle = subtitle_of(ctx);
  c.x = {"arithmetic intensity (FLOP/byte of DRAM traffic)", Scale::log10, TickFormat::plain, {}, {}, false, "FLOP/byte"};
  c.y = {"attainable FLOP/s", Scale::log10, TickFormat::si, {}, {}, false, "FLOP/s"};
  if (bw <= 0 || peak <= 0) {
    c.notes.push_back("this hardware model has no HBM bandwidth or no " + dtype_unit_label(ctx.problem.dtype, unit) +
                      " peak: no roofline to draw");
    return c;
  }

  // Ceilings, one per distinct peak; the problem's dtype/unit drawn solid.
  std::map<double, std::vector<std::string>> ceilings;
  for (int d = 0; d < sim::kDTypeCount; ++d)
    for (int u = 0; u < sim::kUnitCount; ++u) {
      const double p = hw.peak_flops[static_cast<size_t>(d)][static_cast<size_t>(u)];
      if (p > 0) ceilings[p].push_back(dtype_unit_label(static_cast<sim::DType>(d), static_cast<sim::ComputeUnit>(u)));
    }
  double top = 0;
  for (const auto& [p, names] : ceilings) {
    // "fp16 tensor" + "bf16 tensor" -> "fp16/bf16 tensor".
    std::string label;
    const std::string unit_of_first = names.front().substr(names.front().find(' '));
    const bool same_unit = std::all_of(names.begin(), names.end(), [&](const std::string& n) {
      return n.size() >= unit_of_first.size() && n.compare(n.size() - unit_of_first.size(), unit_of_first.size(), unit_of_first) == 0;
    });
    for (const std::string& n : names)
      label += (label.empty() ? "" : same_unit ? "/" : ", ") + (same_unit ? n.substr(0, n.find(' ')) : n);
    if (same_unit) label += unit_of_first;
    RefLine l;
    l.value = p;
    l.from_x = ridge_point(p, bw);
    l.label = label + ": " + format_tick(p / 1e12, TickFormat::plain) + " TFLOP/s";
    const bool primary = p == peak;
    l.color = primary ? Color{200, 60, 40, 255} : Color{130, 130, 130, 255};
    l.dash = primary ? Dash::solid : Dash::dashed;
    l.width = primary ? 2.5 : 1.2;
    c.ref_lines.push_back(l);
    top = std::max(top, p);
  }

  // A measured profile's lower tensor figures of the problem's dtype (mma.sync,
  // the Ampere path): drawn dotted, beside the roof, never a roof themselves.
  if (ctx.profile)
    for (const ComputeCeiling& k : hierarchical_ceilings(*ctx.profile).compute) {
      if (!k.secondary || k.dtype != ctx.problem.dtype) continue;
      RefLine l;
      l.value = k.peak;
      l.from_x = ridge_point(k.peak, bw);
      l.label = k.label;
      l.color = Color{170, 150, 110, 255};
      l.dash = Dash::dotted;
      l.width = 1.2;
      c.ref_lines.insert(c.ref_lines.begin(), l);  // named before the other roofs take the spots
    }

  const double ridge = ridge_point(peak, bw);
  double ai_lo = ridge, ai_hi = ridge;
  std::string not_modelled;  // the first model point whose L2 is not modelled, and why
  for (sim::Algorithm a : ctx.algorithms) {
    const sim::SimResult r = sim::simulate(a, ctx.problem, hw, ctx.options);
    if (!r.ok()) {
      c.notes.push_back(std::string(sim::to_string(a)) + ": " + r.errors().front());
      continue;
    }
    const RooflineEstimate e = roofline(r, hw, unit);
    if (!r.l2.modelled && not_modelled.empty()) not_modelled = std::string(sim::to_string(a)) + ": " + r.l2.why_not;
    Series s;
    s.name = legend_name(a) + " — model";
    s.x = {e.ai};
    s.y = {e.attainable};
    s.point_labels = {std::string(sim::to_string(a)) + " " + format_tick(e.ai, TickFormat::plain) + " FLOP/B"};
    s.style = SeriesStyle::points;
    draw_as(s, a);
    c.series.push_back(std::move(s));
    ai_lo = std::min(ai_lo, e.ai);
    ai_hi = std::max(ai_hi, e.ai);
  }
  merge_coinciding_labels(c.series);

  if (measured) {
    // The HBM slice of the hierarchical roofline: the same placement, the same
    // rule for a point above its roof (over the HBM slope or the compute peak).
    const Placement placed = place_runs(*measured, hw, ceilings_of(ctx));
    std::map<std::string, Series> by_kernel;
    int above = 0, drawn = 0, counted = 0;
    std::string first_above;
    for (const PlacedRun& run : placed.runs) {
      const LevelPoint* hbm = run.level(sim::Level::HBM);
      const double achieved = run.rates.tflops_exact * 1e12;  // the bench table's exact TFLOP/s
      if (!hbm || !(achieved > 0)) continue;
      ++drawn;
      counted += hbm->measured ? 1 : 0;
      Series& s = by_kernel[run.kernel];
      if (s.name.empty()) {
        s.name = run.kernel + " — measured";
        s.style = SeriesStyle::points;
        s.marker = MarkerShape::cross;  // measured; the model's points keep their algorithm's marker
        s.color = implementation_colour(run.kernel);  // its model's colour where the rung gives the model its own
      }
      s.x.push_back(hbm->ai);
      s.y.push_back(achieved);
      ai_lo = std::min(ai_lo, hbm->ai);
      ai_hi = std::max(ai_hi, hbm->ai);
      if (run.above_flat_roof() && above++ == 0)
        first_above = run.kernel + " at " + sim::describe(run.problem) + " (" + flops_label(achieved) + " > " +
                      flops_label(hbm->roof) + ")";
    }
    // A rung measured at one point is named at it (the ladder on one problem);
    // a grid of points is named by the legend alone.
    for (auto& [k, s] : by_kernel) {
      if (s.x.size() == 1) s.point_labels = {k + " " + flops_label(s.y.front())};
      c.series.push_back(std::move(s));
    }
    if (above > 0)
      c.notes.push_back(std::to_string(above) + " measured point(s) above the roof, e.g. " + first_above +
                        ": a FLOP count that differs, DRAM bytes the L2 model over-predicts, or clocks above the "
                        "datasheet");
    if (drawn > 0)
      c.notes.push_back("measured points: exact FLOPs / measured time over DRAM bytes " +
                        (counted == drawn ? std::string("counted by the GPU")
                         : counted == 0   ? std::string("the L2 model predicts for each kernel's launch (no counters)")
                                          : "counted by the GPU (" + std::to_string(counted) + " of " +
                                                std::to_string(drawn) + " runs; the others: the L2 model's prediction)"));
    for (const std::string& k : placed.without_model)
      c.notes.push_back(k + ": left out, its rows name no model (results written before rows carried one)");
    if (by_kernel.empty()) c.notes.push_back(std::string(kNoRunPlaced) + " (" + why_none_placed(placed) + ")");
  }

  // The HBM slope, from well left of every point up to the highest ceiling.
  const double x0 = std::min(ai_lo, ridge) / 8, x_top = ridge_point(top, bw);
  Series slope;
  slope.name = "HBM " + format_tick(bw / 1e9, TickFormat::plain) + " GB/s";
  slope.x = {x0, x_top};
  slope.y = {x0 * bw, top};
  slope.style = SeriesStyle::line;
  slope.marker = MarkerShape::none;
  slope.color = {200, 60, 40, 255};
  slope.width = 2.5;
  c.series.insert(c.series.begin(), slope);
  c.ref_lines.push_back({true, ridge, "", {150, 150, 150, 255}, Dash::dotted, 1.0, std::nullopt});
  Marker rm;
  rm.x = ridge;
  rm.y = peak;
  rm.label = "ridge " + format_tick(ridge, TickFormat::plain) + " FLOP/B";
  rm.shape = MarkerShape::circle;
  rm.color = {200, 60, 40, 255};
  c.markers.push_back(rm);
  c.x.max = std::max(ai_hi, ridge) * 8;
  c.x.min = x0;
  if (!ctx.algorithms.empty())
    c.notes.push_back("model points: exact FLOPs over the DRAM bytes the L2 model predicts, at min(peak, AI·bandwidth); " +
                      dtype_unit_label(ctx.problem.dtype, unit) + " peak " + flops_label(peak));
  if (!not_modelled.empty()) c.notes.push_back(not_modelled);
  return c;
}

// ---- IO complexity ----------------------------------------------------------------

std::vector<sim::i64> default_sweep_values(SweepAxis axis) {
  switch (axis) {
    case SweepAxis::seq: return {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    case SweepAxis::sram:
      return {24 << 10, 32 << 10, 48 << 10, 64 << 10, 96 << 10, 128 << 10, 192 << 10, 256 << 10, 384 << 10, 512 << 10};
    case SweepAxis::head_dim: return {16, 32, 48, 64, 96, 128, 160, 192, 256};
    case SweepAxis::batch: return {1, 2, 4, 8, 16, 32, 64, 128};
    case SweepAxis::heads: return {1, 2, 4, 8, 16, 32, 64};
  }
  return {};
}

namespace {

Axis sweep_axis(SweepAxis a) {
  switch (a) {
    case SweepAxis::seq: return {"sequence length N", Scale::log2, TickFormat::binary, {}, {}, false, ""};
    case SweepAxis::sram: return {"SRAM per SM, M (bytes)", Scale::log2, TickFormat::binary, {}, {}, false, "bytes"};
    case SweepAxis::head_dim: return {"head dimension d", Scale::log2, TickFormat::plain, {}, {}, false, ""};
    case SweepAxis::batch: return {"batch B", Scale::log2, TickFormat::plain, {}, {}, false, ""};
    case SweepAxis::heads: return {"heads H", Scale::log2, TickFormat::plain, {}, {}, false, ""};
  }
  return {};
}

sim::i64 current_value(const ChartContext& ctx, SweepAxis a) {
  switch (a) {
    case SweepAxis::seq: return ctx.problem.seq_q;
    case SweepAxis::sram: return sram_of(ctx);
    case SweepAxis::head_dim: return ctx.problem.head_dim;
    case SweepAxis::batch: return ctx.problem.batch;
    case SweepAxis::heads: return ctx.problem.heads;
  }
  return 0;
}

std::string axis_symbol(SweepAxis a) {
  switch (a) {
    case SweepAxis::seq: return "N";
    case SweepAxis::sram: return "M";
    case SweepAxis::head_dim: return "d";
    case SweepAxis::batch: return "B";
    case SweepAxis::heads: return "H";
  }
  return "?";
}

std::vector<SweepRow> sweep(const ChartContext& ctx, SweepAxis axis, const std::vector<sim::i64>* values) {
  SweepSpec spec;
  spec.axis = axis;
  spec.values = values ? *values : default_sweep_values(axis);
  // A causal problem with N_kv ≠ N_q cannot be swept; the sweep keeps N_kv = N_q.
  // Only the chart against N draws what reaches DRAM; against M, d, B and H the
  // charts show the paper's quantity, the requests, and skip the L2 model.
  sim::SimOptions opt = ctx.options;
  opt.l2 = opt.l2 && axis == SweepAxis::seq;
  // The L2 model follows fewer heads per point than a single simulation (at
  // least its minimum: two heads, three waves of the grid and four L2s of
  // traffic per pass), so that the chart redraws while a slider moves.
  opt.l2_options.access_budget = std::min<i64>(opt.l2_options.access_budget, kChartL2AccessBudget);
  opt.l2_options.access_limit = std::min<i64>(opt.l2_options.access_limit, kChartL2AccessLimit);
  return run_sweep(ctx.problem, ctx.hw, spec, ctx.algorithms, opt);
}

bool drawn(const std::vector<sim::Algorithm>& algos, sim::Algorithm a) {
  return std::find(algos.begin(), algos.end(), a) != algos.end();
}

// The algorithm Θ(Nd + N²) is fitted through: the paper's standard attention
// when drawn, else the first drawn algorithm. `algos` is not empty.
sim::Algorithm standard_fit(const std::vector<sim::Algorithm>& algos) {
  const sim::Algorithm a = standard_attention();
  return drawn(algos, a) ? a : algos.front();
}

// The algorithm Θ(N²d²/M) is fitted through: one that keeps running
// statistics, preferably with the loop order of the bound's proof (K_j, V_j
// outside, as FlashAttention-1). None when no such algorithm is drawn.
std::optional<sim::Algorithm> flash_fit(const std::vector<sim::Algorithm>& algos) {
  std::optional<sim::Algorithm> any;
  for (sim::Algorithm a : sim::all_algorithms()) {
    const sim::AlgorithmInfo& info = sim::algorithm_info(a);
    if (!info.keeps_running_statistics || !drawn(algos, a)) continue;
    if (!info.outer_over_rows) return a;
    if (!any) any = a;
  }
  return any;
}

RefLine current_line(const ChartContext& ctx, SweepAxis axis) {
  const sim::i64 v = current_value(ctx, axis);
  const TickFormat f = axis == SweepAxis::head_dim ? TickFormat::plain : TickFormat::binary;
  return {true, static_cast<double>(v), axis_symbol(axis) + " = " + format_tick(static_cast<double>(v), f) + " (now)",
          {150, 150, 150, 255}, Dash::dotted, 1.5, std::nullopt};
}

// The N at which K and V of one head fill the L2 that data read by every SM
// sees (sim::seq_where_kv_fill_l2 of sim::shared_l2_bytes: one partition of a
// partitioned L2), as a vertical line, when the hardware has an L2 size and the
// line falls inside the swept values.
std::optional<RefLine> kv_fills_l2_line(const ChartContext& ctx, const std::vector<double>& xs) {
  const sim::i64 l2 = sim::shared_l2_bytes(ctx.hw);
  const double n = sim::seq_where_kv_fill_l2(ctx.problem.d(), ctx.problem.dtype, l2);
  if (!(n > 0) || xs.empty() || n < xs.front() || n > xs.back()) return std::nullopt;
  const std::string of = ctx.hw.l2_partitions > 1 ? " of a partition" : "";
  return RefLine{true, n, "K, V of a head = L2" + of + " (" + sim::bytes_iec(static_cast<double>(l2)) + ")",
                 {70, 70, 70, 255}, Dash::dashed, 1.5, std::nullopt};
}

// Every x of a sweep's rows, once (rows are values outer, algorithms inner).
std::vector<double> sweep_xs(const std::vector<SweepRow>& rows, size_t algorithms) {
  std::vector<double> xs;
  for (size_t k = 0; algorithms > 0 && k < rows.size(); k += algorithms) xs.push_back(static_cast<double>(rows[k].value));
  return xs;
}

// Points whose L2 was not modelled (its cache-access limit, or no L2 size),
// once per algorithm, as a footnote: their DRAM points are left out rather
// than drawn equal to the requests.
void note_unmodelled(const std::vector<SweepRow>& rows, std::vector<std::string>& notes) {
  std::map<sim::Algorithm, std::pair<int, std::string>> miss;
  for (const SweepRow& r : rows)
    if (r.result.ok() && !r.result.l2.modelled) {
      auto& m = miss[r.result.algorithm];
      if (m.first++ == 0) m.second = "N = " + sim::group_digits(r.value) + ": " + r.result.l2.why_not;
    }
  for (const auto& [a, m] : miss)
    notes.push_back(std::string(sim::to_string(a)) + ": DRAM after the L2 left out at " + std::to_string(m.first) +
                    " point(s) (" + m.second + ")");
}

}  // namespace

ChartSpec io_chart(const ChartContext& ctx_in, SweepAxis axis, const std::vector<sim::i64>* values) {
  ChartSpec c;
  // M acts on the traffic only through the tiles it allows: against M, tiles
  // follow the paper's rule at every point (fixed tiles would draw flat lines).
  ChartContext ctx = ctx_in;
  if (axis == SweepAxis::sram && ctx.options.tiles) {
    ctx.options.tiles.reset();
    c.notes.push_back("against M the tiles follow the paper's rule at every point, not the explicit " +
                      std::to_string(ctx_in.options.tiles->Br) + "×" + std::to_string(ctx_in.options.tiles->Bc));
  }
  c.id = axis == SweepAxis::seq ? "io-vs-n" : axis == SweepAxis::sram ? "io-vs-m" : axis == SweepAxis::head_dim ? "io-vs-d"
                                                                                                              : "io-vs-" + std::string(to_string(axis));
  c.title = "HBM accesses vs " + axis_symbol(axis);
  c.subtitle = subtitle_of(ctx);
  c.x = sweep_axis(axis);
  c.y = {"requests to global memory, reads + writes (bytes, all heads)", Scale::log10, TickFormat::bytes, {}, {}, false, ""};
  const std::vector<SweepRow> rows = sweep(ctx, axis, values);
  const size_t na = ctx.algorithms.size();
  if (na == 0 || rows.empty()) {
    c.notes.push_back("no algorithm selected");
    return c;
  }
  std::vector<double> xs, theta_std, theta_fl;
  std::map<sim::Algorithm, std::vector<double>> exact;
  for (size_t k = 0; k < rows.size(); ++k) {
    const SweepRow& r = rows[k];
    if (k % na == 0) {
      xs.push_back(static_cast<double>(r.value));
      theta_std.push_back(r.theta_standard);
      theta_fl.push_back(r.theta_flash);
    }
    exact[r.result.algorithm].push_back(r.result.ok() ? static_cast<double>(r.result.total.level(sim::Level::HBM).bytes())
                                                      : kNaN);
  }
  // A series per algorithm along the axis, drawn as the algorithm is, then `restyle`d.
  auto per_algorithm = [&](const std::string& what, std::map<sim::Algorithm, std::vector<double>>& ys, auto restyle) {
    for (sim::Algorithm a : ctx.algorithms) {
      Series s;
      s.name = legend_name(a) + ", " + what;
      s.x = xs;
      s.y = ys[a];
      draw_as(s, a);
      restyle(s);
      c.series.push_back(std::move(s));
    }
  };
  per_algorithm("simulated", exact, [](Series&) {});
  // Against N the sweep runs the L2 model: what reaches DRAM, beside the
  // paper's quantity, dashed in the algorithm's colour.
  if (axis == SweepAxis::seq) {
    std::map<sim::Algorithm, std::vector<double>> dram;
    bool any = false;
    for (const SweepRow& r : rows) {
      const bool has = r.result.ok() && r.result.l2.modelled;
      any = any || has;
      dram[r.result.algorithm].push_back(has ? static_cast<double>(r.result.dram_bytes()) : kNaN);
    }
    if (any) {
      per_algorithm("DRAM after the L2", dram, [](Series& s) {
        s.style = SeriesStyle::line;
        s.dash = Dash::dashed;
        s.width = 1.5;
      });
      c.y.label = "bytes, all heads";  // the legend says which lines are requests and which DRAM
    }
    note_unmodelled(rows, c.notes);
    if (const auto l = kv_fills_l2_line(ctx, xs)) c.ref_lines.push_back(*l);
  }
  auto fitted = [&](sim::Algorithm a, const std::vector<double>& theta) {
    auto it = exact.find(a);
    return it == exact.end() ? 0.0 : fitted_constant(it->second, theta);
  };
  const double c_std = fitted(standard_fit(ctx.algorithms), theta_std);
  const std::optional<sim::Algorithm> flash = flash_fit(ctx.algorithms);
  const double c_fl = flash ? fitted(*flash, theta_fl) : 0.0;
  auto theta_series = [&](const std::string& name, const std::vector<double>& theta, double k, Dash dash) {
    Series s;
    s.name = name + ", c = " + format_tick(k, TickFormat::plain);
    s.x = xs;
    for (double t : theta) s.y.push_back(k > 0 ? k * t : kNaN);
    s.style = SeriesStyle::line;
    s.marker = MarkerShape::none;
    s.dash = dash;
    s.width = 1.5;
    s.color = {140, 140, 140, 255};
    return s;
  };
  if (c_std > 0) c.series.push_back(theta_series("Θ(Nd + N²)", theta_std, c_std, Dash::dashed));
  if (c_fl > 0) c.series.push_back(theta_series("Θ(N²d²/M)", theta_fl, c_fl, Dash::dotted));
  c.ref_lines.push_back(current_line(ctx, axis));
  note_errors(rows, axis, c.notes);
  c.notes.push_back("Θ curves: the paper's bounds with the constant c fitted through standard and FA1 at the largest point");
  return c;
}

ChartSpec ai_vs_n_chart(const ChartContext& ctx, const std::vector<sim::i64>* values) {
  ChartSpec c;
  c.id = "ai-vs-n";
  c.title = "Arithmetic intensity vs N";
  c.subtitle = subtitle_of(ctx);
  c.x = sweep_axis(SweepAxis::seq);
  c.y = {"arithmetic intensity (FLOP/byte)", Scale::log10, TickFormat::plain, {}, {}, false, "FLOP/byte"};
  const std::vector<SweepRow> rows = sweep(ctx, SweepAxis::seq, values);
  std::map<sim::Algorithm, Series> by;
  for (sim::Algorithm a : ctx.algorithms) {
    Series& s = by[a];
    s.name = legend_name(a);
    draw_as(s, a);
  }
  for (const SweepRow& r : rows) {
    Series& s = by[r.result.algorithm];
    s.x.push_back(static_cast<double>(r.value));
    s.y.push_back(r.result.ok() ? r.roof.ai : kNaN);
  }
  for (sim::Algorithm a : ctx.algorithms) c.series.push_back(std::move(by[a]));
  // The paper's intensity, on the requests, dashed beside the one on DRAM.
  for (sim::Algorithm a : ctx.algorithms) {
    Series s;
    s.name = std::string(sim::to_string(a)) + ", on the requests";
    draw_as(s, a);
    s.style = SeriesStyle::line;
    s.dash = Dash::dashed;
    s.width = 1.5;
    for (const SweepRow& r : rows)
      if (r.result.algorithm == a) {
        s.x.push_back(static_cast<double>(r.value));
        s.y.push_back(r.result.ok() ? r.roof.ai_requests : kNaN);
      }
    c.series.push_back(std::move(s));
  }
  const sim::ComputeUnit unit = unit_of(ctx.problem);
  const double ridge = ridge_point(ctx.hw.peak(ctx.problem.dtype, unit), ctx.hw.hbm_bandwidth);
  if (ridge > 0)
    c.ref_lines.push_back({false, ridge,
                           "ridge " + format_tick(ridge, TickFormat::plain) + " FLOP/B (" +
                               dtype_unit_label(ctx.problem.dtype, unit) + "): above it, compute-bound",
                           {200, 60, 40, 255}, Dash::dashed, 2.0, std::nullopt});
  c.ref_lines.push_back(current_line(ctx, SweepAxis::seq));
  if (const auto l = kv_fills_l2_line(ctx, sweep_xs(rows, ctx.algorithms.size()))) c.ref_lines.push_back(*l);
  note_errors(rows, SweepAxis::seq, c.notes);
  note_unmodelled(rows, c.notes);
  c.notes.push_back("AI = exact FLOPs / DRAM bytes after the L2 (solid), / requests, the paper's HBM accesses (dashed)");
  return c;
}

}  // namespace flashlab::analysis
