#include <sstream>

#include "flashlab/sim/checked.hpp"
#include "flashlab/sim/problem.hpp"

namespace flashlab::sim {

i64 AttentionProblem::head_count() const { return checked_mul(batch, heads, "B·H"); }

bool operator==(const AttentionProblem& a, const AttentionProblem& b) {
  return a.batch == b.batch && a.heads == b.heads && a.n_q() == b.n_q() && a.n_kv() == b.n_kv() && a.d() == b.d() &&
         a.causal == b.causal && a.dtype == b.dtype;
}

std::vector<std::string> validate(const AttentionProblem& p) {
  std::vector<std::string> errs;
  auto positive = [&](i64 v, const char* what) {
    if (v < 1) errs.push_back(std::string(what) + " must be at least 1 (got " + std::to_string(v) + ")");
  };
  positive(p.batch, "batch B");
  positive(p.heads, "heads H");
  positive(p.seq_q, "sequence length N");
  positive(p.head_dim, "head dim d");
  if (p.seq_kv < 0)
    errs.push_back("key/value length must be at least 1 (got " + std::to_string(p.seq_kv) + ")");
  if (!errs.empty()) return errs;
  if (p.causal && p.n_kv() != p.n_q())
    errs.push_back("causal attention needs seq_kv = seq_q (got " + std::to_string(p.n_q()) + " and " +
                   std::to_string(p.n_kv()) + ")");
  try {
    // The largest count the model keeps: 4·B·H·N_q·N_kv·d FLOPs, and bytes of S, P.
    const i64 bh = p.head_count();
    const i64 nn = checked_mul(p.n_q(), p.n_kv(), "N_q·N_kv");
    checked_mul(checked_mul(checked_mul(bh, nn, "B·H·N²"), p.head_dim, "B·H·N²·d"), 8, "8·B·H·N²·d");
    checked_mul(checked_mul(bh, nn, "B·H·N²"), 64, "B·H·N²·64");
  } catch (const OverflowError& e) {
    errs.push_back(std::string("problem too large for 64-bit counters: ") + e.what());
  }
  return errs;
}

std::string describe(const AttentionProblem& p) {
  std::ostringstream s;
  s << "B=" << p.batch << " H=" << p.heads << " N=" << p.n_q();
  if (p.n_kv() != p.n_q()) s << " N_kv=" << p.n_kv();
  s << " d=" << p.head_dim << ' ' << to_string(p.dtype) << (p.causal ? " causal" : "");
  return s.str();
}

}  // namespace flashlab::sim
