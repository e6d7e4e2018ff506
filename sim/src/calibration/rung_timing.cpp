#include "flashlab/sim/calibration/rung_timing.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tensor_core_configs.hpp"
#include "hopper/cta_placement.hpp"

namespace flashlab::sim {

std::optional<RungGeometry> rung_geometry(const std::string& rung, i64 head_dim, std::optional<bool> causal) {
  RungGeometry g;
  g.rung = rung;
  g.head_dim = head_dim;
  g.causal = causal;
  if (rung == "fa3_hopper") {
    const auto c = hopper_config(head_dim);  // the long sequences' row
    if (!c) return std::nullopt;
    g.tiles = tiles_of(*c);
    g.ctas_per_sm = 1;  // its shared memory leaves room for one
  } else if (rung == "fa2_tc") {
    const auto c = fa2_tc_config(head_dim);
    if (!c) return std::nullopt;
    g.tiles = tiles_of(*c);
    g.ctas_per_sm = c->min_blocks;
  } else if (rung == "fa3_hopper_bwd") {
    // Without a mask, the causal row's tiles for either: the committed fits
    // (assets/rungs) were made when both masks ran the causal row's tiles.
    const auto c = hopper_bwd_config(head_dim, causal.value_or(true));
    if (!c) return std::nullopt;
    g.pass = Pass::bwd;
    g.tiles = tiles_of(*c);
    g.ctas_per_sm = 1;  // its shared memory leaves room for one
    g.axis = CtaAxis::column_blocks;
  } else if (rung == "fa2_tc_bwd") {
    const auto c = fa2_tc_bwd_config(head_dim);
    if (!c) return std::nullopt;
    g.pass = Pass::bwd;
    g.tiles = tiles_of(*c);
    g.ctas_per_sm = c->min_blocks;
    g.axis = CtaAxis::column_blocks;
  } else {
    return std::nullopt;
  }
  return g;
}

RungLaunch rung_launch(const RungTiming& t, i64 heads, i64 n_q, i64 n_kv, bool causal, i64 sm_count,
                       double extra_cta_s) {
  if (heads < 1 || n_q < 1 || n_kv < 1) throw std::invalid_argument("a launch needs heads and tokens");
  if (causal && n_q != n_kv) throw std::invalid_argument("a causal launch here is a chunk against itself (n_q = n_kv)");
  const RungGeometry& g = t.geometry;
  AttentionProblem p;
  p.batch = 1;
  p.heads = 1;
  p.seq_q = n_q;
  p.seq_kv = n_kv;
  p.head_dim = g.head_dim;
  p.causal = causal;
  const TileGrid grid(p, g.tiles);
  // Visits of each CTA of one head, heaviest first: the rungs number their
  // CTAs head by head, and inside a head the heaviest block (most tiles under
  // the mask) first; the GPU hands the CTAs out in that order.
  std::vector<i64> visits;
  if (g.axis == CtaAxis::row_blocks) {
    for (i64 i = 0; i < grid.T_r; ++i) visits.push_back(grid.last_col(i) + 1);
  } else {
    for (i64 j = 0; j < grid.T_c; ++j) visits.push_back(grid.T_r - grid.first_row(j));
  }
  std::sort(visits.begin(), visits.end(), std::greater<>());
  RungLaunch l;
  l.slots = std::max<i64>(1, sm_count) * std::max(1, g.ctas_per_sm);
  l.ctas = heads * static_cast<i64>(visits.size());
  l.waves = static_cast<double>(l.ctas) / static_cast<double>(l.slots);
  for (i64 v : visits) l.tiles += static_cast<double>(v) * static_cast<double>(heads);
  const double fixed = t.cta_s + extra_cta_s;
  double end = 0;
  if (visits.front() == visits.back()) {  // every CTA alike: whole waves
    end = static_cast<double>((l.ctas + l.slots - 1) / l.slots) * (fixed + t.tile_s * static_cast<double>(visits.front()));
  } else {
    // Each CTA, head by head, to the slot that frees first.
    std::vector<double> per_head;
    for (i64 v : visits) per_head.push_back(fixed + t.tile_s * static_cast<double>(v));
    end = first_free_makespan(head_by_head(per_head, heads), std::min(l.slots, l.ctas));
  }
  l.time_s = t.launch_s + end;
  return l;
}

std::string head_dim_and_mask(const RungGeometry& g) {
  return std::to_string(g.head_dim) + (g.causal ? (*g.causal ? " causal" : " full") : "");
}

const RungTiming* RungTimingSet::find(const std::string& rung, i64 head_dim, std::optional<bool> causal) const {
  const RungTiming *both = nullptr, *unmasked = nullptr;
  for (const RungTiming& t : rungs) {
    if (t.geometry.rung != rung || t.geometry.head_dim != head_dim) continue;
    const std::optional<bool>& m = t.geometry.causal;
    if (!m) {
      if (!both) both = &t;
    } else if (causal && *m == *causal) {
      return &t;
    } else if (!*m && !unmasked) {
      unmasked = &t;
    }
  }
  if (both) return both;
  return causal ? nullptr : unmasked;
}

RungTiming RungTiming::slowed(double factor) const {
  RungTiming t = *this;
  t.cta_s *= factor;
  t.tile_s *= factor;
  return t;
}

std::string to_rung_timing_json(const RungTimingSet& s) {
  nlohmann::json rungs = nlohmann::json::array();
  for (const RungTiming& t : s.rungs) {
    nlohmann::json r{{"rung", t.geometry.rung},
                     {"head_dim", t.geometry.head_dim},
                     {"launch_us", t.launch_s * 1e6},
                     {"cta_us", t.cta_s * 1e6},
                     {"tile_us", t.tile_s * 1e6},
                     {"tiles", {t.geometry.tiles.Br, t.geometry.tiles.Bc}},
                     {"source", t.source}};
    if (t.geometry.causal) r["mask"] = *t.geometry.causal ? "causal" : "full";
    if (t.host_launch_s > 0) r["host_launch_us"] = t.host_launch_s * 1e6;
    if (!t.power_source.empty()) {
      r["capped_rate"] = t.capped_rate;
      r["boost_ms"] = t.boost_s * 1e3;
      r["power_source"] = t.power_source;
    }
    rungs.push_back(std::move(r));
  }
  return nlohmann::json{{"format", "flashlab-rung-timing/1"}, {"gpu", s.gpu}, {"sm_count", s.sm_count}, {"rungs", rungs}}
             .dump(2) +
         "\n";
}

RungTimingSet parse_rung_timing_json(const std::string& text, const std::string& origin) {
  const JsonFields<std::invalid_argument> F(origin, FieldWording::quoted);
  const nlohmann::json j = F.parse_object(text);
  const nlohmann::json& f = F.member(j, "", "format");
  if (!f.is_string() || f.get<std::string>() != "flashlab-rung-timing/1")
    F.fail("field 'format' must be \"flashlab-rung-timing/1\" (got " + f.dump() + ")");
  RungTimingSet s;
  const nlohmann::json& gpu = F.member(j, "", "gpu");
  if (!gpu.is_string()) F.fail("field 'gpu' must be a string");
  s.gpu = gpu.get<std::string>();
  s.sm_count = static_cast<int>(F.number(j, "", "sm_count"));
  const nlohmann::json& rungs = F.member(j, "", "rungs");
  if (!rungs.is_array()) F.fail("field 'rungs' must be a list");
  for (std::size_t k = 0; k < rungs.size(); ++k) {
    const std::string at = "rungs[" + std::to_string(k) + "]";
    const nlohmann::json& r = rungs[k];
    const nlohmann::json& name = F.member(r, at, "rung");
    if (!name.is_string()) F.fail("field '" + at + ".rung' must be a string");
    const i64 d = static_cast<i64>(F.number(r, at, "head_dim", true));
    std::optional<bool> causal;
    if (r.contains("mask")) {
      const nlohmann::json& m = r["mask"];
      if (!m.is_string() || (m.get<std::string>() != "causal" && m.get<std::string>() != "full"))
        F.fail("field '" + at + ".mask' must be \"causal\" or \"full\" (got " + m.dump() + ")");
      causal = m.get<std::string>() == "causal";
    }
    const auto g = rung_geometry(name.get<std::string>(), d, causal);
    if (!g)
      F.fail(at + ": no compiled configuration of '" + name.get<std::string>() + "' at head dim " +
                                       std::to_string(d));
    RungTiming t;
    t.geometry = *g;
    // The tiles of the runs fitted to, when the file records them: the
    // constants are those of that build's kernel.
    if (r.contains("tiles")) {
      const nlohmann::json& tl = r["tiles"];
      auto tile_ok = [](const nlohmann::json& x) { return x.is_number_integer() && x.get<i64>() >= 1 && x.get<i64>() <= 1024; };
      if (!tl.is_array() || tl.size() != 2 || !tile_ok(tl[0]) || !tile_ok(tl[1]))
        F.fail("field '" + at + ".tiles' must be [B_r, B_c], two whole numbers in 1..1024 (got " + tl.dump() + ")");
      t.geometry.tiles = {tl[0].get<i64>(), tl[1].get<i64>()};
    }
    t.launch_s = F.number(r, at, "launch_us", false) * 1e-6;
    t.cta_s = F.number(r, at, "cta_us", false) * 1e-6;
    t.tile_s = F.number(r, at, "tile_us", true) * 1e-6;
    if (r.contains("host_launch_us"))
      t.host_launch_s = F.number(r, at, "host_launch_us", false) * 1e-6;
    if (r.contains("source") && r["source"].is_string()) t.source = r["source"].get<std::string>();
    if (r.contains("capped_rate") || r.contains("boost_ms") || r.contains("power_source")) {
      t.capped_rate = F.number(r, at, "capped_rate", true);
      if (t.capped_rate > 1) F.fail("field '" + at + ".capped_rate' must be in (0, 1]");
      t.boost_s = F.number(r, at, "boost_ms", false) * 1e-3;
      const nlohmann::json& ps = F.member(r, at, "power_source");
      if (!ps.is_string() || ps.get<std::string>().empty())
        F.fail("field '" + at + ".power_source' must be a string naming the runs fitted to");
      t.power_source = ps.get<std::string>();
    }
    s.rungs.push_back(t);
  }
  return s;
}

namespace {
const AssetKind kRungTimings{"rungs", "rung timing", "rung timing", {}, "or a file written by flashlab ceilings rungs --out",
                             false, AssetKind::AbsentPath::unreadable};
}  // namespace

RungTimingSet load_rung_timing(const std::string& name_or_path) {
  const std::string path = asset_file<std::invalid_argument>(kRungTimings, name_or_path);
  return parse_rung_timing_json(read_asset<std::invalid_argument>(kRungTimings, path), path);
}

std::optional<RungTimingSet> rung_timing_for_gpu(const std::string& gpu) {
  if (gpu.empty()) return std::nullopt;
  for (const std::string& path : asset_files(assets_dir(), kRungTimings.folder)) {
    RungTimingSet set;
    try {
      set = load_rung_timing(path);
    } catch (const std::invalid_argument&) {
      continue;  // not a rung timing file: not this GPU's
    }
    if (lower(set.gpu) == lower(gpu)) return set;
  }
  return std::nullopt;
}

}  // namespace flashlab::sim
