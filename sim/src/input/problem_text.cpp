#include "flashlab/sim/input/problem_text.hpp"

#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::sim {

namespace {

// A size parse_size refuses only for being past a 64-bit count ("99999999999999999999", "9000000T").
bool too_large(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  size_t pos = 0;
  while (pos < t.size() && (std::isdigit(static_cast<unsigned char>(t[pos])) || t[pos] == '.')) ++pos;
  if (pos == 0) return false;
  const auto unit = parse_size("1" + std::string(t.substr(pos)));
  const std::string number(t.substr(0, pos));
  char* end = nullptr;
  const long double value = std::strtold(number.c_str(), &end);
  return unit && end && *end == '\0' && value * static_cast<long double>(*unit) >= 9.2e18L;
}

}  // namespace

std::optional<i64> parse_positive(std::string_view name, std::string_view text, std::vector<std::string>& errors) {
  const auto v = parse_size(text);
  const std::string n(name), t(text);
  // "-5": a number, only not a positive one.
  const auto first = t.find_first_not_of(" \t");
  if (!v && first != std::string::npos && t[first] == '-' && parse_size(std::string_view(t).substr(first + 1))) {
    errors.push_back(n + ": must be at least 1 (got '" + t + "')");
    return std::nullopt;
  }
  if (!v && too_large(t)) {
    errors.push_back(n + ": '" + t + "' is too large (at most 9.2 × 10^18)");
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

namespace {

// parse_positive, its message kept with the field it is about (none: the
// tiles, the SRAM).
std::optional<i64> positive(std::vector<ProblemField> fields, std::string_view name, std::string_view text,
                            std::vector<ProblemError>& errors) {
  std::vector<std::string> why;
  const auto v = parse_positive(name, text, why);
  for (std::string& m : why) errors.push_back(ProblemError{fields, std::move(m)});
  return v;
}

}  // namespace

ParsedProblem parse_problem(const ProblemText& text, const ProblemFieldNames& names) {
  ParsedProblem out;
  std::vector<ProblemError>& errors = out.errors;
  const auto B = positive({ProblemField::batch}, names.batch, text.batch, errors);
  const auto H = positive({ProblemField::heads}, names.heads, text.heads, errors);
  const auto H_kv = text.kv_heads ? positive({ProblemField::kv_heads}, names.kv_heads, *text.kv_heads, errors) : H;
  const auto N = positive({ProblemField::seq}, names.seq, text.seq, errors);
  const auto N_kv = text.seq_kv ? positive({ProblemField::seq_kv}, names.seq_kv, *text.seq_kv, errors) : N;
  const auto d = positive({ProblemField::head_dim}, names.head_dim, text.head_dim, errors);
  const auto dtype = parse_dtype(text.dtype);
  if (!dtype)
    errors.push_back(ProblemError{{ProblemField::dtype},
                                  names.dtype + ": unknown dtype '" + text.dtype + "' (expected fp16, bf16 or fp32)"});
  i64 P = 1;
  bool gpus_ok = true;
  if (text.gpus) {
    const auto typed = positive({ProblemField::gpus}, names.gpus, *text.gpus, errors);
    gpus_ok = typed && *typed <= kMaxRingGpus;
    if (typed && !gpus_ok)
      errors.push_back(ProblemError{{ProblemField::gpus},
                                    "the ring needs 1 to " + std::to_string(kMaxRingGpus) + " GPUs, not " + *text.gpus});
    if (gpus_ok) P = *typed;
  }
  if (B && H && H_kv && N && N_kv && d && dtype && gpus_ok) {
    AttentionProblem& p = out.problem;
    p.batch = *B;
    p.heads = *H;
    if (text.kv_heads) p.kv_heads = *H_kv;
    p.seq_q = *N;
    p.seq_kv = *N_kv;
    p.head_dim = *d;
    p.dtype = *dtype;
    p.causal = text.causal;
    if (text.gpus) p.parallel = ParallelPart{static_cast<int>(P), text.layout, text.passes};
    for (ProblemError& e : validate(p)) errors.push_back(std::move(e));
  }
  std::vector<std::string> tile_errors;
  if (text.br.has_value() != text.bc.has_value()) {
    tile_errors.push_back(names.br + " and " + names.bc + " go together (give both or neither)");
  } else if (text.br) {
    const auto br = parse_positive(names.br, *text.br, tile_errors);
    const auto bc = parse_positive(names.bc, *text.bc, tile_errors);
    if (br && bc) out.options.tiles = TileShape{*br, *bc};
  }
  if (text.sram) {
    // A what-if may give an SM far more than any has (228 KiB on an H100), not
    // more than 1 GiB: beyond it every tile rule's block outgrows any sequence.
    constexpr i64 kMostSram = i64{1} << 30;
    if (const auto M = parse_positive(names.sram, *text.sram, tile_errors)) {
      if (*M > kMostSram)
        tile_errors.push_back(names.sram + ": '" + *text.sram + "' is more than 1 GiB of SRAM per SM (an H100 has 228 KiB)");
      else
        out.options.sram_bytes = *M;
    }
  }
  for (std::string& m : tile_errors) errors.push_back(ProblemError{{}, std::move(m)});
  return out;
}

}  // namespace flashlab::sim
