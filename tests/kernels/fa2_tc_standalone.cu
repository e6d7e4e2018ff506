// Standalone checker and benchmark for the fa2_tc rung (no Catch2, no Eigen):
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -Ikernels/include -Isim/include \
//        [-DFA2_TC_VARIANTS] tests/kernels/fa2_tc_standalone.cu kernels/src/rungs/fa2_tc.cu \
//        kernels/src/rungs/tensor_core_rungs.cpp sim/src/problem/tensor_core_configs.cpp \
//        kernels/src/device/timing.cpp kernels/src/device/device_timing.cpp -o fa2_tc_check
//   ./fa2_tc_check [--quick] [--defaults-only] [--no-check] [--no-perf] [--reps N] [--csv FILE]
//   --quick: N ∈ {1, 17, 65, 129} only, no timing (sized for compute-sanitizer)
//   --defaults-only: only the compiled configurations (fa2_tc_forward)
//
// Correctness: random normal inputs (fixed seeds, never zeros), an fp64 CPU
// reference on the inputs as rounded to the dtype, the output and LSE poisoned
// with NaN first and every element checked finite (written), relative
// Frobenius error of O and relative max error of the LSE per case.
// Performance: the FlashAttention-2 paper's grid (fp16, 16k tokens, hidden
// 2048), timed as the runner times (flashlab/kernels/device/device_timing.hpp:
// CUDA events around each launch, L2 flushed before each, three warm-ups),
// median of the repeats, TFLOP/s by the convention 4·B·H·N²·d (halved when
// causal). Built with -DFA2_TC_VARIANTS it also checks and times alternative
// tile configurations from kernels/src/rungs/fa2_tc_kernel.cuh, to choose the compiled
// ones from measurements.
// Exit status: 0 when every case passes.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/rungs/fa2_tc.hpp"
#include "flashlab/sim/core/median.hpp"
#ifdef FA2_TC_VARIANTS
#include "rungs/fa2_tc_kernel.cuh"
#endif

using flashlab::kernels::CudaError;
using flashlab::kernels::LaunchArgs;
using flashlab::kernels::Unsupported;
using flashlab::sim::DType;
using flashlab::sim::TileShape;

// A failed CUDA call ends the checker (exit 2) with the library's message:
// file:line, the call and CUDA's own words (kernels/src/device/cuda_check.hpp).
#define CHECK_CUDA(call)                             \
  do {                                               \
    try {                                            \
      FLASHLAB_CUDA_CHECK(call);                     \
    } catch (const CudaError& e) {                   \
      std::fprintf(stderr, "%s\n", e.what());        \
      std::exit(2);                                  \
    }                                                \
  } while (0)

namespace {

// ---------------------------------------------------------------------------
// Kernels under test: the contract entry point, plus (optionally) variants.
// ---------------------------------------------------------------------------
struct Variant {
  std::string name;
  int d = 0;  // 0: every compiled head dim (the contract entry point)
  TileShape tiles;
  std::function<void(const LaunchArgs&)> run;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back({"fa2_tc", 0, {}, [](const LaunchArgs& a) { flashlab::kernels::fa2_tc_forward(a); }});
#ifdef FA2_TC_VARIANTS
  namespace D = flashlab::kernels::fa2_tc_detail;
  auto add = [&v](auto cfg_tag, const char* name) {
    using Cfg = decltype(cfg_tag);
    v.push_back({name, Cfg::kHeadDim, {Cfg::kBr, Cfg::kBc}, [](const LaunchArgs& a) {
                   if (a.problem.dtype == DType::bf16)
                     D::launch<Cfg, __nv_bfloat16>(a, "variant");
                   else
                     D::launch<Cfg, __half>(a, "variant");
                 }});
  };
  // name: d, B_r x B_c, warps, where Q_i fragments live, min blocks/SM
  add(D::Config<64, 128, 64, 8, true, 2>{}, "d64_128x64_w8_qreg_b2");
  add(D::Config<64, 128, 128, 8, true, 1>{}, "d64_128x128_w8_qreg_b1");
  add(D::Config<64, 128, 64, 4, false, 2>{}, "d64_128x64_w4_qsmem_b2");
  add(D::Config<64, 64, 64, 4, true, 3>{}, "d64_64x64_w4_qreg_b3");
  add(D::Config<128, 128, 64, 8, false, 2>{}, "d128_128x64_w8_qsmem_b2");
  add(D::Config<128, 128, 64, 8, true, 1>{}, "d128_128x64_w8_qreg_b1");  // the first default
  add(D::Config<128, 64, 64, 4, true, 2>{}, "d128_64x64_w4_qreg_b2");
  add(D::Config<128, 128, 64, 4, false, 2>{}, "d128_128x64_w4_qsmem_b2(spills)");
#endif
  return v;
}

// ---------------------------------------------------------------------------
// Host data.
// ---------------------------------------------------------------------------
template <typename T>
T from_float(float x);
template <>
__half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
float to_float(__half x) { return __half2float(x); }
float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
struct HostTensor {
  std::vector<T> dev;      // as sent to the device
  std::vector<float> ref;  // the same values, exactly, for the reference
};

template <typename T>
HostTensor<T> random_tensor(std::size_t n, float scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  HostTensor<T> t;
  t.dev.resize(n);
  t.ref.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.dev[i] = from_float<T>(normal(rng) * scale);
    t.ref[i] = to_float(t.dev[i]);
  }
  return t;
}

template <typename F>
void parallel_for(int n, F f) {
  const int workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([=, &f] {
      for (int i = w; i < n; i += workers) f(i);
    });
  for (auto& th : pool) th.join();
}

// Every row of one head through the fp64 reference the runner checks against
// (key c is visible to query r iff !causal or c ≤ r), rows in parallel.
void reference_head(const float* q, const float* k, const float* v, int nq, int nkv, int d,
                    bool causal, double tau, double* o, double* lse) {
  const flashlab::kernels::HeadReference head(k, v, nkv, d);
  parallel_for(nq, [&](int r) { lse[r] = head.row(q + std::size_t(r) * d, r, tau, causal, o + std::size_t(r) * d); });
}

// ---------------------------------------------------------------------------
// Device buffers.
// ---------------------------------------------------------------------------
struct DeviceBuffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) { CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(n, 16))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

int g_smem_optin = 0;
int g_l2_bytes = 0;

LaunchArgs make_args(int B, int H, int nq, int nkv, int d, bool causal, DType dt, const void* q,
                     const void* k, const void* v, void* o, float* lse) {
  LaunchArgs a;
  a.problem.batch = B;
  a.problem.heads = H;
  a.problem.seq_q = nq;
  a.problem.seq_kv = nkv;
  a.problem.head_dim = d;
  a.problem.causal = causal;
  a.problem.dtype = dt;
  a.softmax_scale = 1.f / std::sqrt(static_cast<float>(d));
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = lse;
  a.stream = nullptr;
  a.device_smem_optin = g_smem_optin;
  return a;
}

// ---------------------------------------------------------------------------
// Correctness.
// ---------------------------------------------------------------------------
struct Case {
  DType dt;
  int d, nq, nkv;
  bool causal;
  float scale;  // input magnitude: 1, or 30 for the softmax-stability cases
  int B, H;
  bool with_lse = true;
  bool own_stream = false;
  const char* note = "";
};

struct Tally {
  int passed = 0, failed = 0;
  double worst_fp16 = 0, worst_bf16 = 0, worst_lse = 0;
};

// Tolerance on the relative Frobenius error of O: fp32 accumulation lands near
// 1e-3 (fp16: P rounded to 11 bits before PV) or a few 1e-3 (bf16: 8 bits);
// 2e-2 is the kernel ladder's ceiling for every 16-bit rung. The LSE is computed in
// fp32 from fp32 accumulators: 1e-3 relative (to max(1, |L|)) is loose.
constexpr double kTolO = 2e-2;
constexpr double kTolLse = 1e-3;

template <typename T>
bool run_case(const Variant& var, const Case& c, std::uint64_t seed, Tally& tally) {
  const std::size_t nq_el = std::size_t(c.B) * c.H * c.nq * c.d;
  const std::size_t nkv_el = std::size_t(c.B) * c.H * c.nkv * c.d;
  const auto q = random_tensor<T>(nq_el, c.scale, seed * 3 + 1);
  const auto k = random_tensor<T>(nkv_el, c.scale, seed * 3 + 2);
  const auto v = random_tensor<T>(nkv_el, c.scale, seed * 3 + 3);

  DeviceBuffer dq(nq_el * sizeof(T)), dk(nkv_el * sizeof(T)), dv(nkv_el * sizeof(T));
  DeviceBuffer dout(nq_el * sizeof(T)), dlse(std::size_t(c.B) * c.H * c.nq * sizeof(float));
  CHECK_CUDA(cudaMemcpy(dq.p, q.dev.data(), dq.bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dk.p, k.dev.data(), dk.bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dv.p, v.dev.data(), dv.bytes, cudaMemcpyHostToDevice));
  // Poison: 0xFFFF is a NaN in fp16 and bf16, 0xFFFFFFFF in fp32.
  CHECK_CUDA(cudaMemset(dout.p, 0xFF, dout.bytes));
  CHECK_CUDA(cudaMemset(dlse.p, 0xFF, dlse.bytes));

  cudaStream_t stream = nullptr;
  if (c.own_stream) CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  LaunchArgs a = make_args(c.B, c.H, c.nq, c.nkv, c.d, c.causal, c.dt, dq.p, dk.p, dv.p, dout.p,
                           c.with_lse ? static_cast<float*>(dlse.p) : nullptr);
  a.stream = stream;
  std::string error;
  try {
    var.run(a);
    CHECK_CUDA(cudaStreamSynchronize(stream));
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (c.own_stream) CHECK_CUDA(cudaStreamDestroy(stream));

  std::vector<T> out(nq_el);
  std::vector<float> lse(std::size_t(c.B) * c.H * c.nq);
  CHECK_CUDA(cudaMemcpy(out.data(), dout.p, dout.bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), dlse.p, dlse.bytes, cudaMemcpyDeviceToHost));

  // Every element written (the NaN poison gone) and finite.
  std::size_t bad_o = 0, bad_lse = 0;
  for (const T& x : out) bad_o += !std::isfinite(to_float(x));
  if (c.with_lse)
    for (float x : lse) bad_lse += !std::isfinite(x);

  // Reference on every head (the cases are sized for it).
  const double tau = 1.0 / std::sqrt(static_cast<double>(c.d));
  double num = 0, den = 0, lse_err = 0;
  std::vector<double> o_ref(std::size_t(c.nq) * c.d), lse_ref(c.nq);
  for (int h = 0; h < c.B * c.H; ++h) {
    const std::size_t oq = std::size_t(h) * c.nq * c.d, okv = std::size_t(h) * c.nkv * c.d;
    reference_head(q.ref.data() + oq, k.ref.data() + okv, v.ref.data() + okv, c.nq, c.nkv, c.d,
                   c.causal, tau, o_ref.data(), lse_ref.data());
    for (std::size_t i = 0; i < o_ref.size(); ++i) {
      const double diff = static_cast<double>(to_float(out[oq + i])) - o_ref[i];
      num += diff * diff;
      den += o_ref[i] * o_ref[i];
    }
    if (c.with_lse)
      for (int r = 0; r < c.nq; ++r) {
        const double got = lse[std::size_t(h) * c.nq + r];
        lse_err = std::max(lse_err, std::fabs(got - lse_ref[r]) / std::max(1.0, std::fabs(lse_ref[r])));
      }
  }
  const double err = std::sqrt(num / std::max(den, 1e-300));
  const bool ok = error.empty() && bad_o == 0 && bad_lse == 0 && std::isfinite(err) && err <= kTolO &&
                  !(lse_err > kTolLse);  // NaN-safe
  if (ok) {
    ++tally.passed;
    double& worst = c.dt == DType::fp16 ? tally.worst_fp16 : tally.worst_bf16;
    worst = std::max(worst, err);
    tally.worst_lse = std::max(tally.worst_lse, lse_err);
  } else {
    ++tally.failed;
  }
  std::printf("%s %-30s %s d=%-3d B=%d H=%d N_q=%-5d N_kv=%-5d causal=%d x%-2g lse=%d err_O=%.3e err_LSE=%.3e"
              " nonfinite_O=%zu nonfinite_LSE=%zu%s%s%s%s\n",
              ok ? "PASS" : "FAIL", var.name.c_str(), c.dt == DType::fp16 ? "fp16" : "bf16", c.d, c.B,
              c.H, c.nq, c.nkv, c.causal ? 1 : 0, c.scale, c.with_lse ? 1 : 0, err, lse_err, bad_o,
              bad_lse, *c.note ? " " : "", c.note, error.empty() ? "" : " error: ", error.c_str());
  std::fflush(stdout);
  return ok;
}

bool run_case_any(const Variant& var, const Case& c, std::uint64_t seed, Tally& t) {
  return c.dt == DType::fp16 ? run_case<__half>(var, c, seed, t) : run_case<__nv_bfloat16>(var, c, seed, t);
}

std::vector<Case> cases_for(int d, bool quick) {
  std::vector<Case> cs;
  const std::vector<int> ns = quick ? std::vector<int>{1, 17, 65, 129} : std::vector<int>{1, 2, 17, 63, 64, 65, 127, 128, 129, 1000, 2048};
  for (DType dt : {DType::fp16, DType::bf16})
    for (int causal = 0; causal < 2; ++causal)
      for (int n : ns) {
        // Several heads on small problems (the grid decode); two on large ones.
        const int B = n <= 129 ? 2 : 1, H = n <= 129 ? 3 : 2;
        cs.push_back({dt, d, n, n, causal == 1, 1.f, B, H});
      }
  if (quick) return cs;
  // seq_kv ≠ seq_q (non-causal), N_q = 1 included.
  const int pairs[][2] = {{1, 1}, {1, 77}, {1, 2048}, {17, 300}, {128, 64}, {200, 1000}, {1000, 129}, {64, 1}, {3, 4097}};
  for (DType dt : {DType::fp16, DType::bf16})
    for (const auto& pq : pairs) cs.push_back({dt, d, pq[0], pq[1], false, 1.f, 1, 2});
  // Causal with N_q ≠ N_kv: top-left alignment (key c visible to query r iff c ≤ r).
  for (DType dt : {DType::fp16, DType::bf16}) {
    cs.push_back({dt, d, 100, 300, true, 1.f, 1, 2, true, false, "top-left causal"});
    cs.push_back({dt, d, 300, 100, true, 1.f, 1, 2, true, false, "top-left causal"});
  }
  // Inputs ×30: S·τ in the hundreds, softmax must stay finite and accurate.
  for (DType dt : {DType::fp16, DType::bf16})
    for (int causal = 0; causal < 2; ++causal)
      for (int n : {65, 1000}) cs.push_back({dt, d, n, n, causal == 1, 30.f, 1, 2});
  // LSE not requested; a non-default stream.
  cs.push_back({DType::fp16, d, 130, 130, true, 1.f, 2, 2, false, false, "lse=null"});
  cs.push_back({DType::bf16, d, 257, 257, false, 1.f, 2, 2, true, true, "own stream"});
  return cs;
}

// The refusals the contract promises.
void check_refusals(Tally& t) {
  DeviceBuffer buf(1 << 20);
  auto expect = [&t](const char* what, const std::function<void()>& f, bool want_unsupported) {
    std::string msg = "no exception";
    bool ok = false;
    try {
      f();
    } catch (const Unsupported& e) {
      msg = std::string("Unsupported: ") + e.what();
      ok = want_unsupported;
    } catch (const std::invalid_argument& e) {
      msg = std::string("invalid_argument: ") + e.what();
      ok = !want_unsupported;
    } catch (const std::exception& e) {
      msg = std::string("other: ") + e.what();
    }
    ok ? ++t.passed : ++t.failed;
    std::printf("%s refusal: %s -> %s\n", ok ? "PASS" : "FAIL", what, msg.c_str());
  };
  auto args = [&](int d, DType dt) {
    return make_args(1, 1, 64, 64, d, false, dt, buf.p, buf.p, buf.p, buf.p, nullptr);
  };
  expect("fp32", [&] { flashlab::kernels::fa2_tc_forward(args(64, DType::fp32)); }, true);
  expect("d=32", [&] { flashlab::kernels::fa2_tc_forward(args(32, DType::fp16)); }, true);
  expect("tiles d=48", [&] { (void)flashlab::kernels::fa2_tc_tiles(48); }, true);
  expect("smem limit 1000 bytes", [&] {
    LaunchArgs a = args(128, DType::fp16);
    a.device_smem_optin = 1000;
    flashlab::kernels::fa2_tc_forward(a);
  }, true);
  expect("softmax_scale 0", [&] {
    LaunchArgs a = args(64, DType::fp16);
    a.softmax_scale = 0;
    flashlab::kernels::fa2_tc_forward(a);
  }, true);
  expect("misaligned q", [&] {
    LaunchArgs a = args(64, DType::fp16);
    a.q = static_cast<char*>(buf.p) + 2;
    flashlab::kernels::fa2_tc_forward(a);
  }, true);
  expect("null o", [&] {
    LaunchArgs a = args(64, DType::fp16);
    a.o = nullptr;
    flashlab::kernels::fa2_tc_forward(a);
  }, false);
  CHECK_CUDA(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------------------
// Performance.
// ---------------------------------------------------------------------------
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// Normal values from a counter-based hash (Box–Muller): a fixed seed, no host
// round trip for the 64 MiB tensors of the benchmark.
__global__ void fill_normal_fp16(__half* x, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
    const float u1 = (static_cast<float>(h >> 40) + 1.f) * (1.f / 16777217.f);  // (0, 1]
    const float u2 = static_cast<float>(h & 0xffffff) * (1.f / 16777216.f);
    x[i] = __float2half_rn(sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));
  }
}

struct PerfRow {
  std::string variant;
  int N, d, B, H;
  bool causal;
  double median_ms, min_ms, max_ms, tflops;
  std::string status;
};

PerfRow bench(const Variant& var, int N, int d, bool causal, int reps) {
  PerfRow row{var.name, N, d, 16384 / N, 2048 / d, causal, 0, 0, 0, 0, "ok"};
  const std::size_t el = std::size_t(row.B) * row.H * N * d;
  DeviceBuffer q(el * 2), k(el * 2), v(el * 2), o(el * 2), lse(std::size_t(row.B) * row.H * N * 4);
  fill_normal_fp16<<<1024, 256>>>(static_cast<__half*>(q.p), el, 11);
  fill_normal_fp16<<<1024, 256>>>(static_cast<__half*>(k.p), el, 12);
  fill_normal_fp16<<<1024, 256>>>(static_cast<__half*>(v.p), el, 13);
  CHECK_CUDA(cudaGetLastError());
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  const flashlab::kernels::L2Flush flush(device, g_l2_bytes);
  flashlab::kernels::TimingOptions timing;
  timing.warmup = 3;  // also sets the shared-memory attribute
  timing.repeats = reps;
  timing.target_ms = 0;
  LaunchArgs a = make_args(row.B, row.H, N, N, d, causal, DType::fp16, q.p, k.p, v.p, o.p,
                           static_cast<float*>(lse.p));
  try {
    const flashlab::sim::Spread ms =
        flashlab::sim::spread(flashlab::kernels::time_runs(nullptr, timing, &flush, {}, [&] { var.run(a); }));
    row.median_ms = ms.median;
    row.min_ms = ms.min;
    row.max_ms = ms.max;
    const double flops = 4.0 * row.B * row.H * double(N) * N * d * (causal ? 0.5 : 1.0);
    row.tflops = flops / (row.median_ms * 1e-3) / 1e12;
  } catch (const std::exception& e) {
    row.status = std::string("error: ") + e.what();
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, do_check = true, do_perf = true, defaults_only = false;
  int reps = 30;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--quick") quick = true, do_perf = false;
    else if (s == "--no-check") do_check = false;
    else if (s == "--defaults-only") defaults_only = true;
    else if (s == "--no-perf") do_perf = false;
    else if (s == "--reps" && i + 1 < argc) reps = std::max(20, std::atoi(argv[++i]));
    else if (s == "--csv" && i + 1 < argc) csv = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--defaults-only] [--no-check] [--no-perf] [--reps N>=20] [--csv FILE]\n",
                   argv[0]);
      return 2;
    }
  }

  int dev = 0, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: nothing to check\n");
    return 2;
  }
  CHECK_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&g_smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&g_l2_bytes, cudaDevAttrL2CacheSize, dev));
  int runtime = 0, driver = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  std::printf("device: %s, sm_%d%d, %d SMs, smem opt-in %d B, L2 %d B, runtime %d, driver %d\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, g_smem_optin, g_l2_bytes, runtime, driver);
  std::printf("fa2_tc compiled head dims:");
  for (int d : flashlab::kernels::fa2_tc_head_dims()) {
    const TileShape t = flashlab::kernels::fa2_tc_tiles(d);
    std::printf(" d=%d (B_r=%lld, B_c=%lld, smem %zu B)", d, static_cast<long long>(t.Br),
                static_cast<long long>(t.Bc), flashlab::kernels::fa2_tc_smem_bytes(d));
  }
  std::printf("\n");

  std::vector<Variant> vars = variants();
  if (defaults_only) vars.resize(1);
  Tally tally;
  if (do_check) {
    check_refusals(tally);
    std::uint64_t seed = 1000;
    for (const Variant& var : vars) {
      const std::vector<int> ds = var.d ? std::vector<int>{var.d} : flashlab::kernels::fa2_tc_head_dims();
      // Variants get the quick set: same code, other tile constants.
      const bool q = quick || var.d != 0;
      for (int d : ds)
        for (const Case& c : cases_for(d, q)) run_case_any(var, c, ++seed, tally);
    }
  }

  std::vector<PerfRow> rows;
  if (do_perf) {
    std::printf("\nperf: fp16, B = 16384/N, H = 2048/d, %d repeats, L2 flushed, median; TFLOP/s = 4·B·H·N²·d/t (÷2 causal)\n", reps);
    for (int d : {64, 128})
      for (int causal = 0; causal < 2; ++causal)
        for (int N : {1024, 4096, 16384})
          for (const Variant& var : vars) {
            if (var.d != 0 && var.d != d) continue;
            PerfRow r = bench(var, N, d, causal == 1, reps);
            std::printf("PERF %-32s d=%-3d N=%-5d B=%-2d H=%-2d causal=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f tflops=%.1f %s\n",
                        r.variant.c_str(), d, N, r.B, r.H, causal, r.median_ms, r.min_ms, r.max_ms, r.tflops,
                        r.status.c_str());
            std::fflush(stdout);
            rows.push_back(r);
          }
    if (!csv.empty()) {
      if (FILE* f = std::fopen(csv.c_str(), "w")) {
        std::fprintf(f, "variant,d,N,B,H,causal,median_ms,min_ms,max_ms,tflops,status\n");
        for (const auto& r : rows)
          std::fprintf(f, "%s,%d,%d,%d,%d,%d,%.5f,%.5f,%.5f,%.2f,%s\n", r.variant.c_str(), r.d, r.N, r.B, r.H,
                       r.causal ? 1 : 0, r.median_ms, r.min_ms, r.max_ms, r.tflops, r.status.c_str());
        std::fclose(f);
      }
    }
  }

  if (do_check)
    std::printf("\nSUMMARY: %d passed, %d failed; worst err_O fp16 %.2e, bf16 %.2e; worst err_LSE %.2e (tolerances %.0e, %.0e)\n",
                tally.passed, tally.failed, tally.worst_fp16, tally.worst_bf16, tally.worst_lse, kTolO, kTolLse);
  return tally.failed == 0 ? 0 : 1;
}
