// Where a kernel file's output is wrong. The runner's check gives one number
// for a case (the relative error over the rows it checked, or how many
// elements are still NaN); a student needs the place: the first (b, h, row)
// that is wrong, the largest error and where, and which rows of a head —
// with the tile boundary named when the wrong rows are the last, partial
// tile. Looked at inside measure(), while the case's buffers still hold the
// inputs and the output of its last run.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "device/cuda_check.hpp"
#include "driver.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::kernels::student::detail {

namespace {

// What the runner poisons the output with before every run: bytes 0xff.
bool is_poison(const unsigned char* e, i64 size) {
  for (i64 i = 0; i < size; ++i)
    if (e[i] != 0xff) return false;
  return true;
}

std::vector<unsigned char> download(const void* base, i64 head, i64 rows, i64 d, sim::DType t) {
  const i64 bytes = rows * d * sim::dtype_bytes(t);
  std::vector<unsigned char> host(static_cast<std::size_t>(bytes));
  const auto* src = static_cast<const unsigned char*>(base) + head * bytes;
  FLASHLAB_CUDA_CHECK(cudaMemcpy(host.data(), src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost));
  return host;
}

std::string sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string where(const sim::AttentionProblem& p, i64 head, i64 row) {
  return "(b=" + std::to_string(head / p.heads) + ", h=" + std::to_string(head % p.heads) + ", row " +
         std::to_string(row) + ")";
}

// "960–999, 1000" from sorted rows, at most four ranges.
std::string ranges(const std::vector<i64>& rows) {
  std::string s;
  int shown = 0;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
    if (shown == 4) {
      s += ", …";
      break;
    }
    s += (s.empty() ? "" : ", ") + std::to_string(rows[i]) + (j > i ? "–" + std::to_string(rows[j]) : "");
    ++shown;
    i = j + 1;
  }
  return s;
}

// The tile a set of wrong rows points at, when it does.
std::string tile_hint(const sim::AttentionProblem& p, sim::TileShape t, const std::vector<i64>& bad_rows,
                      std::size_t checked_rows) {
  if (bad_rows.empty()) return "";
  if (t.Br > 0 && p.n_q() % t.Br != 0) {
    const i64 last = p.n_q() / t.Br * t.Br;
    if (bad_rows.front() >= last)
      return " — the last, partial tile of B_r = " + std::to_string(t.Br) + " rows: N_q = " +
             std::to_string(p.n_q()) + " is not a multiple of " + std::to_string(t.Br) +
             " (check the bound on every row index)";
  }
  if (t.Bc > 0 && p.n_kv() % t.Bc != 0 && bad_rows.size() == checked_rows)
    return " — every checked row, and N_kv = " + std::to_string(p.n_kv()) + " is not a multiple of B_c = " +
           std::to_string(t.Bc) + ": the last, partial K_j, V_j tile? (check the bound on every key index)";
  return "";
}

class Diagnosing final : public Backend {
 public:
  Diagnosing(Backend& inner, std::shared_ptr<const KernelFile> file) : inner_(&inner), file_(std::move(file)) {}

  const DeviceInfo& device() const override { return inner_->device(); }
  DeviceAllocator& allocator() override { return inner_->allocator(); }
  i64 device_used_bytes() override { return inner_->device_used_bytes(); }
  double observe_sm_clock_mhz() override { return inner_->observe_sm_clock_mhz(); }
  std::string sticky_error() override { return inner_->sticky_error(); }

  Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
    Measurement m = inner_->measure(c, b, o);
    if (c.forward != nullptr) return m;
    const double bound = o.max_rel_error > 0 ? o.max_rel_error : error_bound(c.problem.dtype);
    const bool wrong = m.rel_error >= 0 && !(m.rel_error <= bound);
    if (m.not_written == 0 && !wrong) return m;
    std::string found;
    try {
      found = m.not_written > 0 ? unwritten(c, b) : wrong_rows(c, b, o, bound);
    } catch (const std::exception& e) {
      found = std::string("where: not found (") + e.what() + ")";
    }
    if (!found.empty()) m.check_note += (m.check_note.empty() ? "" : "; ") + found;
    return m;
  }

 private:
  // Elements left as the poison wrote them, and elements the kernel made
  // NaN or infinite: the first of each, and the rows of the first bad head.
  std::string unwritten(const Case& c, const CaseBuffers& b) {
    const sim::AttentionProblem& p = c.problem;
    const i64 d = p.head_dim, es = sim::dtype_bytes(p.dtype), heads = p.head_count();
    const i64 head_bytes = p.n_q() * d * es;
    const i64 budget_heads = std::max<i64>(1, (i64{256} << 20) / std::max<i64>(1, head_bytes));
    std::string first_poison, first_nan;
    std::vector<i64> bad_rows;  // of the first head with any
    i64 bad_head = -1;
    for (i64 h = 0; h < std::min(heads, budget_heads) && (first_poison.empty() || first_nan.empty()); ++h) {
      const std::vector<unsigned char> host = download(b.o, h, p.n_q(), d, p.dtype);
      const std::vector<double> values = to_doubles(host.data(), p.n_q() * d, p.dtype);
      for (i64 r = 0; r < p.n_q(); ++r) {
        bool row_bad = false;
        for (i64 col = 0; col < d; ++col) {
          const i64 e = r * d + col;
          if (std::isfinite(values[static_cast<std::size_t>(e)])) continue;
          row_bad = true;
          const bool poison = is_poison(host.data() + e * es, es);
          std::string& first = poison ? first_poison : first_nan;
          if (first.empty()) {
            first = where(p, h, r);
            first.insert(first.size() - 1, ", col " + std::to_string(col));
          }
        }
        if (row_bad && (bad_head < 0 || bad_head == h)) {
          bad_head = h;
          bad_rows.push_back(r);
        }
      }
    }
    std::string s;
    if (!first_poison.empty()) s += "first element not written " + first_poison;
    if (!first_nan.empty())
      s += std::string(s.empty() ? "" : "; ") + "first NaN or ∞ computed " + first_nan +
           " (an exp of a large number, or 0/0: a row whose ℓ is 0, or a maximum not subtracted?)";
    if (bad_head >= 0)
      s += "; rows of head (b=" + std::to_string(bad_head / p.heads) + ", h=" + std::to_string(bad_head % p.heads) +
           "): " + ranges(bad_rows) + tile_hint(p, c.tiles.Br > 0 ? c.tiles : file_->declaration.tiles, bad_rows,
                                                 static_cast<std::size_t>(p.n_q()));
    return s;
  }

  // The rows the check covers (and both sides of every tile boundary the
  // declaration names), each against fp64: the first wrong one, the largest
  // error, the wrong rows of the first head that has any.
  std::string wrong_rows(const Case& c, const CaseBuffers& b, const RunOptions& o, double bound) {
    const sim::AttentionProblem& p = c.problem;
    const CheckPlan plan = plan_check(p, o.check_flop_budget, o.check == CheckMode::full);
    std::vector<i64> rows = plan.rows;
    const sim::TileShape t = file_->declaration.tiles;
    if (t.Br > 0 && p.n_q() > t.Br) {
      const i64 last = (p.n_q() - 1) / t.Br * t.Br;
      for (i64 r : {last - 1, last, p.n_q() - 1})
        if (r >= 0) rows.push_back(r);
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    const double tau = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
    const i64 d = p.head_dim, group = p.heads / p.h_kv();
    std::string first;
    double max_abs = -1;
    std::string max_at;
    std::vector<i64> bad_rows;
    i64 bad_head = -1, bad_count = 0, checked = 0;
    for (i64 h : plan.heads) {
      HeadInputs in;
      in.n_q = p.n_q();
      in.n_kv = p.n_kv();
      in.d = d;
      auto doubles = [&](const void* base, i64 head, i64 n) {
        const std::vector<unsigned char> host = download(base, head, n, d, p.dtype);
        return to_doubles(host.data(), n * d, p.dtype);
      };
      in.q = doubles(b.q, h, p.n_q());
      in.k = doubles(b.k, h / group, p.n_kv());
      in.v = doubles(b.v, h / group, p.n_kv());
      const std::vector<double> ref = reference_rows(in, rows, tau, p.causal);
      const std::vector<double> out = doubles(b.o, h, p.n_q());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const i64 r = rows[i];
        double diff2 = 0, ref2 = 0, row_max = 0;
        i64 row_max_col = 0;
        for (i64 col = 0; col < d; ++col) {
          const double want = ref[i * static_cast<std::size_t>(d) + static_cast<std::size_t>(col)];
          const double got = out[static_cast<std::size_t>(r * d + col)];
          const double e = std::isfinite(got) ? std::abs(got - want) : INFINITY;
          diff2 += e * e;
          ref2 += want * want;
          if (e > row_max) {
            row_max = e;
            row_max_col = col;
          }
        }
        ++checked;
        if (row_max > max_abs) {
          max_abs = row_max;
          max_at = where(p, h, r);
          max_at.insert(max_at.size() - 1, ", col " + std::to_string(row_max_col));
        }
        // A row is wrong when its own relative error is above the case's bound
        // (rows whose reference is ~0 are measured against 1).
        const bool bad = !(std::sqrt(diff2) <= bound * std::max(std::sqrt(ref2), 1.0));
        if (!bad) continue;
        ++bad_count;
        if (first.empty()) first = where(p, h, r) + " off by up to " + sig3(row_max);
        if (bad_head < 0 || bad_head == h) {
          bad_head = h;
          bad_rows.push_back(r);
        }
      }
    }
    if (first.empty()) return "";
    std::ostringstream s;
    s << "first wrong row " << first << "; max |error| " << sig3(max_abs) << " at " << max_at << "; "
      << sim::group_digits(bad_count) << " of " << sim::group_digits(checked) << " checked rows wrong";
    s << "; in head (b=" << bad_head / p.heads << ", h=" << bad_head % p.heads << "): rows " << ranges(bad_rows)
      << tile_hint(p, t, bad_rows, rows.size());
    return s.str();
  }

  Backend* inner_;
  std::shared_ptr<const KernelFile> file_;
};

}  // namespace

std::unique_ptr<Backend> diagnosing_backend(Backend& inner, std::shared_ptr<const KernelFile> file) {
  return std::make_unique<Diagnosing>(inner, std::move(file));
}

}  // namespace flashlab::kernels::student::detail
