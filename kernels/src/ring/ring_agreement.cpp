// A process per GPU (RingOptions::group): where one process would see every
// GPU, the ranks meet through the group — one outcome of each phase, the rows
// the check reads, one run's times, the counts and the memory — so that every
// rank ends with the same row.
#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "ring_agreement.hpp"
#include "ring_run.hpp"

namespace flashlab::kernels::ring {

// Every rank's outcome of a phase: the same error thrown on every rank when
// any failed (the first failing rank's, named when the ranks disagree), so
// that no rank goes on into a collective the others never reach.
void RingRun::agree(std::exception_ptr mine) {
  if (!ranked()) {
    if (mine) std::rethrow_exception(mine);
    return;
  }
  char kind = 'k';
  std::string what;
  i64 asked = 0, in_use = 0;
  if (mine) {
    try {
      std::rethrow_exception(mine);
    } catch (const OutOfMemory& e) {
      kind = 'o', what = e.what(), asked = e.bytes_asked, in_use = e.bytes_in_use;
    } catch (const Unsupported& e) {
      kind = 's', what = e.what();
    } catch (const std::invalid_argument& e) {
      kind = 's', what = e.what();
    } catch (const std::exception& e) {
      kind = 'f', what = e.what();
    }
  }
  Bytes b;
  b.put(kind);
  b.put(asked);
  b.put(in_use);
  b.data += what;
  const std::vector<std::string> all = o_.group->allgather(b.data, P());
  int first = -1;
  bool same = true;
  for (int r = 0; r < P(); ++r) {
    const std::string& m = all[static_cast<std::size_t>(r)];
    if (m.empty() || m[0] == 'k') continue;
    if (first < 0) first = r;
    same = same && m == all[static_cast<std::size_t>(first)];
  }
  for (int r = 0; r < P() && same && first >= 0; ++r) same = all[static_cast<std::size_t>(r)][0] != 'k';
  if (first < 0) return;
  Bytes f{all[static_cast<std::size_t>(first)]};
  const char k = f.take<char>();
  const i64 a = f.take<i64>(), u = f.take<i64>();
  const std::string message = (same ? std::string() : "rank " + std::to_string(first) + ": ") + f.data.substr(f.at);
  if (k == 'o') throw OutOfMemory(message, a, u);
  if (k == 's') throw Unsupported(message);
  throw AgreedFailure(message);
}

// `whole` is an [N, row] tensor of which this rank filled its own chunks'
// rows: the other ranks' rows come from them.
void RingRun::share_rows(char* whole, i64 row_bytes) {
  if (!ranked()) return;
  const Rank& me = ranks_.front();
  std::string mine;
  for (const OwnChunk& c : me.own)
    mine.append(whole + c.chunk.begin * row_bytes, static_cast<std::size_t>(c.chunk.size() * row_bytes));
  const std::vector<std::string> all = o_.group->allgather(mine, P());
  for (int q = 0; q < P(); ++q) {
    if (q == me.index) continue;
    const std::string& got = all[static_cast<std::size_t>(q)];
    std::size_t at = 0;
    for (int c : held(q)) {
      const auto n = static_cast<std::size_t>(chunk(c).size() * row_bytes);
      if (at + n > got.size()) throw std::runtime_error("rank " + std::to_string(q) + " sent fewer rows than it holds");
      std::memcpy(whole + chunk(c).begin * row_bytes, got.data() + at, n);
      at += n;
    }
  }
}

// One run's times from every rank: the pass ends when the last GPU does;
// each GPU's steps and busy time are its own rank's.
RunTimes RingRun::share_times(const RunTimes& mine) {
  const int me = ranks_.front().index;
  Bytes b;
  b.put(mine.time_ms);
  b.put(mine.busy_ms[static_cast<std::size_t>(me)]);
  b.put(static_cast<i64>(mine.steps.size()));
  for (const sim::MeasuredStep& m : mine.steps) {
    b.put(m.gpu), b.put(m.step), b.put(m.pass), b.put(m.kv_owner);
    b.put(m.compute_start_ms), b.put(m.compute_end_ms), b.put(m.rung_ms), b.put(m.wait_ms);
    b.put(m.transfer_start_ms), b.put(m.transfer_end_ms), b.put(m.bytes_received);
  }
  RunTimes t;
  t.busy_ms.assign(static_cast<std::size_t>(P()), 0.0);
  const std::vector<std::string> all = o_.group->allgather(b.data, P());
  for (int q = 0; q < P(); ++q) {
    Bytes r{all[static_cast<std::size_t>(q)]};
    t.time_ms = std::max(t.time_ms, r.take<double>());
    t.busy_ms[static_cast<std::size_t>(q)] = r.take<double>();
    const i64 n = r.take<i64>();
    for (i64 k = 0; k < n; ++k) {
      sim::MeasuredStep m;
      m.gpu = r.take<int>(), m.step = r.take<int>(), m.pass = r.take<Pass>(), m.kv_owner = r.take<int>();
      m.compute_start_ms = r.take<double>(), m.compute_end_ms = r.take<double>();
      m.rung_ms = r.take<double>(), m.wait_ms = r.take<double>();
      m.transfer_start_ms = r.take<double>(), m.transfer_end_ms = r.take<double>();
      m.bytes_received = r.take<i64>();
      t.steps.push_back(m);
    }
  }
  return t;
}

i64 RingRun::sum_over_ranks(i64 mine) {
  if (!ranked()) return mine;
  Bytes b;
  b.put(mine);
  i64 sum = 0;
  for (const std::string& one : o_.group->allgather(b.data, P())) sum += Bytes{one}.take<i64>();
  return sum;
}

void RingRun::note_peaks(sim::ParallelRun& out) {
  for (Rank& g : ranks_) {
    out.peak_allocated_bytes.push_back(g.arena->peak_bytes());
    out.peak_device_used_bytes.push_back(g.peak_device_used);
  }
  if (!ranked()) return;
  std::vector<i64> allocated, used;
  Bytes b;
  b.put(out.peak_allocated_bytes.front());
  b.put(out.peak_device_used_bytes.front());
  for (const std::string& one : o_.group->allgather(b.data, P())) {
    Bytes r{one};
    allocated.push_back(r.take<i64>());
    used.push_back(r.take<i64>());
  }
  out.peak_allocated_bytes = allocated;
  out.peak_device_used_bytes = used;
}

}  // namespace flashlab::kernels::ring
