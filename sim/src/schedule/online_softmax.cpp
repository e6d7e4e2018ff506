#include "flashlab/sim/schedule/online_softmax.hpp"

#include <algorithm>
#include <cmath>

namespace flashlab::sim {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Above this many cached block summaries the cache starts again: a scrub over
// every block of a huge problem must not grow memory without bound.
constexpr size_t kMaxCachedBlocks = 200'000;
constexpr i64 kMaxCachedK = i64{1} << 24;  // elements of K kept as float (64 MiB)

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A standard normal that depends only on its key: Box–Muller on two 32-bit
// halves of one hash (the cosine branch).
double normal_from(std::uint64_t key) {
  const std::uint64_t h = splitmix64(key);
  const double u1 = (static_cast<double>(h >> 32) + 0.5) / 4294967296.0;  // (0, 1)
  const double u2 = static_cast<double>(h & 0xffffffffULL) / 4294967296.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

std::uint64_t element_key(std::uint64_t seed, std::uint64_t tensor, i64 r, i64 c) {
  return splitmix64(seed ^ (tensor << 56)) ^ splitmix64(static_cast<std::uint64_t>(r) * 0x100000001b3ULL +
                                                        static_cast<std::uint64_t>(c));
}

}  // namespace

OnlineSoftmax::OnlineSoftmax(const AttentionProblem& p, TileShape t, std::uint64_t seed, i64 rows_shown)
    : grid_(p, t), seed_(seed), rows_shown_(std::max<i64>(1, rows_shown)),
      tau_(1.0 / std::sqrt(static_cast<double>(p.head_dim))) {
  const i64 n = grid_.n_kv * grid_.d;
  cache_k_ = n > 0 && n <= kMaxCachedK;
}

double OnlineSoftmax::q(i64 r, i64 c) const { return normal_from(element_key(seed_, 1, r, c)); }

double OnlineSoftmax::k(i64 r, i64 c) const {
  const i64 j = r / grid_.Bc;
  if (cache_k_ && static_cast<size_t>(j) < k_filled_.size() && k_filled_[static_cast<size_t>(j)])
    return k_cache_[static_cast<size_t>(r * grid_.d + c)];
  return normal_from(element_key(seed_, 2, r, c));
}

void OnlineSoftmax::ensure_k_block(i64 j) {
  if (!cache_k_) return;
  if (k_cache_.empty()) {
    k_cache_.resize(static_cast<size_t>(grid_.n_kv * grid_.d));
    k_filled_.assign(static_cast<size_t>(grid_.T_c), false);
  }
  if (k_filled_[static_cast<size_t>(j)]) return;
  for (i64 r = j * grid_.Bc; r < j * grid_.Bc + grid_.cols(j); ++r)
    for (i64 c = 0; c < grid_.d; ++c)
      k_cache_[static_cast<size_t>(r * grid_.d + c)] = static_cast<float>(normal_from(element_key(seed_, 2, r, c)));
  k_filled_[static_cast<size_t>(j)] = true;
}

i64 OnlineSoftmax::visits_total(i64 i) const {
  if (i < 0 || i >= grid_.T_r) return 0;
  return grid_.last_col(i) + 1;
}

double OnlineSoftmax::score(const std::vector<double>& q_row, i64 key) const {
  double s = 0;
  const size_t j = static_cast<size_t>(key / grid_.Bc);
  if (j < k_filled_.size() && k_filled_[j]) {
    // Four independent sums: the loop runs at the multiplier's rate instead of
    // waiting on one chain of additions (this dot product is most of the GUI's
    // own time per frame while playback runs).
    const float* kr = &k_cache_[static_cast<size_t>(key * grid_.d)];
    const double* q = q_row.data();
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    i64 c = 0;
    for (; c + 4 <= grid_.d; c += 4) {
      s0 += q[c] * kr[c];
      s1 += q[c + 1] * kr[c + 1];
      s2 += q[c + 2] * kr[c + 2];
      s3 += q[c + 3] * kr[c + 3];
    }
    for (; c < grid_.d; ++c) s0 += q[c] * kr[c];
    s = (s0 + s1) + (s2 + s3);
  } else {
    for (i64 c = 0; c < grid_.d; ++c) s += q_row[static_cast<size_t>(c)] * k(key, c);
  }
  return tau_ * s;
}

i64 OnlineSoftmax::summary_cost(i64 i, i64 j) const {
  const i64 work = std::min(rows_shown_, grid_.rows(i)) * grid_.cols(j) * grid_.d;
  const bool k_ready = cache_k_ && static_cast<size_t>(j) < k_filled_.size() && k_filled_[static_cast<size_t>(j)];
  return work + (k_ready ? 0 : 8 * grid_.cols(j) * grid_.d);
}

void OnlineSoftmax::fill_summary(i64 i, i64 j, std::vector<BlockSummary>& out) {
  ensure_k_block(j);
  const i64 r0 = i * grid_.Br, nrows = std::min(rows_shown_, grid_.rows(i));
  const i64 c0 = j * grid_.Bc, c1 = c0 + grid_.cols(j);
  out.assign(static_cast<size_t>(nrows), BlockSummary{});
  std::vector<double> q_row(static_cast<size_t>(grid_.d));
  for (i64 rr = 0; rr < nrows; ++rr) {
    const i64 r = r0 + rr;
    for (i64 c = 0; c < grid_.d; ++c) q_row[static_cast<size_t>(c)] = q(r, c);
    const i64 last = grid_.causal ? std::min(c1, r + 1) : c1;  // keys [c0, last) are unmasked
    BlockSummary& b = out[static_cast<size_t>(rr)];
    if (last <= c0) continue;
    // Two passes over the block, as line 10 of Algorithm 1 does on chip:
    // the block's max, then the sum of exponentials relative to it.
    std::vector<double> s(static_cast<size_t>(last - c0));
    for (i64 c = c0; c < last; ++c) {
      s[static_cast<size_t>(c - c0)] = score(q_row, c);
      b.max = std::max(b.max, s[static_cast<size_t>(c - c0)]);
    }
    for (double v : s) b.sum += std::exp(v - b.max);
    b.keys = last - c0;
  }
}

const std::vector<OnlineSoftmax::BlockSummary>* OnlineSoftmax::cached(i64 i, i64 j) const {
  const auto it = summaries_.find(i * grid_.T_c + j);
  return it == summaries_.end() ? nullptr : &it->second;
}

const std::vector<OnlineSoftmax::BlockSummary>& OnlineSoftmax::summary(i64 i, i64 j) {
  const i64 key = i * grid_.T_c + j;
  auto it = summaries_.find(key);
  if (it != summaries_.end()) return it->second;
  if (summaries_.size() >= kMaxCachedBlocks) summaries_.clear();
  std::vector<BlockSummary> s;
  fill_summary(i, j, s);
  return summaries_.emplace(key, std::move(s)).first->second;
}

const OnlineSoftmaxState& OnlineSoftmax::state(i64 i, i64 visits, i64 budget) {
  i = std::clamp<i64>(i, 0, std::max<i64>(0, grid_.T_r - 1));
  visits = std::clamp<i64>(visits, 0, visits_total(i));
  if (state_.i != i || visits < state_.visits) {
    state_ = OnlineSoftmaxState{};
    state_.i = i;
    const i64 nrows = std::min(rows_shown_, grid_.rows(i));
    for (i64 rr = 0; rr < nrows; ++rr) {
      OnlineSoftmaxRow row;
      row.row = i * grid_.Br + rr;
      state_.rows.push_back(row);
    }
  }
  // Visits go over j = 0, 1, ... (the visited column blocks of a row block
  // are a prefix in j for every algorithm), so visit v is column block v.
  state_.target = visits;
  i64 spent = 0;
  for (i64 j = state_.visits; j < visits; ++j) {
    // Stop before new work that would overrun the budget (cached blocks are free;
    // the first block is always done, so every call makes progress).
    if (!cached(i, j)) {
      const i64 cost = summary_cost(i, j);
      if (spent > 0 && spent + cost > budget) break;
      spent += cost;
    }
    const std::vector<BlockSummary>& blk = summary(i, j);
    for (size_t rr = 0; rr < state_.rows.size(); ++rr) {
      OnlineSoftmaxRow& row = state_.rows[rr];
      const BlockSummary& b = blk[rr];
      row.m_prev = row.m;
      if (b.keys == 0) {  // every key of this block is masked for this row
        row.rescale = 1;
        continue;
      }
      const double m_new = std::max(row.m, b.max);
      // m_i = −∞ before the first unmasked key: ℓ_i and O_i are 0, so the factor is 0.
      row.rescale = row.m == kNegInf ? 0.0 : std::exp(row.m - m_new);
      row.l = row.l * row.rescale + b.sum * std::exp(b.max - m_new);
      row.m = m_new;
      row.keys += b.keys;
    }
    state_.last_j = j;
    state_.visits = j + 1;
  }
  return state_;
}

OnlineSoftmaxRow OnlineSoftmax::exact(i64 row) const {
  OnlineSoftmaxRow out;
  out.row = row;
  if (row < 0 || row >= grid_.n_q) return out;
  std::vector<double> q_row(static_cast<size_t>(grid_.d));
  for (i64 c = 0; c < grid_.d; ++c) q_row[static_cast<size_t>(c)] = q(row, c);
  const i64 last = grid_.causal ? std::min(grid_.n_kv, row + 1) : grid_.n_kv;
  std::vector<double> s(static_cast<size_t>(std::max<i64>(0, last)));
  for (i64 c = 0; c < last; ++c) {
    s[static_cast<size_t>(c)] = score(q_row, c);
    out.m = std::max(out.m, s[static_cast<size_t>(c)]);
  }
  for (double v : s) out.l += std::exp(v - out.m);
  out.keys = last;
  out.m_prev = out.m;
  return out;
}

}  // namespace flashlab::sim
