// flashlab_dram_probe: does CUPTI count DRAM bytes right on this GPU? Three
// kernels whose traffic is known to the byte (read once, copy, write once; see
// dram_probe_kernels.hpp) are measured through CounterSession with the L2
// flushed before every pass, each number is set beside what the kernel must
// move, and the ncu command lines that measure the same kernels are printed
// for a cross-check. Exit: 0 PASS, 1 FAIL or a failed call, 2 bad arguments,
// 77 no device or no CUPTI (after saying why).
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "device/cuda_check.hpp"
#include "dram_probe_kernels.hpp"
#include "flashlab/kernels/device/memory_counters.hpp"

namespace {

using namespace flashlab::kernels;
constexpr int kSkip = 77;
constexpr double kTolerance = 0.02;  // of the buffer size, for every DRAM number
constexpr double kMiB = 1024.0 * 1024.0;

struct Options {
  std::size_t bytes = 0;  // 0: chosen from the L2 and free memory
  int device = 0;
  bool ncu_mode = false;
  bool flush_by_writing = false;
  bool l2_curve = false;
};

const char* const kUsage =
    "usage: flashlab_dram_probe [--bytes N | --gib G] [--device D] [--flush read|write] [--ncu]\n"
    "  --bytes, --gib  buffer size (default: 64x the L2, at least 4 GiB, as free memory allows)\n"
    "  --flush         how the L2 is emptied before each pass: read 2x its size (default: leaves it clean)\n"
    "                  or write 2x its size (leaves dirty lines the measured kernel then writes back)\n"
    "  --ncu           run each kernel once after a flush, without CUPTI, for ncu to profile\n"
    "  --l2            then characterise the L2 for the simulator's model: the DRAM bytes of reading X\n"
    "                  bytes a second time, X from 1/4 to 3 times the L2 (the capacity reads can reuse),\n"
    "                  and the written bytes still dirty in L2 when a write stream ends\n";

bool parse(int argc, char** argv, Options& o) {
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    const char* v = k + 1 < argc ? argv[k + 1] : nullptr;
    if (a == "--ncu") {
      o.ncu_mode = true;
    } else if (a == "--l2") {
      o.l2_curve = true;
    } else if (a == "--bytes" && v) {
      o.bytes = std::strtoull(v, nullptr, 10), ++k;
    } else if (a == "--gib" && v) {
      o.bytes = static_cast<std::size_t>(std::atof(v) * 1024 * kMiB), ++k;
    } else if (a == "--device" && v) {
      o.device = std::atoi(v), ++k;
    } else if (a == "--flush" && v && (std::string(v) == "read" || std::string(v) == "write")) {
      o.flush_by_writing = std::string(v) == "write", ++k;
    } else {
      return false;
    }
  }
  return true;
}

std::string self_path(const char* argv0) {
  char buf[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(argv0);
}

struct Case {
  const char* kernel;
  const char* what;
  double read_bytes, write_bytes;  // what the kernel must move
  std::function<void()> launch;
};

void print_ncu_commands(const std::string& exe, const Options& o) {
  std::string metrics;
  for (const std::string& m : memory_counter_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  std::printf("\ncross-check with Nsight Compute (same kernels and size; --ncu runs each once, CUPTI off):\n");
  for (const char* kernel : {probe::kReadKernel, probe::kCopyKernel, probe::kWriteKernel})
    std::printf("  ncu --metrics %s --cache-control all --clock-control none --kernel-name regex:%s "
                "--launch-count 1 %s --ncu --bytes %zu --device %d%s\n",
                metrics.c_str(), kernel, exe.c_str(), o.bytes, o.device, o.flush_by_writing ? " --flush write" : "");
}

// One row; false when the number is off by more than the tolerance.
bool row(const char* kernel, const char* traffic, double expected, double measured, double slack) {
  const bool ok = std::fabs(measured - expected) <= slack;
  char ratio[32] = "-";
  if (expected > 0) std::snprintf(ratio, sizeof ratio, "%.4f", measured / expected);
  std::printf("%-18s %-14s %14.1f %14.1f %12s   %s\n", kernel, traffic, expected / kMiB, measured / kMiB, ratio,
              ok ? "ok" : "OFF");
  return ok;
}

// The two facts the simulator's L2 model rests on, measured: how much of a
// buffer read again right after a first read comes from DRAM (0 below the
// capacity reads can reuse; an LRU cache jumps to 1 above it), and how much of
// a write stream is still dirty in L2 when it ends (what a range does not count).
void l2_characterisation(CounterSession& session, const std::function<void()>& flush, const void* src, void* dst,
                         void* sink, std::size_t max_bytes, std::size_t l2) {
  std::printf("\nL2 reuse: read X bytes, then read them again (the second read is measured)\n");
  std::printf("%10s %12s %16s %14s\n", "X / L2", "X MiB", "2nd read DRAM MiB", "from DRAM");
  for (double f : {0.25, 0.5, 0.625, 0.75, 0.8125, 0.875, 0.9375, 1.0, 1.0625, 1.125, 1.25, 1.5, 2.0, 3.0}) {
    const std::size_t x = static_cast<std::size_t>(f * static_cast<double>(l2)) & ~std::size_t{15};
    if (x > max_bytes) break;
    const MemoryCounters m = session.measure([&] { flush(), probe::read_once(src, x, sink); },
                                             [&] { probe::read_once(src, x, sink); });
    std::printf("%10.4f %12.1f %16.1f %13.1f%%\n", f, x / kMiB, m.dram_read_bytes / kMiB,
                100.0 * m.dram_read_bytes / static_cast<double>(x));
  }
  std::printf("\nL2 write-back: write X bytes once; the bytes not yet in DRAM when the range ends\n");
  std::printf("%10s %12s %16s %16s\n", "X / L2", "X MiB", "DRAM write MiB", "still dirty MiB");
  for (double f : {0.5, 1.0, 2.0, 4.0}) {
    const std::size_t x = static_cast<std::size_t>(f * static_cast<double>(l2)) & ~std::size_t{15};
    if (x > max_bytes) break;
    const MemoryCounters m = session.measure(flush, [&] { probe::write_only(dst, x, 7); });
    std::printf("%10.2f %12.1f %16.1f %16.1f\n", f, x / kMiB, m.dram_write_bytes / kMiB,
                (static_cast<double>(x) - m.dram_write_bytes) / kMiB);
  }
}

int run(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count <= o.device || o.device < 0) {
    if (e != cudaSuccess)
      std::printf("SKIPPED: no CUDA device: cudaGetDeviceCount returned %s (%s)\n", cudaGetErrorName(e),
                  cudaGetErrorString(e));
    else
      std::printf("SKIPPED: no CUDA device %d: this machine has %d\n", o.device, count);
    return kSkip;
  }
  FLASHLAB_CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  FLASHLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  const std::size_t l2 = static_cast<std::size_t>(std::max(prop.l2CacheSize, 1 << 20));
  const std::size_t flush_bytes = std::max<std::size_t>(2 * l2, 8 << 20);
  std::size_t free_b = 0, total_b = 0;
  FLASHLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t room = free_b > flush_bytes + (512 << 20) ? (free_b - flush_bytes - (512 << 20)) / 2 : 0;
  if (o.bytes == 0)  // whole MiB
    o.bytes = std::min(std::max<std::size_t>(64 * l2, std::size_t{4} << 30), room) & ~((std::size_t{1} << 20) - 1);
  o.bytes &= ~std::size_t{15};
  if (o.bytes < 16 || o.bytes > room) {
    std::fprintf(stderr,
                 "flashlab_dram_probe: a buffer of %zu bytes does not fit: two of them and the flush buffer need "
                 "%.1f MiB, %.1f MiB are free\n",
                 o.bytes, (2.0 * o.bytes + flush_bytes) / kMiB, free_b / kMiB);
    return 2;
  }

  const std::string exe = self_path(argv[0]);
  std::string why;
  std::unique_ptr<CounterSession> session;
  if (!o.ncu_mode && !(session = CounterSession::open(o.device, &why))) {
    std::printf("SKIPPED: %s\n", why.c_str());
    print_ncu_commands(exe, o);  // ncu may still read the counters
    return kSkip;
  }

  void *src = nullptr, *dst = nullptr, *scratch = nullptr, *sink = nullptr;
  FLASHLAB_CUDA_CHECK(cudaMalloc(&src, o.bytes));
  FLASHLAB_CUDA_CHECK(cudaMalloc(&dst, o.bytes));
  FLASHLAB_CUDA_CHECK(cudaMalloc(&scratch, flush_bytes));
  FLASHLAB_CUDA_CHECK(cudaMalloc(&sink, 16));
  probe::fill(src, o.bytes, 1);
  probe::fill(dst, o.bytes, 2);
  probe::fill(scratch, flush_bytes, 3);
  FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());

  const double n = static_cast<double>(o.bytes);
  const std::vector<Case> cases = {
      {probe::kReadKernel, "reads the buffer once", n, 0, [&] { probe::read_once(src, o.bytes, sink); }},
      {probe::kCopyKernel, "copies it", n, n, [&] { probe::copy(src, dst, o.bytes); }},
      {probe::kWriteKernel, "writes it once", 0, n, [&] { probe::write_only(dst, o.bytes, 4); }},
  };
  const auto flush = [&] {
    if (o.flush_by_writing)
      probe::fill(scratch, flush_bytes, 5);
    else
      probe::flush_l2(scratch, flush_bytes, sink);
  };
  if (o.ncu_mode) {
    for (const Case& c : cases) flush(), c.launch();
    FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("ran %s, %s and %s once each on %zu bytes, each after an L2 flush\n", probe::kReadKernel,
                probe::kCopyKernel, probe::kWriteKernel, o.bytes);
    return 0;
  }

  std::printf("flashlab_dram_probe: %s (sm_%d%d, %d SMs, L2 %.1f MiB), device %d\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, l2 / kMiB, o.device);
  std::printf("counters: %s\n", session->description().c_str());
  std::printf("buffer: %.1f MiB (%.1fx the L2), 16-byte accesses; before every pass the L2 is flushed by %s %.1f MiB\n",
              n / kMiB, n / static_cast<double>(l2), o.flush_by_writing ? "writing" : "reading", flush_bytes / kMiB);
  std::printf("tolerance: |measured - expected| <= %.0f%% of the buffer (%.1f MiB); writes still in the L2 when\n"
              "  the range ends (at most %.1f MiB) are not in DRAM yet and not counted, as in ncu\n\n",
              kTolerance * 100, kTolerance * n / kMiB, l2 / kMiB);
  std::printf("%-18s %-14s %14s %14s %12s   %s\n", "kernel", "traffic", "expected MiB", "measured MiB",
              "meas./exp.", "verdict");
  bool pass = true;
  for (const Case& c : cases) {
    const MemoryCounters m = session->measure(flush, c.launch);
    const double slack = kTolerance * n;
    pass &= row(c.kernel, "DRAM read", c.read_bytes, m.dram_read_bytes, slack);
    pass &= row("", "DRAM write", c.write_bytes, m.dram_write_bytes, slack);
    pass &= row("", "L2 read (SMs)", c.read_bytes, m.l2_read_bytes, slack);
    pass &= row("", "L2 write (SMs)", c.write_bytes, m.l2_write_bytes, slack);
    char hit[32] = "n/a";
    if (m.l2_hit_rate >= 0) std::snprintf(hit, sizeof hit, "%.1f%%", m.l2_hit_rate * 100);
    std::printf("%-18s %-14s %s; L2 hit rate %s; %d pass%s\n", "", "", c.what, hit, m.passes,
                m.passes == 1 ? "" : "es");
  }
  print_ncu_commands(exe, o);
  if (o.l2_curve) l2_characterisation(*session, flush, src, dst, sink, o.bytes, l2);
  (void)cudaFree(src), (void)cudaFree(dst), (void)cudaFree(scratch), (void)cudaFree(sink);
  std::printf("\n%s: CUPTI's DRAM and L2 bytes %s within %.0f%% of what each kernel moves\n", pass ? "PASS" : "FAIL",
              pass ? "are" : "are not", kTolerance * 100);
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
