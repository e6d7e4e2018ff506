#include "common.hpp"

namespace flashlab::cli {

void add_problem_flags(CLI::App& app, ProblemFlags& f, bool with_tiles) {
  app.add_option("-b,--batch", f.batch, "batch size B")->capture_default_str();
  app.add_option("--heads", f.heads, "heads H")->capture_default_str();
  app.add_option("-n,--seq", f.seq, "sequence length N (suffixes: 16K = 16384)")->capture_default_str();
  app.add_option("--seq-kv", f.seq_kv, "key/value length (default: N; non-causal only)");
  app.add_option("-d,--head-dim", f.head_dim, "head dimension d")->capture_default_str();
  app.add_option("--dtype", f.dtype, "fp16 | bf16 | fp32")->capture_default_str();
  app.add_flag("--causal", f.causal, "causal mask (blocks above the diagonal are skipped by FlashAttention)");
  if (with_tiles) {
    app.add_option("--br", f.br, "B_r, rows of a Q_i block (default: the paper's rule)");
    app.add_option("--bc", f.bc, "B_c, rows of a K_j block (default: the paper's rule)");
  }
  app.add_option("--sram", f.sram, "SRAM bytes per SM, M (default: the preset's; suffixes: 100KiB)");
  app.add_option("--hw", f.hw, "hardware preset (flashlab hw list) or a JSON file")->capture_default_str();
}

sim::i64 parse_positive(const std::string& flag, const std::string& value) {
  const auto v = sim::parse_size(value);
  if (!v) throw UsageError(flag + ": '" + value + "' is not a whole number (examples: 1024, 16K, 100KiB)");
  if (*v < 1) throw UsageError(flag + ": must be at least 1 (got '" + value + "')");
  return *v;
}

sim::HardwareModel load_hw(const std::string& name) {
  try {
    return sim::load_hardware(name);
  } catch (const sim::HardwareError& e) {
    throw UsageError(std::string("--hw: ") + e.what());
  }
}

Resolved resolve(const ProblemFlags& f) {
  Resolved r;
  sim::AttentionProblem& p = r.problem;
  p.batch = parse_positive("--batch", f.batch);
  p.heads = parse_positive("--heads", f.heads);
  p.seq_q = parse_positive("--seq", f.seq);
  p.seq_kv = f.seq_kv.empty() ? p.seq_q : parse_positive("--seq-kv", f.seq_kv);
  p.head_dim = parse_positive("--head-dim", f.head_dim);
  const auto dt = sim::parse_dtype(f.dtype);
  if (!dt) throw UsageError("--dtype: unknown dtype '" + f.dtype + "' (expected fp16, bf16 or fp32)");
  p.dtype = *dt;
  p.causal = f.causal;
  for (const std::string& e : sim::validate(p)) throw UsageError(e);
  if (f.br.empty() != f.bc.empty()) throw UsageError("--br and --bc go together (give both or neither)");
  if (!f.br.empty()) r.options.tiles = sim::TileShape{parse_positive("--br", f.br), parse_positive("--bc", f.bc)};
  if (!f.sram.empty()) r.options.sram_bytes = parse_positive("--sram", f.sram);
  r.hw = load_hw(f.hw);
  return r;
}

std::vector<sim::Algorithm> parse_algorithms(const std::string& list) {
  std::vector<sim::Algorithm> out;
  if (list == "all") return sim::all_algorithms();
  size_t pos = 0;
  while (pos <= list.size()) {
    const auto comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const auto a = sim::parse_algorithm(item);
    if (!a) throw UsageError("unknown algorithm '" + item + "' (expected standard, pytorch, fa1, fa2)");
    out.push_back(*a);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace flashlab::cli
