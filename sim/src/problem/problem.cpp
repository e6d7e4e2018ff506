#include <sstream>
#include <stdexcept>
#include <utility>

#include "core/enum_names.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::sim {

i64 AttentionProblem::head_count() const { return checked_mul(batch, heads, "B·H"); }
i64 AttentionProblem::kv_head_count() const { return checked_mul(batch, h_kv(), "B·H_kv"); }

bool operator==(const ParallelPart& a, const ParallelPart& b) {
  return a.gpus == b.gpus && a.layout == b.layout && a.passes == b.passes;
}

bool same_attention(const AttentionProblem& a, const AttentionProblem& b) {
  return a.batch == b.batch && a.heads == b.heads && a.h_kv() == b.h_kv() && a.n_q() == b.n_q() &&
         a.n_kv() == b.n_kv() && a.d() == b.d() && a.causal == b.causal && a.dtype == b.dtype;
}

bool operator==(const AttentionProblem& a, const AttentionProblem& b) {
  return same_attention(a, b) && a.parallel == b.parallel;
}

namespace {
constexpr detail::EnumName<ProblemField> kFieldKeys[] = {
    {ProblemField::batch, "batch"},       {ProblemField::heads, "heads"}, {ProblemField::kv_heads, "kv_heads"},
    {ProblemField::seq, "seq"},           {ProblemField::seq_kv, "seq_kv"}, {ProblemField::head_dim, "head_dim"},
    {ProblemField::dtype, "dtype"},       {ProblemField::gpus, "gpus"}};
static_assert(detail::lists_through(kFieldKeys, ProblemField::gpus));
}  // namespace

std::string_view problem_field_key(ProblemField f) { return detail::name_of(kFieldKeys, f, "seq"); }

bool ProblemError::about(ProblemField f) const {
  for (ProblemField g : fields)
    if (g == f) return true;
  return false;
}

namespace {

std::string text(i64 v) { return std::to_string(v); }

// The largest counts the model keeps: 4·B·H·N_q·N_kv·d FLOPs, and bytes of S, P.
// Empty when they fit in 64 bits; else why not.
std::string counters_overflow(const AttentionProblem& p) {
  try {
    const i64 bh = p.head_count();
    const i64 nn = checked_mul(p.n_q(), p.n_kv(), "N_q·N_kv");
    checked_mul(checked_mul(checked_mul(bh, nn, "B·H·N²"), p.head_dim, "B·H·N²·d"), 8, "8·B·H·N²·d");
    checked_mul(checked_mul(bh, nn, "B·H·N²"), 64, "B·H·N²·64");
  } catch (const OverflowError& e) {
    return e.what();
  }
  return {};
}

// The sizes whose reduction to 1 alone makes the counters fit.
std::vector<ProblemField> too_large_fields(const AttentionProblem& p) {
  const std::pair<ProblemField, i64 AttentionProblem::*> sizes[] = {{ProblemField::seq, &AttentionProblem::seq_q},
                                                                    {ProblemField::head_dim, &AttentionProblem::head_dim},
                                                                    {ProblemField::batch, &AttentionProblem::batch},
                                                                    {ProblemField::heads, &AttentionProblem::heads}};
  std::vector<ProblemField> out;
  for (const auto& [field, member] : sizes) {
    AttentionProblem q = p;
    q.*member = 1;
    if (member == &AttentionProblem::seq_q) q.seq_kv = 0;
    if (counters_overflow(q).empty()) out.push_back(field);
  }
  return out;
}

}  // namespace

std::vector<ProblemError> validate(const AttentionProblem& p) {
  std::vector<ProblemError> errs;
  auto add = [&](std::vector<ProblemField> fields, std::string message) {
    errs.push_back(ProblemError{std::move(fields), std::move(message)});
  };
  const bool gpus_ok = !p.parallel || (p.parallel->gpus >= 1 && p.parallel->gpus <= kMaxRingGpus);
  if (!gpus_ok)
    add({ProblemField::gpus},
        "the ring needs 1 to " + std::to_string(kMaxRingGpus) + " GPUs, not " + std::to_string(p.parallel->gpus));
  auto positive = [&](i64 v, ProblemField f, const char* what) {
    if (v < 1) add({f}, std::string(what) + " must be at least 1 (got " + text(v) + ")");
  };
  positive(p.batch, ProblemField::batch, "batch B");
  positive(p.heads, ProblemField::heads, "heads H");
  if (p.kv_heads < 0) positive(p.kv_heads, ProblemField::kv_heads, "key/value heads H_kv");
  positive(p.seq_q, ProblemField::seq, "sequence length N");
  positive(p.head_dim, ProblemField::head_dim, "head dim d");
  if (p.seq_kv < 0) add({ProblemField::seq_kv}, "key/value length must be at least 1 (got " + text(p.seq_kv) + ")");
  // The checks below need sizes ≥ 1; grouped heads that do not divide do not stop them.
  const bool sizes_ok = errs.empty();
  if (p.heads >= 1 && p.kv_heads >= 1) {
    if (p.kv_heads > p.heads)
      add({ProblemField::kv_heads, ProblemField::heads},
          "H_kv = " + text(p.kv_heads) + " key/value heads exceed the H = " + text(p.heads) + " query heads");
    else if (p.heads % p.kv_heads != 0)
      add({ProblemField::kv_heads, ProblemField::heads},
          "H = " + text(p.heads) + " is not a multiple of H_kv = " + text(p.kv_heads) +
              " (each key/value head serves H / H_kv query heads)");
  }
  if (!sizes_ok) return errs;
  if (p.parallel && p.n_kv() != p.n_q())
    add({ProblemField::seq_kv}, "the ring cuts one sequence: it needs seq_kv = seq_q (got " + text(p.n_q()) + " and " +
                                    text(p.n_kv()) + ")");
  else if (p.causal && p.n_kv() != p.n_q())
    add({ProblemField::seq_kv},
        "causal attention needs seq_kv = seq_q (got " + text(p.n_q()) + " and " + text(p.n_kv()) + ")");
  if (const std::string why = counters_overflow(p); !why.empty())
    add(too_large_fields(p), "problem too large for 64-bit counters: " + why);
  if (p.parallel && p.parallel->passes == PassSelection::bwd)
    add({}, "the ring's backward follows its forward (it needs O and the logsumexp): its passes are fwd or fwd+bwd");
  if (p.parallel) {
    try {
      (void)ring_partition(p.seq_q, p.parallel->gpus, p.parallel->layout);
    } catch (const std::invalid_argument& e) {
      add({ProblemField::seq, ProblemField::gpus}, e.what());
    }
  }
  return errs;
}

std::vector<std::string> messages(const std::vector<ProblemError>& errors) {
  std::vector<std::string> out;
  out.reserve(errors.size());
  for (const ProblemError& e : errors) out.push_back(e.message);
  return out;
}

std::string describe(const AttentionProblem& p) {
  std::ostringstream s;
  if (p.parallel) {
    const ParallelPart& pp = *p.parallel;
    s << "B=" << p.batch << " H=" << p.heads << " H_kv=" << p.h_kv() << " N=" << p.n_q() << " d=" << p.head_dim << ' '
      << to_string(p.dtype) << (p.causal ? " causal" : " non-causal") << ", " << pp.gpus
      << (pp.gpus == 1 ? " GPU " : " GPUs ") << ring_layout_name(pp.layout) << ", " << to_string(pp.passes);
    return s.str();
  }
  s << "B=" << p.batch << " H=" << p.heads;
  if (p.h_kv() != p.heads) s << " H_kv=" << p.h_kv();
  s << " N=" << p.n_q();
  if (p.n_kv() != p.n_q()) s << " N_kv=" << p.n_kv();
  s << " d=" << p.head_dim << ' ' << to_string(p.dtype) << (p.causal ? " causal" : "");
  return s.str();
}

}  // namespace flashlab::sim
