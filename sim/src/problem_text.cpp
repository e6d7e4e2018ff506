#include "flashlab/sim/problem_text.hpp"

#include "flashlab/sim/format.hpp"

namespace flashlab::sim {

std::optional<i64> parse_positive(std::string_view name, std::string_view text, std::vector<std::string>& errors) {
  const auto v = parse_size(text);
  const std::string n(name), t(text);
  // "-5": a number, only not a positive one.
  const auto first = t.find_first_not_of(" \t");
  if (!v && first != std::string::npos && t[first] == '-' && parse_size(std::string_view(t).substr(first + 1))) {
    errors.push_back(n + ": must be at least 1 (got '" + t + "')");
    return std::nullopt;
  }
  if (!v) {
    errors.push_back(n + ": '" + t + "' is not a whole number (examples: 1024, 16K, 100KiB)");
    return std::nullopt;
  }
  if (*v < 1) {
    errors.push_back(n + ": must be at least 1 (got '" + t + "')");
    return std::nullopt;
  }
  return v;
}

ParsedProblem parse_problem(const ProblemText& text, const ProblemFieldNames& names) {
  ParsedProblem out;
  std::vector<std::string>& errors = out.errors;
  const auto B = parse_positive(names.batch, text.batch, errors);
  const auto H = parse_positive(names.heads, text.heads, errors);
  const auto N = parse_positive(names.seq, text.seq, errors);
  const auto N_kv = text.seq_kv ? parse_positive(names.seq_kv, *text.seq_kv, errors) : N;
  const auto d = parse_positive(names.head_dim, text.head_dim, errors);
  const auto dtype = parse_dtype(text.dtype);
  if (!dtype) errors.push_back(names.dtype + ": unknown dtype '" + text.dtype + "' (expected fp16, bf16 or fp32)");
  if (B && H && N && N_kv && d && dtype) {
    AttentionProblem& p = out.problem;
    p.batch = *B;
    p.heads = *H;
    p.seq_q = *N;
    p.seq_kv = *N_kv;
    p.head_dim = *d;
    p.dtype = *dtype;
    p.causal = text.causal;
    for (const std::string& e : validate(p)) errors.push_back(e);
  }
  if (text.br.has_value() != text.bc.has_value()) {
    errors.push_back(names.br + " and " + names.bc + " go together (give both or neither)");
  } else if (text.br) {
    const auto br = parse_positive(names.br, *text.br, errors);
    const auto bc = parse_positive(names.bc, *text.bc, errors);
    if (br && bc) out.options.tiles = TileShape{*br, *bc};
  }
  if (text.sram) {
    if (const auto M = parse_positive(names.sram, *text.sram, errors)) out.options.sram_bytes = *M;
  }
  return out;
}

}  // namespace flashlab::sim
