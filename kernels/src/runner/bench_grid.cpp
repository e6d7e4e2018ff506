#include "flashlab/kernels/runner/bench_grid.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/problem/attention_models.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::kernels {

namespace fs = std::filesystem;
using sim::AttentionProblem;

namespace {

[[noreturn]] void bad(const std::string& msg) { throw std::invalid_argument(msg); }

template <class T>
std::vector<T> or_default(const std::vector<T>& v, T fallback) {
  return v.empty() ? std::vector<T>{fallback} : v;
}

std::string n(i64 v) { return std::to_string(v); }

// (heads, head dim) pairs from at most two of heads, head_dim, emb_dim.
std::vector<std::pair<i64, i64>> heads_and_dims(const BenchAxes& a) {
  std::vector<std::pair<i64, i64>> out;
  if (!a.emb_dim.empty() && !a.heads.empty() && !a.head_dim.empty()) {
    // All three: allowed when they agree (--heads 32 --head-dim 64 --emb-dim 2048).
    for (i64 h : a.heads)
      for (i64 d : a.head_dim) {
        if (std::find(a.emb_dim.begin(), a.emb_dim.end(), h * d) == a.emb_dim.end())
          bad("heads " + n(h) + " × head dim " + n(d) + " = " + n(h * d) +
              " is not a given embedding dim (emb_dim = heads · head_dim; give at most two of the three)");
        out.emplace_back(h, d);
      }
    for (i64 e : a.emb_dim)
      if (std::none_of(out.begin(), out.end(), [e](const auto& hd) { return hd.first * hd.second == e; }))
        bad("embedding dim " + n(e) + " is not heads × head dim for any given pair");
    return out;
  }
  if (a.emb_dim.empty()) {
    for (i64 h : or_default<i64>(a.heads, 16))
      for (i64 d : or_default<i64>(a.head_dim, 64)) out.emplace_back(h, d);
    return out;
  }
  for (i64 e : a.emb_dim) {
    if (!a.heads.empty()) {
      for (i64 h : a.heads) {
        if (h < 1 || e % h != 0) bad("embedding dim " + n(e) + " is not a multiple of heads " + n(h));
        out.emplace_back(h, e / h);
      }
    } else {
      for (i64 d : or_default<i64>(a.head_dim, 64)) {
        if (d < 1 || e % d != 0) bad("embedding dim " + n(e) + " is not a multiple of head dim " + n(d));
        out.emplace_back(e / d, d);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<AttentionProblem> expand_axes(const BenchAxes& a) {
  if (!a.batch.empty() && !a.tokens.empty()) bad("give batch or tokens (B = tokens / N), not both");
  const auto pairs = heads_and_dims(a);
  const auto seqs = or_default<i64>(a.seq, 1024);
  const auto seq_kvs = or_default<i64>(a.seq_kv, 0);
  const auto causals = a.causal.empty() ? std::vector<bool>{false} : a.causal;
  const auto dtypes = or_default<sim::DType>(a.dtypes, sim::DType::fp16);

  const auto kv_heads = or_default<i64>(a.kv_heads, 0);  // 0: as many as the heads

  std::vector<AttentionProblem> out;
  for (sim::DType t : dtypes)
    for (bool causal : causals)
      for (const auto& [h, d] : pairs)
        for (i64 kv : kv_heads) {
          // The batch axis: given, or tokens / N per sequence length.
          std::vector<std::pair<i64, i64>> batch_seq;
          if (!a.tokens.empty()) {
            for (i64 tok : a.tokens)
              for (i64 s : seqs) {
                if (s < 1 || tok % s != 0 || tok / s < 1)
                  bad(n(tok) + " tokens is not a whole number of sequences of N=" + n(s));
                batch_seq.emplace_back(tok / s, s);
              }
          } else {
            for (i64 b : or_default<i64>(a.batch, 16))
              for (i64 s : seqs) batch_seq.emplace_back(b, s);
          }
          for (const auto& [b, s] : batch_seq)
            for (i64 skv : seq_kvs) {
              AttentionProblem p;
              p.batch = b;
              p.heads = h;
              p.kv_heads = kv;
              p.seq_q = s;
              p.seq_kv = skv == 0 ? s : skv;
              p.head_dim = d;
              p.causal = causal;
              p.dtype = t;
              for (const sim::ProblemError& e : sim::validate(p)) bad(sim::describe(p) + ": " + e.message);
              out.push_back(p);
            }
        }
  return out;
}

std::vector<sim::AttentionProblem> expand_ring_axes(const RingAxes& a) {
  struct Shape {
    i64 heads, kv_heads, head_dim;
  };
  std::vector<Shape> shapes;
  if (!a.models.empty()) {
    if (!a.heads.empty() || !a.kv_heads.empty() || !a.head_dim.empty())
      bad("give a model or heads / K/V heads / head dim, not both");
    for (const std::string& id : a.models) {
      const sim::AttentionModel* m = sim::find_attention_model(id);
      if (m == nullptr) {
        bad("unknown model '" + id + "' (known: " + sim::attention_model_ids() + ")");
      }
      shapes.push_back({m->heads, m->kv_heads, m->head_dim});
    }
  } else {
    for (i64 h : or_default<i64>(a.heads, 32))
      for (i64 d : or_default<i64>(a.head_dim, 128))
        for (i64 kv : a.kv_heads.empty() ? std::vector<i64>{h} : a.kv_heads) shapes.push_back({h, kv, d});
  }
  const auto causals = a.causal.empty() ? std::vector<bool>{true} : a.causal;
  const auto layouts = or_default<sim::RingLayout>(a.layouts, sim::RingLayout::zigzag);
  const auto dtypes = or_default<sim::DType>(a.dtypes, sim::DType::bf16);
  std::vector<sim::AttentionProblem> out;
  for (sim::DType t : dtypes)
    for (bool causal : causals)
      for (sim::RingLayout layout : layouts)
        for (const Shape& sh : shapes)
          for (i64 b : or_default<i64>(a.batch, 1))
            for (i64 s : or_default<i64>(a.seq, 8192))
              for (int g : or_default<int>(a.gpus, 2)) {
                sim::AttentionProblem p;
                p.parallel = sim::ParallelPart{};
                p.batch = b;
                p.heads = sh.heads;
                p.kv_heads = sh.kv_heads;
                p.seq_q = s;
                p.head_dim = sh.head_dim;
                p.causal = causal;
                p.dtype = t;
                p.parallel_part().gpus = g;
                p.parallel_part().layout = layout;
                p.parallel_part().backward = a.backward;
                for (const sim::ProblemError& e : sim::validate(p)) bad(e.message);
                out.push_back(p);
              }
  return out;
}

std::vector<const KernelInfo*> select_kernels(const std::vector<std::string>& ids, sim::PassSelection pass) {
  if (ids.empty()) return kernels_of(pass);
  std::vector<const KernelInfo*> out;
  for (const std::string& id : ids) {
    const KernelInfo* k = find_kernel(id);
    if (k == nullptr) bad("unknown kernel '" + id + "' (known: " + kernel_ids() + ")");
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

// ---- sweep files ---------------------------------------------------------------

namespace {

using nlohmann::json;

// A sweep file's mistakes, "WHERE: WHY" (parse_sweep puts the file's name before them).
const sim::JsonFields<std::invalid_argument> kSweepFields{std::string()};

i64 size_value(const json& v, const std::string& where) {
  if (v.is_number_integer()) {
    const i64 x = v.get<i64>();
    if (x < 1) kSweepFields.error(where, "must be at least 1 (got " + n(x) + ")");
    return x;
  }
  if (v.is_string()) {
    const auto x = sim::parse_size(v.get<std::string>());
    if (!x || *x < 1) kSweepFields.error(where, "'" + v.get<std::string>() + "' is not a positive whole number");
    return *x;
  }
  kSweepFields.error(where, "expected a whole number or a size string like \"16K\" (got " + v.dump() + ")");
}

std::vector<i64> size_list(const json& v, const std::string& where) {
  std::vector<i64> out;
  if (!v.is_array()) return {size_value(v, where)};
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(size_value(v[i], where + "[" + std::to_string(i) + "]"));
  if (out.empty()) kSweepFields.error(where, "empty list");
  return out;
}

bool causal_value(const json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "yes" || s == "true") return true;
    if (s == "no" || s == "false") return false;
  }
  kSweepFields.error(where, "expected true/false or \"yes\"/\"no\" (got " + v.dump() + ")");
}

// A "flashlab-ring-sweep/1" file's axes.
RingAxes ring_axes(const json& axes) {
  static const std::set<std::string> keys{"model", "batch", "heads", "kv_heads", "head_dim", "seq",
                                          "gpus",  "layout", "causal", "dtype", "pass"};
  RingAxes a;
  for (const auto& [key, value] : axes.items()) {
    if (keys.count(key) == 0) bad("unknown axis \"" + key + "\"");
    const std::string where = "axes." + key;
    const json list = value.is_array() ? value : json::array({value});
    if (key == "model") {
      for (const json& m : list) {
        if (!m.is_string()) kSweepFields.error(where, "expected model ids like \"llama2-7b\" (got " + m.dump() + ")");
        a.models.push_back(m.get<std::string>());
      }
    } else if (key == "batch") {
      a.batch = size_list(value, where);
    } else if (key == "heads") {
      a.heads = size_list(value, where);
    } else if (key == "kv_heads") {
      a.kv_heads = size_list(value, where);
    } else if (key == "head_dim") {
      a.head_dim = size_list(value, where);
    } else if (key == "seq") {
      a.seq = size_list(value, where);
    } else if (key == "gpus") {
      for (i64 g : size_list(value, where)) {
        if (g > 4096) kSweepFields.error(where, "at most 4096 GPUs (got " + n(g) + ")");
        a.gpus.push_back(static_cast<int>(g));
      }
    } else if (key == "layout") {
      for (const json& l : list) {
        sim::RingLayout layout{};
        if (!l.is_string() || !sim::parse_ring_layout(l.get<std::string>(), layout))
          kSweepFields.error(where, "expected one of " + sim::ring_layout_names() + " (got " + l.dump() + ")");
        a.layouts.push_back(layout);
      }
    } else if (key == "causal") {
      for (const json& c : list) a.causal.push_back(causal_value(c, where));
    } else if (key == "dtype") {
      for (const json& t : list) {
        const auto dt = t.is_string() ? sim::parse_dtype(t.get<std::string>()) : std::nullopt;
        if (!dt || *dt == sim::DType::fp32) kSweepFields.error(where, "expected \"fp16\" or \"bf16\" (got " + t.dump() + ")");
        a.dtypes.push_back(*dt);
      }
    } else if (key == "pass") {
      const std::string pass = value.is_string() ? value.get<std::string>() : std::string();
      if (pass != "fwd" && pass != "fwd+bwd")
        kSweepFields.error(where, "expected \"fwd\" or \"fwd+bwd\" (got " + value.dump() + ")");
      a.backward = pass == "fwd+bwd";
    }
  }
  return a;
}

}  // namespace

SweepFile parse_sweep(const std::string& text, const std::string& origin) {
  try {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      bad(std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) bad("expected a JSON object");
    const std::string format = j.value("format", std::string());
    if (format != "flashlab-sweep/1" && format != "flashlab-ring-sweep/1")
      bad("\"format\" must be \"flashlab-sweep/1\" or \"flashlab-ring-sweep/1\"");
    const bool ring = format == "flashlab-ring-sweep/1";
    static const std::set<std::string> top{"format", "name", "title", "source", "kernels", "axes", "mem_limit"};
    for (const auto& [key, value] : j.items())
      if (top.count(key) == 0) bad("unknown key \"" + key + "\"");
    SweepFile s;
    s.name = j.value("name", std::string());
    s.title = j.value("title", std::string());
    s.source = j.value("source", std::string());
    if (s.name.empty()) bad("\"name\" is missing");
    if (j.contains("kernels")) {
      if (!j["kernels"].is_array()) bad("\"kernels\" must be a list of registry ids");
      for (const json& k : j["kernels"]) {
        if (!k.is_string()) bad("\"kernels\" must be a list of registry ids");
        s.axes.kernels.push_back(k.get<std::string>());
      }
      select_kernels(s.axes.kernels);  // unknown ids fail here, not mid-run
    }
    if (j.contains("mem_limit")) s.mem_limit_bytes = size_value(j["mem_limit"], "mem_limit");
    if (!j.contains("axes") || !j["axes"].is_object()) bad("\"axes\" (an object of lists) is missing");
    if (ring) {
      if (j.contains("kernels")) bad("a ring sweep names no kernels (the ring runs the fastest rung of the device)");
      s.ring = ring_axes(j["axes"]);
      expand_ring_axes(*s.ring);  // a grid that cannot expand fails at load
      return s;
    }
    static const std::set<std::string> axis_keys{"batch",   "tokens",  "seq",    "seq_kv", "heads",   "kv_heads",
                                                 "head_dim", "emb_dim", "causal", "dtype"};
    for (const auto& [key, value] : j["axes"].items()) {
      if (axis_keys.count(key) == 0) bad("unknown axis \"" + key + "\"");
      const std::string where = "axes." + key;
      BenchAxes& a = s.axes;
      if (key == "batch") a.batch = size_list(value, where);
      else if (key == "tokens") a.tokens = size_list(value, where);
      else if (key == "seq") a.seq = size_list(value, where);
      else if (key == "seq_kv") a.seq_kv = size_list(value, where);
      else if (key == "heads") a.heads = size_list(value, where);
      else if (key == "kv_heads") a.kv_heads = size_list(value, where);
      else if (key == "head_dim") a.head_dim = size_list(value, where);
      else if (key == "emb_dim") a.emb_dim = size_list(value, where);
      else if (key == "causal") {
        const json list = value.is_array() ? value : json::array({value});
        for (const json& c : list) a.causal.push_back(causal_value(c, where));
      } else if (key == "dtype") {
        const json list = value.is_array() ? value : json::array({value});
        for (const json& t : list) {
          const auto dt = t.is_string() ? sim::parse_dtype(t.get<std::string>()) : std::nullopt;
          if (!dt) kSweepFields.error(where, "expected \"fp16\", \"bf16\" or \"fp32\" (got " + t.dump() + ")");
          a.dtypes.push_back(*dt);
        }
      }
    }
    expand_axes(s.axes);  // a grid that cannot expand fails at load
    return s;
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(origin + ": " + e.what());
  } catch (const json::exception& e) {
    throw std::runtime_error(origin + ": " + e.what());
  }
}

std::string sweeps_dir() {
  const std::string a = sim::assets_dir();
  return a.empty() ? std::string() : (fs::path(a) / "sweeps").string();
}

std::vector<std::string> list_sweeps() { return sim::asset_names("sweeps"); }

SweepFile load_sweep(const std::string& name_or_path) {
  static constexpr sim::AssetKind kSweeps{"sweeps", "sweep", "sweep", "sweeps", {}, false,
                                          sim::AssetKind::AbsentPath::read};
  const std::string path = sim::asset_file<std::runtime_error>(kSweeps, name_or_path);
  return parse_sweep(sim::read_asset<std::runtime_error>(kSweeps, path), path);
}

}  // namespace flashlab::kernels
