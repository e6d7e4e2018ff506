// The result-filter query language and what it filters on: which parameters
// vary across a result set, their distinct values, the default filter (all but
// the x axis fixed) and "batch=32,causal=yes" parsed and described.
#include "flashlab/analysis/bench_filter.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "flashlab/sim/format.hpp"

namespace flashlab::analysis {

std::string_view to_string(BenchAxis a) {
  switch (a) {
    case BenchAxis::seq: return "seq";
    case BenchAxis::batch: return "batch";
    case BenchAxis::heads: return "heads";
    case BenchAxis::head_dim: return "head-dim";
    case BenchAxis::causal: return "causal";
    case BenchAxis::none: return "none";
  }
  return "none";
}

BenchValues bench_values(const BenchResults& r) {
  std::set<sim::i64> b, h, d, n;
  std::set<bool> c;
  std::set<int> t;
  for (const BenchRow& row : r.rows) {
    b.insert(row.problem.batch);
    h.insert(row.problem.heads);
    d.insert(row.problem.head_dim);
    n.insert(row.problem.seq_q);
    c.insert(row.problem.causal);
    t.insert(static_cast<int>(row.problem.dtype));
  }
  BenchValues v{{b.begin(), b.end()}, {h.begin(), h.end()}, {d.begin(), d.end()}, {n.begin(), n.end()}, {c.begin(), c.end()}, {}};
  for (int x : t) v.dtype.push_back(static_cast<sim::DType>(x));
  return v;
}

BenchAxis bench_x_axis(const BenchResults& r) {
  const BenchValues v = bench_values(r);
  if (v.seq.size() > 1) return BenchAxis::seq;
  if (v.batch.size() > 1) return BenchAxis::batch;
  if (v.heads.size() > 1) return BenchAxis::heads;
  if (v.head_dim.size() > 1) return BenchAxis::head_dim;
  if (v.causal.size() > 1) return BenchAxis::causal;
  return BenchAxis::none;
}

bool BenchFilter::matches(const BenchRow& r) const {
  return (!batch || r.problem.batch == *batch) && (!heads || r.problem.heads == *heads) &&
         (!head_dim || r.problem.head_dim == *head_dim) && (!causal || r.problem.causal == *causal) &&
         (!dtype || r.problem.dtype == *dtype);
}

BenchFilter default_bench_filter(const BenchResults& r, BenchAxis keep) {
  const BenchAxis x = bench_x_axis(r);
  const BenchValues v = bench_values(r);
  auto fixed = [&](BenchAxis a, size_t distinct) { return distinct > 1 && a != x && a != keep; };
  // The filter that fixes every varying parameter to the values of `row`.
  auto filter_of = [&](const BenchRow& row) {
    BenchFilter f;
    if (fixed(BenchAxis::batch, v.batch.size())) f.batch = row.problem.batch;
    if (fixed(BenchAxis::heads, v.heads.size())) f.heads = row.problem.heads;
    if (fixed(BenchAxis::head_dim, v.head_dim.size())) f.head_dim = row.problem.head_dim;
    if (fixed(BenchAxis::causal, v.causal.size())) f.causal = row.problem.causal;
    if (v.dtype.size() > 1) f.dtype = row.problem.dtype;
    return f;
  };
  // A merged result set (several lab sweeps in one file) holds only some
  // combinations: fixing each parameter to its first value may match nothing.
  // Take the combination of some row that shows the most rows; the first such.
  BenchFilter best;
  size_t best_count = 0;
  for (const BenchRow& row : r.rows) {
    const BenchFilter f = filter_of(row);
    const size_t n = static_cast<size_t>(
        std::count_if(r.rows.begin(), r.rows.end(), [&](const BenchRow& o) { return f.matches(o); }));
    if (n > best_count) {
      best = f;
      best_count = n;
    }
  }
  return best;
}

BenchFilter parse_bench_filter(const std::string& text) {
  BenchFilter f;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("filter '" + item + "' must look like batch=32 (keys: batch, heads, head-dim, causal, dtype)");
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    auto number = [&] {
      const auto n = sim::parse_size(v);
      if (!n || *n < 1) throw std::invalid_argument("filter " + k + ": '" + v + "' is not a positive whole number");
      return *n;
    };
    if (k == "batch" || k == "b") f.batch = number();
    else if (k == "heads" || k == "h") f.heads = number();
    else if (k == "head-dim" || k == "head_dim" || k == "d") f.head_dim = number();
    else if (k == "causal") {
      if (v == "yes" || v == "true" || v == "1") f.causal = true;
      else if (v == "no" || v == "false" || v == "0") f.causal = false;
      else throw std::invalid_argument("filter causal: '" + v + "' must be yes or no");
    } else if (k == "dtype") {
      const auto d = sim::parse_dtype(v);
      if (!d) throw std::invalid_argument("filter dtype: '" + v + "' must be fp16, bf16 or fp32");
      f.dtype = *d;
    } else {
      throw std::invalid_argument("unknown filter key '" + k + "' (expected batch, heads, head-dim, causal, dtype)");
    }
  }
  return f;
}

std::string describe(const BenchFilter& f) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (f.batch) add("batch " + std::to_string(*f.batch));
  if (f.heads) add(std::to_string(*f.heads) + " heads");
  if (f.head_dim) add("d " + std::to_string(*f.head_dim));
  if (f.causal) add(*f.causal ? "causal" : "non-causal");
  if (f.dtype) add(std::string(sim::to_string(*f.dtype)));
  return s;
}

}  // namespace flashlab::analysis
