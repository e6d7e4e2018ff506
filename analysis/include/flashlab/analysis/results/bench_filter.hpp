// Which rows of a result set a bench chart shows: what varies across the rows,
// the distinct values of each parameter, and a filter that fixes some of them,
// with its small query language ("batch=32,causal=yes").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"

namespace flashlab::analysis {

// What varies across the rows of a result set.
enum class BenchAxis { seq, batch, heads, head_dim, causal, none };
std::string_view to_string(BenchAxis a);
BenchAxis bench_x_axis(const BenchResults& r);  // seq first, then batch, heads, head_dim, causal

// Which rows a bench chart shows: a value per parameter, or any (unset). A
// chart of every configuration at once (kernels × batch × causal × ...) is
// unreadable; the lab reports fix all but one parameter.
struct BenchFilter {
  std::optional<sim::i64> batch, heads, head_dim, seq;
  std::optional<sim::i64> emb_dim;   // H·d, the labs' embedding dim
  std::optional<sim::i64> kv_heads;  // H_kv (grouped-query attention; = H without groups)
  std::optional<bool> causal;
  std::optional<sim::DType> dtype;
  bool matches(const BenchRow& r) const;
  bool any() const { return batch || heads || head_dim || seq || emb_dim || kv_heads || causal || dtype; }
};
// Every parameter that varies, except the x axis (and `keep`), fixed to its
// first value in the results.
BenchFilter default_bench_filter(const BenchResults& r, BenchAxis keep = BenchAxis::none);
// The keys of the filter's query language, one list: the parser reads it, and
// its error and the CLI's help name the keys from it, so none can differ.
struct BenchFilterKey {
  std::string_view name;                  // "head-dim"
  std::vector<std::string_view> aliases;  // also accepted: "head_dim", "d"
  std::string_view also;                  // what the help adds after the name: "= heads · head-dim"; "" none
  void (*set)(BenchFilter& f, const std::string& key, const std::string& value);  // throws std::invalid_argument
};
const std::vector<BenchFilterKey>& bench_filter_keys();
// "batch, seq (or n), heads, kv-heads, head-dim, emb-dim = heads · head-dim, causal, dtype"
std::string bench_filter_key_list();
// "batch=32,seq=1024,causal=yes,heads=16,head-dim=64,emb-dim=2048,kv-heads=8,dtype=bf16";
// "" is no filter. Throws std::invalid_argument with a one-line reason.
BenchFilter parse_bench_filter(const std::string& text);
// Why `f` selects no run of `r` — "no run has batch 48 (batch in the results:
// 16, 32, 64)", or the keys that exclude each other — or "" when some run matches.
std::string filter_misses(const BenchResults& r, const BenchFilter& f);
std::string describe(const BenchFilter& f);  // "batch 32, causal"; "" when none
// The distinct values of each parameter in the results, for pickers.
struct BenchValues {
  std::vector<sim::i64> batch, heads, head_dim, seq;
  std::vector<bool> causal;
  std::vector<sim::DType> dtype;
};
BenchValues bench_values(const BenchResults& r);
// Heads and head dim swept together at one embedding dim (the labs' heads
// sweep: d = E / H): E when every row has H·d = E and H varies, else nullopt.
// A chart along one of the two then does not fix or split by the other.
std::optional<sim::i64> shared_emb_dim(const BenchResults& r);
// Batch and sequence length swept together at one token count (a
// constant-token grid: B·N = T, batch 16 at N 1K, 1 at 16K): T when every row
// has B·N = T and N varies, else nullopt. A chart along N then does not fix
// or split by batch: the batch follows N.
std::optional<sim::i64> shared_tokens(const BenchResults& r);

}  // namespace flashlab::analysis
