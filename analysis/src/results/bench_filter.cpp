// The result-filter query language and what it filters on: which parameters
// vary across a result set, their distinct values, the default filter (all but
// the x axis fixed) and "batch=32,causal=yes" parsed and described.
#include "flashlab/analysis/results/bench_filter.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>

#include "flashlab/sim/core/closest_name.hpp"
#include "flashlab/sim/core/format.hpp"

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
         (!head_dim || r.problem.head_dim == *head_dim) && (!seq || r.problem.seq_q == *seq) &&
         (!emb_dim || r.problem.heads * r.problem.head_dim == *emb_dim) &&
         (!kv_heads || r.problem.h_kv() == *kv_heads) && (!causal || r.problem.causal == *causal) &&
         (!dtype || r.problem.dtype == *dtype);
}

BenchFilter default_bench_filter(const BenchResults& r, BenchAxis keep) {
  const BenchAxis x = bench_x_axis(r);
  const BenchValues v = bench_values(r);
  auto fixed = [&](BenchAxis a, size_t distinct) { return distinct > 1 && a != x && a != keep; };
  const bool emb = shared_emb_dim(r).has_value();  // heads and d swept together: the x axis takes both
  const bool tokens = shared_tokens(r).has_value();  // batch and N swept together: the batch follows N
  // The filter that fixes every varying parameter to the values of `row`.
  auto filter_of = [&](const BenchRow& row) {
    BenchFilter f;
    if (fixed(BenchAxis::batch, v.batch.size()) && !(x == BenchAxis::seq && tokens)) f.batch = row.problem.batch;
    if (fixed(BenchAxis::heads, v.heads.size()) && !(x == BenchAxis::head_dim && emb)) f.heads = row.problem.heads;
    if (fixed(BenchAxis::head_dim, v.head_dim.size()) && !(x == BenchAxis::heads && emb)) f.head_dim = row.problem.head_dim;
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

namespace {
sim::i64 filter_number(const std::string& key, const std::string& value) {
  const auto n = sim::parse_size(value);
  if (!n || *n < 1) throw std::invalid_argument("filter " + key + ": '" + value + "' is not a positive whole number");
  return *n;
}

template <class T, class Key>
std::string values_of(const BenchResults& r, Key key) {
  std::set<T> seen;
  for (const BenchRow& row : r.rows) seen.insert(key(row));
  std::string s;
  for (const T& v : seen) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}
}  // namespace

namespace {
// The one value of a product every row shares while one of its factors takes
// more than one: a grid that trades one dimension for another.
template <class Product, class Factor>
std::optional<sim::i64> shared_product(const BenchResults& r, Product product, Factor factor) {
  std::set<sim::i64> products, factors;
  for (const BenchRow& row : r.rows) {
    products.insert(product(row.problem));
    factors.insert(factor(row.problem));
  }
  if (products.size() == 1 && factors.size() > 1) return *products.begin();
  return std::nullopt;
}
}  // namespace

std::optional<sim::i64> shared_emb_dim(const BenchResults& r) {
  return shared_product(r, [](const sim::AttentionProblem& p) { return p.heads * p.head_dim; },
                        [](const sim::AttentionProblem& p) { return p.heads; });
}

std::optional<sim::i64> shared_tokens(const BenchResults& r) {
  return shared_product(r, [](const sim::AttentionProblem& p) { return p.batch * p.seq_q; },
                        [](const sim::AttentionProblem& p) { return p.seq_q; });
}

std::string filter_misses(const BenchResults& r, const BenchFilter& f) {
  for (const BenchRow& row : r.rows)
    if (f.matches(row)) return "";
  if (r.rows.empty()) return "the results hold no run";
  // A key no run has at all: name it and the values there are.
  struct Key {
    bool set;
    const char* name;
    std::string wanted;
    std::function<bool(const BenchRow&)> has;
    std::function<std::string()> present;
  };
  using sim::i64;
  const auto n = [](const std::optional<i64>& v) { return v ? std::to_string(*v) : std::string(); };
  const std::vector<Key> keys{
      {f.batch.has_value(), "batch", n(f.batch), [&](const BenchRow& x) { return x.problem.batch == *f.batch; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.batch; }); }},
      {f.seq.has_value(), "seq", n(f.seq), [&](const BenchRow& x) { return x.problem.seq_q == *f.seq; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.seq_q; }); }},
      {f.heads.has_value(), "heads", n(f.heads), [&](const BenchRow& x) { return x.problem.heads == *f.heads; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.heads; }); }},
      {f.kv_heads.has_value(), "kv-heads", n(f.kv_heads), [&](const BenchRow& x) { return x.problem.h_kv() == *f.kv_heads; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.h_kv(); }); }},
      {f.head_dim.has_value(), "head-dim", n(f.head_dim),
       [&](const BenchRow& x) { return x.problem.head_dim == *f.head_dim; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.head_dim; }); }},
      {f.emb_dim.has_value(), "emb-dim", n(f.emb_dim),
       [&](const BenchRow& x) { return x.problem.heads * x.problem.head_dim == *f.emb_dim; },
       [&] { return values_of<i64>(r, [](const BenchRow& x) { return x.problem.heads * x.problem.head_dim; }); }},
      {f.causal.has_value(), "causal", f.causal ? (*f.causal ? "yes" : "no") : "",
       [&](const BenchRow& x) { return x.problem.causal == *f.causal; },
       [&] { return std::string("only ") + (*f.causal ? "non-causal" : "causal") + " runs"; }},
      {f.dtype.has_value(), "dtype", f.dtype ? std::string(sim::to_string(*f.dtype)) : "",
       [&](const BenchRow& x) { return x.problem.dtype == *f.dtype; }, [&] {
         std::set<std::string> t;
         for (const BenchRow& x : r.rows) t.insert(std::string(sim::to_string(x.problem.dtype)));
         std::string s;
         for (const std::string& v : t) s += (s.empty() ? "" : ", ") + v;
         return s;
       }}};
  std::string given;
  for (const Key& k : keys) {
    if (!k.set) continue;
    given += (given.empty() ? "" : ", ") + std::string(k.name) + "=" + k.wanted;
    if (std::none_of(r.rows.begin(), r.rows.end(), k.has))
      return std::string("no run has ") + k.name + " " + k.wanted + " (" +
             (std::string(k.name) == "causal" ? k.present() : k.name + std::string(" in the results: ") + k.present()) +
             ")";
  }
  return "no run has " + given + " together (each alone matches some run)";
}

const std::vector<BenchFilterKey>& bench_filter_keys() {
  using K = const std::string&;
  static const std::vector<BenchFilterKey> keys{
      {"batch", {"b"}, "", [](BenchFilter& f, K k, K v) { f.batch = filter_number(k, v); }},
      {"seq", {"n"}, "", [](BenchFilter& f, K k, K v) { f.seq = filter_number(k, v); }},
      {"heads", {"h"}, "", [](BenchFilter& f, K k, K v) { f.heads = filter_number(k, v); }},
      {"kv-heads", {"kv_heads"}, "", [](BenchFilter& f, K k, K v) { f.kv_heads = filter_number(k, v); }},
      {"head-dim", {"head_dim", "d"}, "", [](BenchFilter& f, K k, K v) { f.head_dim = filter_number(k, v); }},
      {"emb-dim", {"emb_dim"}, "= heads · head-dim", [](BenchFilter& f, K k, K v) { f.emb_dim = filter_number(k, v); }},
      {"causal", {}, "", [](BenchFilter& f, K, K v) {
         if (v == "yes" || v == "true" || v == "1") f.causal = true;
         else if (v == "no" || v == "false" || v == "0") f.causal = false;
         else throw std::invalid_argument("filter causal: '" + v + "' must be yes or no");
       }},
      {"dtype", {}, "", [](BenchFilter& f, K, K v) {
         const auto d = sim::parse_dtype(v);
         if (!d) throw std::invalid_argument("filter dtype: '" + v + "' must be fp16, bf16 or fp32");
         f.dtype = *d;
       }}};
  return keys;
}

std::string bench_filter_key_list() {
  std::string s;
  for (const BenchFilterKey& k : bench_filter_keys()) {
    s += (s.empty() ? "" : ", ") + std::string(k.name);
    // A one-letter alias is the paper's name (n, d): said; the underscore spellings are not.
    std::string short_names;
    for (std::string_view a : k.aliases)
      if (a.size() == 1 && a != "b" && a != "h") short_names += (short_names.empty() ? "" : " or ") + std::string(a);
    if (!short_names.empty()) s += " (or " + short_names + ")";
    if (!k.also.empty()) s += " " + std::string(k.also);
  }
  return s;
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
      throw std::invalid_argument("filter '" + item + "' must look like batch=32 (keys: " + bench_filter_key_list() + ")");
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    const auto& keys = bench_filter_keys();
    const auto key = std::find_if(keys.begin(), keys.end(), [&](const BenchFilterKey& x) {
      return x.name == k || std::find(x.aliases.begin(), x.aliases.end(), k) != x.aliases.end();
    });
    if (key == keys.end()) {
      std::vector<std::string> names;
      for (const BenchFilterKey& x : keys) names.emplace_back(x.name);
      throw std::invalid_argument("unknown filter key '" + k + "' (expected " + bench_filter_key_list() + ")" +
                                  sim::did_you_mean(k, names));
    }
    key->set(f, k, v);
  }
  return f;
}

std::string describe(const BenchFilter& f) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (f.batch) add("batch " + std::to_string(*f.batch));
  if (f.seq) add("N " + std::to_string(*f.seq));
  if (f.heads) add(std::to_string(*f.heads) + " heads");
  if (f.head_dim) add("d " + std::to_string(*f.head_dim));
  if (f.emb_dim) add("emb dim " + std::to_string(*f.emb_dim));
  if (f.kv_heads) add(std::to_string(*f.kv_heads) + " K/V heads");
  if (f.causal) add(*f.causal ? "causal" : "non-causal");
  if (f.dtype) add(std::string(sim::to_string(*f.dtype)));
  return s;
}

}  // namespace flashlab::analysis
