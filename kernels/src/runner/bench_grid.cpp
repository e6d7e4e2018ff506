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
  if (!a.models.empty() || !a.gpus.empty() || !a.layouts.empty())
    bad("models, GPUs and layouts are the ring's axes (flashlab bench --gpus)");
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

std::vector<sim::AttentionProblem> expand_ring_axes(const BenchAxes& a) {
  if (!a.tokens.empty() || !a.seq_kv.empty() || !a.emb_dim.empty())
    bad("the ring's axes are a model or heads / K/V heads / head dim, batch, seq, gpus, layout, causal, dtype and "
        "pass (tokens, seq_kv and emb_dim are one GPU's)");
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
                p.parallel_part().passes = a.passes;
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

std::vector<std::string> model_list(const json& value, const std::string& where) {
  std::vector<std::string> out;
  for (const json& m : value.is_array() ? value : json::array({value})) {
    if (!m.is_string()) kSweepFields.error(where, "expected model ids like \"llama2-7b\" (got " + m.dump() + ")");
    out.push_back(m.get<std::string>());
  }
  return out;
}

// The axes a sweep file may give: one table for both formats. `one_gpu`,
// `ring`: the formats that take the key; `read` sets it (`ring`: the file is
// a ring sweep).
struct AxisKey {
  const char* key;
  bool one_gpu, ring;
  void (*read)(const json& value, const std::string& where, bool ring, BenchAxes& a);
};

const AxisKey kAxisKeys[] = {
    {"model", false, true, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.models = model_list(v, w); }},
    {"batch", true, true, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.batch = size_list(v, w); }},
    {"tokens", true, false, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.tokens = size_list(v, w); }},
    {"seq", true, true, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.seq = size_list(v, w); }},
    {"seq_kv", true, false, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.seq_kv = size_list(v, w); }},
    {"heads", true, true, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.heads = size_list(v, w); }},
    {"kv_heads", true, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) { a.kv_heads = size_list(v, w); }},
    {"head_dim", true, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) { a.head_dim = size_list(v, w); }},
    {"emb_dim", true, false, [](const json& v, const std::string& w, bool, BenchAxes& a) { a.emb_dim = size_list(v, w); }},
    {"gpus", false, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) {
       for (i64 g : size_list(v, w)) {
         if (g > sim::kMaxRingGpus)
           kSweepFields.error(w, "at most " + n(sim::kMaxRingGpus) + " GPUs (got " + n(g) + ")");
         a.gpus.push_back(static_cast<int>(g));
       }
     }},
    {"layout", false, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) {
       for (const json& l : v.is_array() ? v : json::array({v})) {
         sim::RingLayout layout{};
         if (!l.is_string() || !sim::parse_ring_layout(l.get<std::string>(), layout))
           kSweepFields.error(w, "expected one of " + sim::ring_layout_names() + " (got " + l.dump() + ")");
         a.layouts.push_back(layout);
       }
     }},
    {"causal", true, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) {
       for (const json& c : v.is_array() ? v : json::array({v})) a.causal.push_back(causal_value(c, w));
     }},
    {"dtype", true, true,
     [](const json& v, const std::string& w, bool ring, BenchAxes& a) {
       // The ring runs the tensor-core rungs: fp16 and bf16.
       for (const json& t : v.is_array() ? v : json::array({v})) {
         const auto dt = t.is_string() ? sim::parse_dtype(t.get<std::string>()) : std::nullopt;
         if (ring && (!dt || *dt == sim::DType::fp32))
           kSweepFields.error(w, "expected \"fp16\" or \"bf16\" (got " + t.dump() + ")");
         if (!dt) kSweepFields.error(w, "expected \"fp16\", \"bf16\" or \"fp32\" (got " + t.dump() + ")");
         a.dtypes.push_back(*dt);
       }
     }},
    {"pass", false, true,
     [](const json& v, const std::string& w, bool, BenchAxes& a) {
       const auto pass = v.is_string() ? sim::parse_pass_selection(v.get<std::string>()) : std::nullopt;
       if (!pass || *pass == sim::PassSelection::bwd)
         kSweepFields.error(w, "expected \"fwd\" or \"fwd+bwd\" (got " + v.dump() + ")");
       a.passes = *pass;
     }},
};

// A sweep file's "axes" object, through kAxisKeys.
void read_axes(const json& axes, bool ring, BenchAxes& a) {
  for (const auto& [key, value] : axes.items()) {
    const AxisKey* k = nullptr;
    for (const AxisKey& x : kAxisKeys)
      if (key == x.key && (ring ? x.ring : x.one_gpu)) k = &x;
    if (k == nullptr) bad("unknown axis \"" + key + "\"");
    k->read(value, "axes." + key, ring, a);
  }
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
    if (ring && j.contains("kernels"))
      bad("a ring sweep names no kernels (the ring runs the fastest rung of the device)");
    s.ring = ring;
    read_axes(j["axes"], ring, s.axes);
    if (ring) {
      expand_ring_axes(s.axes);  // a grid that cannot expand fails at load
      return s;
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
