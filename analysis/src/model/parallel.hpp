// Internal: independent pieces of work spread over the machine's cores. A
// sweep's points do not depend on each other; the charts of the GUI sweep
// dozens of them whenever the problem changes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flashlab::analysis::detail {

// Calls work(k) for every k in [0, n), each exactly once, on up to one thread
// per core, highest k first (a sweep's last points are its largest problems:
// started first, they do not leave one core finishing them alone). The first
// exception thrown is rethrown here once every thread has stopped.
template <class Work>
void parallel_for(std::size_t n, const Work& work) {
  const std::size_t threads = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::size_t k = n; k-- > 0;) work(k);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&] {
    for (std::size_t taken; (taken = next.fetch_add(1)) < n;) {
      try {
        work(n - 1 - taken);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flashlab::analysis::detail
