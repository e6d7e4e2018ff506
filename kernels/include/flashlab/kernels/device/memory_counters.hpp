// DRAM and L2 bytes of a kernel run, read from the GPU's performance counters
// through CUPTI's range profiler: the measured side of the simulator's HBM
// bytes. Plain C++, no CUDA types. libcupti is opened at run time, so a binary
// without it still starts; `CounterSession::open` then says why in one line.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace flashlab::kernels {

// What one user range (everything `launch` enqueues) moved. Sums over the whole
// device; ncu reports the same metrics under the same names.
struct MemoryCounters {
  double dram_read_bytes = 0;   // dram__bytes_read.sum
  double dram_write_bytes = 0;  // dram__bytes_write.sum
  double l2_read_bytes = 0;     // lts__t_sectors_srcunit_tex_op_read.sum × 32 B: reads the SMs sent to L2
  double l2_write_bytes = 0;    // lts__t_sectors_srcunit_tex_op_write.sum × 32 B: writes the SMs sent to L2
  double l2_hit_rate = -1;      // lts__t_sector_hit_rate.pct / 100, all L2 sectors; -1 when not given
  int passes = 0;               // how many times `launch` ran: CUPTI's replay passes
};

// The metrics behind MemoryCounters, in the order of its fields; what
// `ncu --metrics` takes to measure the same.
const std::vector<std::string>& memory_counter_metrics();

// A CUPTI call failed during a measurement; the message names the call and
// CUPTI's error (and what fixes it, where that is known).
class CounterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One CUPTI range-profiler session on one device's primary context (the one
// the CUDA runtime uses). One session per device at a time (a second open is
// refused); it measures any number of launches one after another.
class CounterSession {
 public:
  // Null when counters cannot be read, with `*why_not` (when given) set to one
  // line: no CUDA in this build, no device, libcupti not found, a session
  // already open on the device, or the CUPTI call that failed and its error. Never throws. $FLASHLAB_CUPTI names the
  // library to open instead of the usual places.
  static std::unique_ptr<CounterSession> open(int device, std::string* why_not);

  ~CounterSession();
  CounterSession(const CounterSession&) = delete;
  CounterSession& operator=(const CounterSession&) = delete;

  // Counts what `launch` moves. CUPTI may need several passes over the same
  // work: each pass calls `before_pass` (outside the range: flush the L2 there)
  // and then `launch` inside the range, so `launch` must be idempotent. The
  // device is synchronized around the range. Throws CounterError when CUPTI
  // fails, CudaError when a CUDA call does; what `before_pass` or `launch`
  // throw passes through, after the range is closed.
  MemoryCounters measure(const std::function<void()>& before_pass, const std::function<void()>& launch);

  // "CUPTI 130001 (/usr/local/cuda/lib64/libcupti.so.13), chip GH100, 1 pass": for result metadata.
  std::string description() const;

 private:
  struct Impl;
  explicit CounterSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashlab::kernels
