// Benchmark results as JSON and CSV. One schema, two encodings: the CSV
// columns and the JSON row keys have the same names (docs/kernels.md lists
// them), so a reader of one can read the other.
//
//   JSON  {"format": "flashlab-bench/1", "meta": {...}, "rows": [{...}, ...]}
//   CSV   "# format: \"flashlab-bench/1\"", then "# key: JSON value" per
//         metadata field, then a header row and one row per result.
//
// Numbers round-trip exactly (shortest representation that reads back to the
// same double); ±inf and NaN are written "inf", "-inf", "nan" in both.
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
  return json{{"gpu", m.gpu},
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
}

namespace {

using results_json::fail;
using results_json::number_json;

constexpr const char* kFormat = "flashlab-bench/1";

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

// A row as (column, text) pairs: the one place that knows the schema.
std::vector<std::string> row_fields(const BenchRow& r) {
  const sim::AttentionProblem& p = r.problem;
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
          std::to_string(r.tiles.Br),
          std::to_string(r.tiles.Bc),
          std::string(to_string(r.status)),
          r.reason,
          sim::shortest(r.time_ms_median),
          sim::shortest(r.time_ms_min),
          sim::shortest(r.time_ms_max),
          std::to_string(r.repeats),
          sim::shortest(r.tflops),
          sim::shortest(r.tflops_exact),
          sim::shortest(r.gbps),
          std::to_string(r.peak_memory_bytes),
          std::to_string(r.predicted_memory_bytes),
          sim::shortest(r.rel_error),
          std::to_string(r.ctas_per_sm),
          r.heaviest_first ? "true" : "false",
          std::to_string(r.dram_read_bytes),
          std::to_string(r.dram_write_bytes),
          std::to_string(r.l2_read_bytes),
          std::to_string(r.l2_write_bytes),
          r.counters_note,
          std::to_string(r.predicted_dram_read_bytes),
          std::to_string(r.predicted_dram_write_bytes),
          r.storage.o_accumulator ? std::string(sim::to_string(*r.storage.o_accumulator)) : std::string(),
          r.storage.dq_accumulator ? std::string(sim::to_string(*r.storage.dq_accumulator)) : std::string(),
          std::to_string(p.h_kv()),
          r.storage.dkv_accumulator ? std::string(sim::to_string(*r.storage.dkv_accumulator)) : std::string(),
          std::to_string(r.mem_limit_bytes),
          sim::shortest(r.launch_host_us)};
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
  r.tiles.Br = parse_int(get("br"), origin, at("br"));
  r.tiles.Bc = parse_int(get("bc"), origin, at("bc"));
  r.status = parse_status(get("status"), origin, at("status"));
  r.reason = get("reason");
  r.time_ms_median = parse_double(get("time_ms_median"), origin, at("time_ms_median"));
  r.time_ms_min = parse_double(get("time_ms_min"), origin, at("time_ms_min"));
  r.time_ms_max = parse_double(get("time_ms_max"), origin, at("time_ms_max"));
  r.repeats = static_cast<int>(parse_int(get("repeats"), origin, at("repeats")));
  r.tflops = parse_double(get("tflops"), origin, at("tflops"));
  r.tflops_exact = parse_double(get("tflops_exact"), origin, at("tflops_exact"));
  r.gbps = parse_double(get("gbps"), origin, at("gbps"));
  r.peak_memory_bytes = parse_int(get("peak_memory_bytes"), origin, at("peak_memory_bytes"));
  r.predicted_memory_bytes = parse_int(get("predicted_memory_bytes"), origin, at("predicted_memory_bytes"));
  r.rel_error = parse_double(get("rel_error"), origin, at("rel_error"));
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
  if (const std::string h = get("launch_host_us"); !h.empty()) r.launch_host_us = parse_double(h, origin, at("launch_host_us"));
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
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(origin + ": not valid JSON: " + e.what());
  }
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
    if (colon == std::string::npos) fail(origin, "line " + std::to_string(line), "expected '# key: value'");
    std::string key = l.substr(0, colon);
    key.erase(0, key.find_first_not_of(' '));
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
      } else if (f[c].find_first_of(".eEn") == std::string::npos) {
        o[name] = std::stoll(f[c]);
      } else {
        const double v = std::strtod(f[c].c_str(), nullptr);
        o[name] = number_json(v);
      }
    }
    rows.push_back(std::move(o));
  }
  json j{{"format", kFormat}, {"meta", meta_json(r.meta)}, {"rows", std::move(rows)}};
  return j.dump(2) + "\n";
}

bool same_run(const BenchRow& a, const BenchRow& b) {
  return a.kernel == b.kernel && a.direction == b.direction && a.problem == b.problem && a.tiles == b.tiles &&
         a.mem_limit_bytes == b.mem_limit_bytes;
}

MergedResults merge_results(const std::vector<std::pair<std::string, BenchResults>>& files) {
  MergedResults m;
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
    for (const BenchRow& row : r.rows) {
      const bool again = std::any_of(m.results.rows.begin(), m.results.rows.end(),
                                     [&](const BenchRow& o) { return same_run(o, row); });
      if (again) ++m.repeats_dropped;
      else m.results.rows.push_back(row);
    }
  }
  return m;
}

std::string bench_rows_to_csv(const BenchResults& r) {
  std::string out = csv_row(columns());
  for (const BenchRow& row : r.rows) out += csv_row(row_fields(row));
  return out;
}

std::string bench_to_csv(const BenchResults& r) {
  std::string out = std::string("# format: \"") + kFormat + "\"\n";
  const json meta = meta_json(r.meta);  // items() refers into it: keep it alive through the loop
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
