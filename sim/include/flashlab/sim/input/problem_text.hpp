// An attention problem as a person types it — the window's text fields (the
// one-GPU controls and the ring's), the command line's flags — parsed and
// checked once, with the same messages for every front end. Only the names of
// the fields differ ("--seq", "sequence length N").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/memory/simulate.hpp"

namespace flashlab::sim {

// Sizes take suffixes ("16K", "100KiB"; see parse_size).
struct ProblemText {
  std::string batch = "1", heads = "1", seq = "1024", head_dim = "64";
  std::optional<std::string> seq_kv;    // unset: the same as seq
  std::optional<std::string> kv_heads;  // unset: as many as heads
  std::string dtype = "fp16";
  bool causal = false;
  std::optional<std::string> sram;    // SRAM per SM; unset: the hardware's
  std::optional<std::string> br, bc;  // tiles; unset: the paper's rule; one without the other is an error
  // The parallel part: set, the sequence is cut over this many GPUs in a ring.
  std::optional<std::string> gpus;
  RingLayout layout = RingLayout::zigzag;
  PassSelection passes = PassSelection::fwd;  // the ring's passes (validate() refuses bwd alone)
};

// What each field is called in messages.
struct ProblemFieldNames {
  std::string batch, heads, seq, seq_kv, head_dim, dtype, sram, br, bc;
  std::string kv_heads = "key/value heads H_kv", gpus = "GPUs P";
};

// A field's text that is not a usable whole number, or a reason of
// validate(): the message names the field, `fields` say which.
struct ParsedProblem {
  AttentionProblem problem;  // meaningful when ok()
  SimOptions options;        // the tiles and SRAM override given, if any
  // Every problem found, in the order of the fields (batch, heads, kv_heads,
  // seq, seq_kv, head_dim, dtype, gpus, then validate(problem), then the
  // tiles, then the SRAM size), one sentence each naming the field. The
  // tiles' and the SRAM's errors name no problem field.
  std::vector<ProblemError> errors;
  bool ok() const { return errors.empty(); }
  std::vector<std::string> messages() const { return sim::messages(errors); }
  // The first message (ok() must be false).
  const std::string& first() const { return errors.front().message; }
};

ParsedProblem parse_problem(const ProblemText& text, const ProblemFieldNames& names);

// A whole number ≥ 1 with an optional suffix. On failure appends
// "NAME: 'TEXT' is not a whole number (examples: 1024, 16K, 100KiB)" or
// "NAME: must be at least 1 (got 'TEXT')" to `errors` and returns nullopt.
std::optional<i64> parse_positive(std::string_view name, std::string_view text, std::vector<std::string>& errors);

}  // namespace flashlab::sim
