// Benchmark results as JSON and CSV. One schema, two encodings: the CSV
// columns and the JSON row keys have the same names (docs/kernels.md lists
// them), so a reader of one can read the other.
//
//   JSON  {"format": "flashlab-bench/1", "meta": {...}, "rows": [{...}, ...]}
//   CSV   "# format: \"flashlab-bench/1\"", then "# key: JSON value" per
//         metadata field, then a header row and one row per result.
//
// Numbers round-trip exactly (shortest representation that reads back to the
// same double); ±inf and NaN are written "inf", "-inf", "nan" in both. A value
// nobody measured — the time of an OOM row, a counter that did not run, an
// error never checked — is an empty cell (JSON: null), never 0 or -1: the
// status and reason columns say why. Reading gives it the field's default.
#include "flashlab/analysis/results/bench_results.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/sim/core/format.hpp"
#include "results/run_meta_json.hpp"
#include "text/results_json.hpp"

namespace flashlab::analysis {

using nlohmann::json;

json run_meta_json(const sim::RunMeta& m) {
  json j{{"gpu", m.gpu},
         {"driver", m.driver},
         {"cuda_runtime", m.cuda_runtime},
         {"commit", m.commit},
         {"flop_convention", m.flop_convention},
         {"date", m.date},
         {"host", m.host},
         {"sm_count", m.sm_count},
         {"l2_bytes", m.l2_bytes},
         {"sm_clock_mhz", results_json::number_json(m.sm_clock_mhz)},
         {"mem_clock_mhz", results_json::number_json(m.mem_clock_mhz)},
         {"l2_flush", m.l2_flush}};
  // The fields only some writers record, written where they hold something.
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"torch_version", &m.torch_version},
                                   {"torch_cuda", &m.torch_cuda},
                                   {"cudnn_version", &m.cudnn_version},
                                   {"method", &m.method}})
    if (!value->empty()) j[key] = *value;
  return j;
}

void run_meta_from(const results_json::Reader& rd, const json& o, const std::string& where, sim::RunMeta& m) {
  m.gpu = rd.text(o, where, "gpu");
  m.driver = rd.text(o, where, "driver");
  m.cuda_runtime = rd.text(o, where, "cuda_runtime");
  m.commit = rd.text(o, where, "commit");
  m.flop_convention = rd.text(o, where, "flop_convention");
  m.date = rd.text(o, where, "date");
  m.host = rd.text(o, where, "host");
  m.sm_count = static_cast<int>(rd.whole(o, where, "sm_count", m.sm_count));
  m.l2_bytes = rd.whole(o, where, "l2_bytes", m.l2_bytes);
  m.sm_clock_mhz = rd.real(o, where, "sm_clock_mhz", m.sm_clock_mhz);
  m.mem_clock_mhz = rd.real(o, where, "mem_clock_mhz", m.mem_clock_mhz);
  m.l2_flush = rd.flag(o, where, "l2_flush", m.l2_flush);
  m.torch_version = rd.text(o, where, "torch_version");
  m.torch_cuda = rd.text(o, where, "torch_cuda");
  m.cudnn_version = rd.text(o, where, "cudnn_version");
  m.method = rd.text(o, where, "method");
}

namespace {

using results_json::fail;
using results_json::number_json;

constexpr const char* kFormat = "flashlab-bench/1";
// What a CSV that is not ours most likely is, and what reads it.
constexpr const char* kOwnTable = ": a table of your own measurements is checked by flashlab check ";

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c{
      "kernel", "model", "direction", "batch",  "heads",          "seq_q",       "seq_kv",
      "head_dim", "causal",  "dtype",          "br",             "bc",          "status",
      "reason", "time_ms_median", "time_ms_min", "time_ms_max",  "repeats",     "tflops",
      "tflops_exact", "gbps", "peak_memory_bytes", "predicted_memory_bytes", "rel_error",
      "ctas_per_sm", "heaviest_first", "dram_read_bytes", "dram_write_bytes", "l2_read_bytes", "l2_write_bytes",
      "counters_note", "predicted_dram_read_bytes", "predicted_dram_write_bytes", "o_accumulator", "dq_accumulator", "kv_heads", "dkv_accumulator",
      "mem_limit_bytes", "launch_host_us"};
  return c;
}

// Columns a file may lack: written since rows carried them, read as empty
// (their defaults) from older files.
bool optional_column(const std::string& c) {
  return c == "model" || c == "ctas_per_sm" || c == "heaviest_first" || c == "dram_read_bytes" ||
         c == "dram_write_bytes" || c == "l2_read_bytes" || c == "l2_write_bytes" || c == "counters_note" ||
         c == "predicted_dram_read_bytes" || c == "predicted_dram_write_bytes" || c == "o_accumulator" ||
         c == "dq_accumulator" || c == "kv_heads" || c == "dkv_accumulator" ||
         c == "mem_limit_bytes" || c == "launch_host_us";
}

// A whole number that may be empty (an optional column): `fallback` then.
i64 parse_int_or(const std::string& s, i64 fallback, const std::string& origin, const std::string& where);

double parse_double(const std::string& s, const std::string& origin, const std::string& where) {
  if (s.empty()) fail(origin, where, "empty, expected a number");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE) fail(origin, where, "'" + s + "' is not a number");
  return v;
}

i64 parse_int(const std::string& s, const std::string& origin, const std::string& where) {
  if (s.empty()) fail(origin, where, "empty, expected a whole number");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE) fail(origin, where, "'" + s + "' is not a whole number");
  return v;
}

i64 parse_int_or(const std::string& s, i64 fallback, const std::string& origin, const std::string& where) {
  return s.empty() ? fallback : parse_int(s, origin, where);
}

bool parse_bool(const std::string& s, const std::string& origin, const std::string& where) {
  if (s == "true") return true;
  if (s == "false") return false;
  fail(origin, where, "'" + s + "' is not true or false");
}

RunStatus parse_status(const std::string& s, const std::string& origin, const std::string& where) {
  if (const auto r = sim::parse_run_status(s)) return *r;
  fail(origin, where, "unknown status '" + s + "' (expected ok, OOM, skipped, failed)");
}

sim::DType parse_dtype_field(const std::string& s, const std::string& origin, const std::string& where) {
  const auto t = sim::parse_dtype(s);
  if (!t) fail(origin, where, "unknown dtype '" + s + "'");
  return *t;
}

// A measured quantity's cell: empty where the row holds its "not measured"
// default (0 for a time, rate or size; below 0 for an error or a counter).
std::string real_cell(double v) {
  if (!std::isfinite(v)) return sim::shortest(v);  // as measured: "inf", "nan"
  return v > 0 ? sim::shortest(v) : std::string();
}
std::string count_cell(i64 v) { return v > 0 ? std::to_string(v) : std::string(); }
std::string counter_cell(i64 v) { return v >= 0 ? std::to_string(v) : std::string(); }
std::string error_cell(double v) { return v >= 0 ? sim::shortest(v) : std::string(); }

// A row as (column, text) pairs: the one place that knows the schema.
std::vector<std::string> row_fields(const BenchRow& r) {
  const sim::AttentionProblem& p = r.problem;
  const bool ok = r.status == RunStatus::ok;
  return {r.kernel,
          r.model,
          r.direction,
          std::to_string(p.batch),
          std::to_string(p.heads),
          std::to_string(p.n_q()),
          std::to_string(p.n_kv()),
          std::to_string(p.head_dim),
          p.causal ? "true" : "false",
          std::string(sim::to_string(p.dtype)),
          count_cell(r.tiles.Br),  // empty: no tiles (PyTorch, a naive rung) or not known (a skipped row)
          count_cell(r.tiles.Bc),
          std::string(to_string(r.status)),
          r.reason,
          real_cell(r.time_ms_median),
          real_cell(r.time_ms_min),
          real_cell(r.time_ms_max),
          ok || r.repeats > 0 ? std::to_string(r.repeats) : std::string(),  // 0 on an ok row: checked only
          real_cell(r.tflops),
          real_cell(r.tflops_exact),
          real_cell(r.gbps),
          count_cell(r.peak_memory_bytes),
          count_cell(r.predicted_memory_bytes),
          error_cell(r.rel_error),
          count_cell(r.ctas_per_sm),
          r.heaviest_first ? "true" : "false",
          counter_cell(r.dram_read_bytes),
          counter_cell(r.dram_write_bytes),
          counter_cell(r.l2_read_bytes),
          counter_cell(r.l2_write_bytes),
          r.counters_note,
          counter_cell(r.predicted_dram_read_bytes),
          counter_cell(r.predicted_dram_write_bytes),
          r.storage.o_accumulator ? std::string(sim::to_string(*r.storage.o_accumulator)) : std::string(),
          r.storage.dq_accumulator ? std::string(sim::to_string(*r.storage.dq_accumulator)) : std::string(),
          std::to_string(p.h_kv()),
          r.storage.dkv_accumulator ? std::string(sim::to_string(*r.storage.dkv_accumulator)) : std::string(),
          count_cell(r.mem_limit_bytes),  // empty: the device's own memory
          real_cell(r.launch_host_us)};
}

// The inverse of row_fields; `get(column)` gives the text of a column.
BenchRow row_from(const std::function<std::string(const std::string&)>& get, const std::string& origin,
                  const std::string& where) {
  auto at = [&](const std::string& c) { return where + ", " + c; };
  BenchRow r;
  r.kernel = get("kernel");
  if (r.kernel.empty()) fail(origin, at("kernel"), "empty");
  r.model = get("model");
  r.direction = get("direction");
  sim::AttentionProblem& p = r.problem;
  p.batch = parse_int(get("batch"), origin, at("batch"));
  p.heads = parse_int(get("heads"), origin, at("heads"));
  p.seq_q = parse_int(get("seq_q"), origin, at("seq_q"));
  p.seq_kv = parse_int(get("seq_kv"), origin, at("seq_kv"));
  p.head_dim = parse_int(get("head_dim"), origin, at("head_dim"));
  p.causal = parse_bool(get("causal"), origin, at("causal"));
  p.dtype = parse_dtype_field(get("dtype"), origin, at("dtype"));
  r.tiles.Br = parse_int_or(get("br"), 0, origin, at("br"));
  r.tiles.Bc = parse_int_or(get("bc"), 0, origin, at("bc"));
  r.status = parse_status(get("status"), origin, at("status"));
  r.reason = get("reason");
  // Measured cells may be empty (not measured): the field keeps its default.
  auto real_or = [&](const char* c, double fallback) {
    const std::string s = get(c);
    return s.empty() ? fallback : parse_double(s, origin, at(c));
  };
  r.time_ms_median = real_or("time_ms_median", 0);
  r.time_ms_min = real_or("time_ms_min", 0);
  r.time_ms_max = real_or("time_ms_max", 0);
  r.repeats = static_cast<int>(parse_int_or(get("repeats"), 0, origin, at("repeats")));
  r.tflops = real_or("tflops", 0);
  r.tflops_exact = real_or("tflops_exact", 0);
  r.gbps = real_or("gbps", 0);
  r.peak_memory_bytes = parse_int_or(get("peak_memory_bytes"), 0, origin, at("peak_memory_bytes"));
  r.predicted_memory_bytes = parse_int_or(get("predicted_memory_bytes"), 0, origin, at("predicted_memory_bytes"));
  r.rel_error = real_or("rel_error", -1);
  r.ctas_per_sm = parse_int_or(get("ctas_per_sm"), 0, origin, at("ctas_per_sm"));
  const std::string heaviest = get("heaviest_first");
  r.heaviest_first = !heaviest.empty() && parse_bool(heaviest, origin, at("heaviest_first"));
  r.dram_read_bytes = parse_int_or(get("dram_read_bytes"), -1, origin, at("dram_read_bytes"));
  r.dram_write_bytes = parse_int_or(get("dram_write_bytes"), -1, origin, at("dram_write_bytes"));
  r.l2_read_bytes = parse_int_or(get("l2_read_bytes"), -1, origin, at("l2_read_bytes"));
  r.l2_write_bytes = parse_int_or(get("l2_write_bytes"), -1, origin, at("l2_write_bytes"));
  r.counters_note = get("counters_note");
  r.predicted_dram_read_bytes = parse_int_or(get("predicted_dram_read_bytes"), -1, origin, at("predicted_dram_read_bytes"));
  r.predicted_dram_write_bytes =
      parse_int_or(get("predicted_dram_write_bytes"), -1, origin, at("predicted_dram_write_bytes"));
  if (const std::string acc = get("o_accumulator"); !acc.empty())
    r.storage.o_accumulator = parse_dtype_field(acc, origin, at("o_accumulator"));
  if (const std::string acc = get("dq_accumulator"); !acc.empty())
    r.storage.dq_accumulator = parse_dtype_field(acc, origin, at("dq_accumulator"));
  p.kv_heads = parse_int_or(get("kv_heads"), 0, origin, at("kv_heads"));  // older files: H_kv = H
  if (const std::string acc = get("dkv_accumulator"); !acc.empty())
    r.storage.dkv_accumulator = parse_dtype_field(acc, origin, at("dkv_accumulator"));
  r.mem_limit_bytes = parse_int_or(get("mem_limit_bytes"), 0, origin, at("mem_limit_bytes"));  // older files: none
  r.launch_host_us = real_or("launch_host_us", 0);
  return r;
}

json meta_json(const BenchMeta& m) { return run_meta_json(m); }

BenchMeta meta_from(const json& j, const std::string& origin) {
  if (!j.is_object()) fail(origin, "meta", "expected an object");
  BenchMeta m;
  run_meta_from(results_json::Reader(origin), j, "meta", m);
  return m;
}

BenchResults from_json(const std::string& text, const std::string& origin) {
  json j = results_json::parse(text, origin);
  if (!j.is_object()) fail(origin, "top level", "expected an object");
  if (j.value("format", std::string()) != kFormat)
    fail(origin, "format", std::string("expected \"") + kFormat + "\"");
  BenchResults r;
  if (j.contains("meta")) r.meta = meta_from(j["meta"], origin);
  if (!j.contains("rows") || !j["rows"].is_array()) fail(origin, "rows", "missing or not a list");
  for (std::size_t k = 0; k < j["rows"].size(); ++k) {
    const json& row = j["rows"][k];
    const std::string where = "rows[" + std::to_string(k) + "]";
    if (!row.is_object()) fail(origin, where, "expected an object");
    auto get = [&](const std::string& c) -> std::string {
      if (!row.contains(c)) {
        if (optional_column(c)) return {};
        fail(origin, where, "missing \"" + c + "\"");
      }
      const json& v = row[c];
      if (v.is_null()) return {};  // not measured
      if (v.is_string()) return v.get<std::string>();
      if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
      if (v.is_number_integer()) return std::to_string(v.get<i64>());
      if (v.is_number()) return sim::shortest(v.get<double>());
      fail(origin, where + ", " + c, "unexpected value " + v.dump());
    };
    r.rows.push_back(row_from(get, origin, where));
  }
  return r;
}

BenchResults from_csv(const std::string& text, const std::string& origin) {
  BenchResults r;
  // Leading "# key: value" lines are the metadata, values as JSON literals.
  std::size_t pos = 0;
  json meta = json::object();
  int line = 0;
  bool format_seen = false;
  while (pos < text.size() && text[pos] == '#') {
    ++line;
    const std::size_t end = text.find('\n', pos);
    const std::string l = text.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    pos = end == std::string::npos ? text.size() : end + 1;
    const std::size_t colon = l.find(':');
    std::string key = colon == std::string::npos ? std::string() : l.substr(0, colon);
    key.erase(0, std::min(key.size(), key.find_first_not_of(' ')));
    // Results of flashlab bench name their format first: a file that does not
    // is someone's own table (a comment line over a header), not ours.
    if (line == 1 && key != "format")
      fail(origin, "line 1", std::string("not a results file of flashlab bench (those begin with '# format: \"") +
                                 kFormat + "\"' or with the header kernel,model,…)" + kOwnTable + origin);
    if (colon == std::string::npos) fail(origin, "line " + std::to_string(line), "expected '# key: value'");
    const std::string value = l.substr(colon + 1);
    json v;
    try {
      v = json::parse(value);
    } catch (const json::parse_error&) {
      fail(origin, "line " + std::to_string(line), "the value of '" + key + "' is not a JSON literal");
    }
    if (key == "format") {
      if (v != kFormat) fail(origin, "line " + std::to_string(line), std::string("expected format \"") + kFormat + "\"");
      format_seen = true;
    } else {
      meta[key] = v;
    }
  }
  // A CSV without metadata lines (bench_rows_to_csv) is the runs alone; one with
  // them names the format first.
  if (line > 0 && !format_seen) fail(origin, "line 1", std::string("expected '# format: \"") + kFormat + "\"'");
  r.meta = meta_from(meta, origin);
  const auto rows = csv_parse(text.substr(pos));
  if (rows.empty()) fail(origin, "line " + std::to_string(line + 1), "missing the header row");
  const std::vector<std::string>& header = rows.front();
  std::vector<int> index(columns().size(), -1);
  for (std::size_t c = 0; c < columns().size(); ++c)
    for (std::size_t h = 0; h < header.size(); ++h)
      if (header[h] == columns()[c]) index[c] = static_cast<int>(h);
  // Without a kernel column it is no file of ours missing a column: it is another table.
  if (std::find(header.begin(), header.end(), "kernel") == header.end()) {
    const bool semicolons = header.size() == 1 && header.front().find(';') != std::string::npos;
    fail(origin, "header", std::string("not a results file of flashlab bench or scripts/torch_compare.py (no kernel ") +
                               "column" + (semicolons ? "; its columns are separated by ';'" : "") + ")" + kOwnTable +
                               origin);
  }
  for (std::size_t c = 0; c < columns().size(); ++c)
    if (index[c] < 0 && !optional_column(columns()[c])) fail(origin, "header", "missing column '" + columns()[c] + "'");
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const auto& row = rows[k];
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    const std::string where = "data row " + std::to_string(k);
    auto get = [&](const std::string& c) -> std::string {
      for (std::size_t x = 0; x < columns().size(); ++x)
        if (columns()[x] == c) {
          if (index[x] < 0) return std::string();  // an optional column the file lacks
          const auto at = static_cast<std::size_t>(index[x]);
          if (at >= row.size()) fail(origin, where, "has " + std::to_string(row.size()) + " fields, too few");
          return row[at];
        }
      fail(origin, where, "unknown column '" + c + "'");
    };
    r.rows.push_back(row_from(get, origin, where));
  }
  return r;
}

}  // namespace

std::string bench_to_json(const BenchResults& r) {
  json rows = json::array();
  for (const BenchRow& row : r.rows) {
    const std::vector<std::string> f = row_fields(row);
    json o = json::object();
    for (std::size_t c = 0; c < columns().size(); ++c) {
      const std::string& name = columns()[c];
      // Text stays text; numbers become JSON numbers (non-finite ones stay "inf"/"nan").
      if (name == "kernel" || name == "model" || name == "direction" || name == "dtype" || name == "status" ||
          name == "reason" || name == "counters_note" || name == "o_accumulator" || name == "dq_accumulator" ||
          name == "dkv_accumulator") {
        o[name] = f[c];
      } else if (name == "causal") {
        o[name] = row.problem.causal;
      } else if (name == "heaviest_first") {
        o[name] = row.heaviest_first;
      } else if (f[c].empty()) {
        o[name] = nullptr;  // not measured
      } else if (f[c].find_first_of(".eEn") == std::string::npos) {
        o[name] = std::stoll(f[c]);
      } else {
        const double v = std::strtod(f[c].c_str(), nullptr);
        o[name] = number_json(v);
      }
    }
    rows.push_back(std::move(o));
  }
  json meta = meta_json(r.meta);
  json j{{"format", kFormat}, {"meta", std::move(meta)}, {"rows", std::move(rows)}};
  return j.dump(2) + "\n";
}

bool same_run(const BenchRow& a, const BenchRow& b) {
  return a.kernel == b.kernel && a.direction == b.direction && a.problem == b.problem && a.tiles == b.tiles &&
         a.mem_limit_bytes == b.mem_limit_bytes;
}

MergedResults merge_results(const std::vector<std::pair<std::string, BenchResults>>& files) {
  MergedResults m;
  std::vector<std::vector<double>> times;  // per kept row: the median times of its measured rows
  std::string first_gpu, first_origin;
  for (const auto& [origin, r] : files) {
    if (!r.meta.gpu.empty()) {
      if (first_gpu.empty()) {
        first_gpu = r.meta.gpu;
        first_origin = origin;
      } else if (r.meta.gpu != first_gpu) {
        throw std::runtime_error(origin + " was measured on " + r.meta.gpu + ", " + first_origin + " on " + first_gpu +
                                 ": a report draws one GPU's runs (give the files of one GPU)");
      }
    }
    if (&r == &files.front().second) m.results.meta = r.meta;
    // A merged file's sources stay its own: merging merged results keeps them all.
    const std::size_t first_source = m.results.sources.size();
    if (r.sources.empty()) m.results.sources.push_back({origin, r.meta, {}});
    else m.results.sources.insert(m.results.sources.end(), r.sources.begin(), r.sources.end());
    for (const BenchRow& row : r.rows) {
      const std::size_t src = first_source + (r.sources.empty() ? 0 : std::min(row.source, r.sources.size() - 1));
      std::vector<std::string>& kernels = m.results.sources[src].kernels;
      if (std::find(kernels.begin(), kernels.end(), row.kernel) == kernels.end()) kernels.push_back(row.kernel);
      const auto kept = std::find_if(m.results.rows.begin(), m.results.rows.end(),
                                     [&](const BenchRow& o) { return same_run(o, row); });
      if (kept != m.results.rows.end()) {
        ++m.repeats_dropped;
        if (row.status == RunStatus::ok && row.time_ms_median > 0)
          times[static_cast<std::size_t>(kept - m.results.rows.begin())].push_back(row.time_ms_median);
      } else {
        m.results.rows.push_back(row);
        m.results.rows.back().source = src;
        times.emplace_back();
        if (row.status == RunStatus::ok && row.time_ms_median > 0) times.back().push_back(row.time_ms_median);
      }
    }
  }
  for (std::size_t k = 0; k < times.size(); ++k) {
    if (times[k].size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(times[k].begin(), times[k].end());
    const DisagreeingRepeat d{m.results.rows[k], times[k].size(), *lo, *hi};
    if (d.spread() > kRepeatSpread) m.disagreeing.push_back(d);
  }
  std::stable_sort(m.disagreeing.begin(), m.disagreeing.end(),
                   [](const DisagreeingRepeat& a, const DisagreeingRepeat& b) { return a.spread() > b.spread(); });
  return m;
}

std::string bench_rows_to_csv(const BenchResults& r) {
  std::string out = csv_row(columns());
  for (const BenchRow& row : r.rows) out += csv_row(row_fields(row));
  return out;
}

std::string bench_to_csv(const BenchResults& r) {
  std::string out = std::string("# format: \"") + kFormat + "\"\n";
  json meta = meta_json(r.meta);  // items() refers into it: keep it alive through the loop
  for (const auto& [key, value] : meta.items()) out += "# " + key + ": " + value.dump() + "\n";
  return out + bench_rows_to_csv(r);
}

BenchResults bench_from_text(const std::string& text, const std::string& origin) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw std::runtime_error(origin + ": empty file");
  if (text[first] == '{') return from_json(text, origin);
  return from_csv(text.substr(first), origin);
}

BenchResults bench_from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  return bench_from_text(s.str(), path);
}

}  // namespace flashlab::analysis
