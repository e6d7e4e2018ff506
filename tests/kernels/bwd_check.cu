// flashlab_bwd_check: the backward rungs on the device, called directly (no
// runner, no registry), for choosing the tensor-core configuration from
// measurements and for a first look at a new GPU:
//
//   flashlab_bwd_check check            every rung against fp64 gradients
//   flashlab_bwd_check time [--json F]  the 16k-token grid, each rung and each
//                                       compiled variant of fa2_tc_bwd
//   flashlab_bwd_check quick            a few small cases (for compute-sanitizer)
//
// Correctness: fresh random inputs per case (Q, K, V ~ N(0, 1), dO ~ N(0, 1);
// never zeros), the forward rung each backward reads (naive_cublas, fa2,
// fa2_tc, fa3_hopper) run first, dQ, dK and dV poisoned with NaN before the backward and
// every element checked written, the relative Frobenius error of each against
// the fp64 gradients of attention_reference.hpp on every head. Bound: the
// GPU tests' rule (2× naive_bwd's error on the same inputs, the dtype's unit
// roundoff at least, 2e-2 at most; fp32 1e-5).
// Timing: CUDA events around the backward launch alone (its pre-pass and
// convert kernels included), after a write of 2× the L2, median of the
// repeats; TFLOP/s by the backward convention 2.5 × 4·B·H·N²·d (halved when
// causal). --json writes the rows as flashlab-bench/1 (direction "bwd") for
// scripts/torch_compare.py. Built with FLASHLAB_BWD_VARIANTS it also times
// alternative fa2_tc_bwd configurations from kernels/src/rungs/fa2_tc_bwd_kernel.cuh.
// Exit status: 0 when every case passes, 1 otherwise, 77 without a device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "device/cuda_check.hpp"
#include "device/device_utils.hpp"
#include "rungs/fa2_tc_bwd_kernel.cuh"
#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/rungs/fa2_tc.hpp"
#include "flashlab/kernels/rungs/fa2_tc_bwd.hpp"
#include "flashlab/kernels/rungs/fa3_hopper.hpp"
#include "flashlab/kernels/rungs/fa3_hopper_bwd.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"
#include "flashlab/sim/core/median.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "../support/problems.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using sim::DType;
using sim::i64;
using flashlab::test::problem;

namespace {

struct Buffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit Buffer(std::size_t n) : bytes(n) {
    if (n > 0) FLASHLAB_CUDA_CHECK(cudaMalloc(&p, n));
  }
  ~Buffer() { (void)cudaFree(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

using Launch = std::function<void(const LaunchArgs&)>;

// A backward rung as this checker runs it: its forward, its tiles, its workspace.
struct Rung {
  std::string id;
  std::string forward;  // "naive_cublas", "fa2", "fa2_tc", "fa3_hopper"
  Launch fwd, bwd;
  std::function<bool(DType, int)> supports;
  std::function<sim::TileShape(const sim::AttentionProblem&)> tiles;  // fwd and bwd tiles are each rung's own; fa2's default here
  std::function<i64(const sim::AttentionProblem&)> workspace;
};

bool tc_dtype(DType t) { return t != DType::fp32; }
bool has(const std::vector<int>& v, int d) { return std::find(v.begin(), v.end(), d) != v.end(); }

std::vector<Rung> rungs(bool variants) {
  std::vector<Rung> r;
  r.push_back({"naive_bwd", "naive_cublas", naive_cublas_forward, naive_backward, [](DType, int) { return true; },
               [](const sim::AttentionProblem&) { return sim::TileShape{0, 0}; }, layout::naive_bwd_workspace_bytes});
  r.push_back({"fa2_bwd", "fa2", fa2_forward, fa2_backward,
               [](DType, int d) { return has(layout::fa_head_dims(), d); },
               [](const sim::AttentionProblem& p) { return layout::fa_bwd_default_tiles(p.head_dim); },
               layout::fa_bwd_workspace_bytes});
  r.push_back({"fa2_tc_bwd", "fa2_tc", fa2_tc_forward, fa2_tc_backward,
               [](DType t, int d) { return tc_dtype(t) && has(fa2_tc_bwd_head_dims(), d); },
               [](const sim::AttentionProblem& p) { return fa2_tc_bwd_tiles(static_cast<int>(p.head_dim)); },
               layout::fa_bwd_workspace_bytes});
  r.push_back({"fa3_hopper_bwd", "fa3_hopper", fa3_hopper_forward, fa3_hopper_backward,
               [](DType t, int d) { return tc_dtype(t) && sim::hopper_bwd_config(d, false).has_value(); },
               [](const sim::AttentionProblem& p) { return sim::tiles_of(*sim::hopper_bwd_config(p.head_dim, p.causal)); },
               layout::fa2_tc_bwd_workspace_bytes});
#ifdef FLASHLAB_BWD_VARIANTS
  if (variants) {
    namespace B = fa2_tc_bwd_detail;
    auto add = [&r](const char* name, int d, auto cfg) {
      using Cfg = decltype(cfg);
      Rung v{name, "fa2_tc", fa2_tc_forward,
             [name](const LaunchArgs& a) {
               if (a.problem.dtype == DType::fp16) B::launch<Cfg, __half>(a, name);
               else B::launch<Cfg, __nv_bfloat16>(a, name);
             },
             [d](DType t, int dd) { return tc_dtype(t) && dd == d; },
             [](const sim::AttentionProblem&) { return sim::TileShape{Cfg::kBr, Cfg::kBc}; },
             layout::fa_bwd_workspace_bytes};
      r.push_back(v);
    };
    // B_r × B_c below is the simulator's naming: B_c keys per block, B_r queries per step.
    // Each compiled configuration without the deferred dQ, and the runners-up of the first timing.
    add("tc_d64_32x128_w4", 64, B::Config<64, 128, 32, 4, false, 2>{});
    add("tc_d64_64x128_w8_kvreg", 64, B::Config<64, 128, 64, 8, true, 1>{});
    add("tc_d128_64x128_w8", 128, B::Config<128, 128, 64, 8, false, 1>{});
    add("tc_d128_32x128_w8", 128, B::Config<128, 128, 32, 8, false, 1>{});
  }
#else
  (void)variants;
#endif
  return r;
}

i64 bytes_of(const sim::AttentionProblem& p, i64 rows, i64 cols, i64 elem) { return p.head_count() * rows * cols * elem; }

// One problem's device buffers: inputs filled once, outputs per run.
struct Case {
  sim::AttentionProblem p;
  i64 es = 0;
  Buffer q, k, v, o, lse, d_o, dq, dk, dv;
  explicit Case(const sim::AttentionProblem& pr)
      : p(pr),
        es(sim::dtype_bytes(pr.dtype)),
        q(bytes_of(pr, pr.n_q(), pr.head_dim, es)),
        k(bytes_of(pr, pr.n_kv(), pr.head_dim, es)),
        v(bytes_of(pr, pr.n_kv(), pr.head_dim, es)),
        o(bytes_of(pr, pr.n_q(), pr.head_dim, es)),
        lse(bytes_of(pr, pr.n_q(), 1, 4)),
        d_o(bytes_of(pr, pr.n_q(), pr.head_dim, es)),
        dq(bytes_of(pr, pr.n_q(), pr.head_dim, es)),
        dk(bytes_of(pr, pr.n_kv(), pr.head_dim, es)),
        dv(bytes_of(pr, pr.n_kv(), pr.head_dim, es)) {}
  void fill(std::uint64_t seed) {
    const i64 nq = p.head_count() * p.n_q() * p.head_dim, nkv = p.head_count() * p.n_kv() * p.head_dim;
    detail::fill_normal(q.p, nq, p.dtype, seed ^ 0x1111, 1.f, nullptr);
    detail::fill_normal(k.p, nkv, p.dtype, seed ^ 0x2222, 1.f, nullptr);
    detail::fill_normal(v.p, nkv, p.dtype, seed ^ 0x3333, 1.f, nullptr);
    detail::fill_normal(d_o.p, nq, p.dtype, seed ^ 0x4444, 1.f, nullptr);
  }
  void poison() {
    FLASHLAB_CUDA_CHECK(cudaMemsetAsync(dq.p, 0xff, dq.bytes, nullptr));
    FLASHLAB_CUDA_CHECK(cudaMemsetAsync(dk.p, 0xff, dk.bytes, nullptr));
    FLASHLAB_CUDA_CHECK(cudaMemsetAsync(dv.p, 0xff, dv.bytes, nullptr));
  }
};

struct Prepared {
  LaunchArgs a;
  std::unique_ptr<Buffer> fwd_ws, bwd_ws;
};

// Runs the rung's forward into the case's O, LSE and a forward workspace, and
// returns the backward's arguments.
Prepared prepare(const Rung& r, Case& c, int smem_optin) {
  Prepared out;
  LaunchArgs a;
  a.problem = c.p;
  a.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.p.head_dim)));
  a.q = c.q.p;
  a.k = c.k.p;
  a.v = c.v.p;
  a.o = c.o.p;
  a.lse = static_cast<float*>(c.lse.p);
  a.device_smem_optin = smem_optin;
  const int d = static_cast<int>(c.p.head_dim);
  LaunchArgs f = a;
  if (r.forward == "naive_cublas") {
    out.fwd_ws = std::make_unique<Buffer>(layout::materialized_workspace_bytes(c.p));
    f.workspace = out.fwd_ws->p;
    f.workspace_bytes = out.fwd_ws->bytes;
  } else if (r.forward == "fa2") {
    f.tiles = layout::fa_default_tiles(d);
  } else if (r.forward == "fa3_hopper") {
    f.tiles = sim::tiles_of(*sim::hopper_config(d));
  } else {
    f.tiles = fa2_tc_tiles(d);
  }
  r.fwd(f);
  a.tiles = r.tiles(c.p);
  out.bwd_ws = std::make_unique<Buffer>(r.workspace(c.p));
  a.workspace = out.bwd_ws->p;
  a.workspace_bytes = out.bwd_ws->bytes;
  a.bwd.d_o = c.d_o.p;
  a.bwd.dq = c.dq.p;
  a.bwd.dk = c.dk.p;
  a.bwd.dv = c.dv.p;
  if (out.fwd_ws) {
    a.bwd.forward_workspace = out.fwd_ws->p;
    a.bwd.forward_workspace_bytes = out.fwd_ws->bytes;
  }
  out.a = a;
  return out;
}

std::vector<double> download(const Buffer& b, DType t) {
  std::vector<unsigned char> host(b.bytes);
  FLASHLAB_CUDA_CHECK(cudaMemcpy(host.data(), b.p, b.bytes, cudaMemcpyDeviceToHost));
  return to_doubles(host.data(), static_cast<i64>(b.bytes / sim::dtype_bytes(t)), t);
}

double tolerance(DType t, double naive_error) {
  if (t == DType::fp32) return 1e-5;
  const double unit = t == DType::fp16 ? 0x1p-11 : 0x1p-8;
  return std::min(2e-2, std::max(2 * naive_error, unit));
}

const char* name(DType t) { return t == DType::fp16 ? "fp16" : t == DType::bf16 ? "bf16" : "fp32"; }

int g_pass = 0, g_fail = 0;

void check_case(const std::vector<Rung>& rs, const sim::AttentionProblem& p, std::uint64_t seed, int smem_optin) {
  Case c(p);
  c.fill(seed);
  FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const i64 d = p.head_dim, H = p.head_count();
  const auto q = download(c.q, p.dtype), k = download(c.k, p.dtype), v = download(c.v, p.dtype),
             g = download(c.d_o, p.dtype);
  std::vector<double> rq, rk, rv;
  const double tau = 1.0 / std::sqrt(static_cast<double>(d));
  for (i64 h = 0; h < H; ++h) {
    const auto gr = head_gradients(q.data() + h * p.n_q() * d, k.data() + h * p.n_kv() * d,
                                   v.data() + h * p.n_kv() * d, g.data() + h * p.n_q() * d, p.n_q(), p.n_kv(), d, tau,
                                   p.causal);
    rq.insert(rq.end(), gr.dq.begin(), gr.dq.end());
    rk.insert(rk.end(), gr.dk.begin(), gr.dk.end());
    rv.insert(rv.end(), gr.dv.begin(), gr.dv.end());
  }
  double naive_err = -1;
  for (const Rung& r : rs) {
    if (!r.supports(p.dtype, static_cast<int>(d))) continue;
    Prepared pr = prepare(r, c, smem_optin);
    c.poison();
    r.bwd(pr.a);
    FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
    i64 bad = 0;
    ErrorSums es[3];
    const Buffer* outs[3] = {&c.dq, &c.dk, &c.dv};
    const std::vector<double>* refs[3] = {&rq, &rk, &rv};
    for (int x = 0; x < 3; ++x) {
      const auto got = download(*outs[x], p.dtype);
      for (double y : got) bad += std::isfinite(y) ? 0 : 1;
      es[x] = error_sums(got, *refs[x]);
    }
    const double worst = backward_error(es[0], es[1], es[2]);
    double e3[3];  // each alone, a zero reference against dV's norm as backward_error does
    for (int x = 0; x < 3; ++x)
      e3[x] = es[x].ref2 == 0 && es[2].ref2 > 0 ? std::sqrt(es[x].diff2 / es[2].ref2) : es[x].relative();
    if (r.id == "naive_bwd") naive_err = worst;
    const double tol = tolerance(p.dtype, naive_err < 0 ? 1.0 : naive_err);
    const bool ok = bad == 0 && worst <= tol;
    ok ? ++g_pass : ++g_fail;
    std::printf("%s %-22s %s B=%lld H=%lld N_q=%lld N_kv=%lld d=%lld causal=%d seed=%llu err dQ=%.2e dK=%.2e dV=%.2e "
                "bound=%.2e nonfinite=%lld\n",
                ok ? "PASS" : "FAIL", r.id.c_str(), name(p.dtype), (long long)p.batch, (long long)p.heads,
                (long long)p.n_q(), (long long)p.n_kv(), (long long)d, int(p.causal), (unsigned long long)seed, e3[0],
                e3[1], e3[2], tol, (long long)bad);
    std::fflush(stdout);
  }
}

void check(const std::vector<Rung>& rs, int smem_optin, bool quick) {
  std::mt19937_64 seeds(std::random_device{}());
  const std::vector<i64> ns = quick ? std::vector<i64>{17, 65} : std::vector<i64>{1, 17, 63, 64, 65, 129, 300, 1000};
  const std::vector<int> ds = quick ? std::vector<int>{64, 128} : std::vector<int>{16, 32, 64, 96, 128, 256};
  const std::vector<DType> ts = quick ? std::vector<DType>{DType::fp16} : std::vector<DType>{DType::fp16, DType::bf16, DType::fp32};
  for (DType t : ts)
    for (int d : ds)
      for (bool causal : {false, true})
        for (i64 n : ns)
          if (n < 1000 || d == 64 || d == 128)  // the fp64 gradients at N = 1000 cost seconds each
            check_case(rs, problem(1, n >= 1000 ? 1 : 2, n, d, causal, t), seeds(), smem_optin);
  if (quick) return;
  for (DType t : {DType::fp16, DType::bf16})
    for (int d : {64, 128})
      for (auto s : {std::make_pair(1, 17), std::make_pair(65, 300), std::make_pair(300, 65), std::make_pair(1000, 1),
                     std::make_pair(4097, 300)})  // 4097: ragged at every B_r, 52 row blocks of 80
        check_case(rs, problem(1, 2, s.first, d, false, t, s.second), seeds(), smem_optin);
}

// The 16k-token grid, each rung (fa2_bwd on CUDA cores only at N = 1024).
void time_grid(const std::vector<Rung>& rs, int smem_optin, i64 l2_bytes, int reps, const std::string& json) {
  int device = 0;
  FLASHLAB_CUDA_CHECK(cudaGetDevice(&device));
  const L2Flush flush(device, l2_bytes);
  TimingOptions timing;  // the runner's timed loop: two warm-ups, exactly `reps` repeats
  timing.warmup = 2;
  timing.repeats = reps;
  timing.target_ms = 0;
  std::string rows;
  std::printf("\nbackward, fp16, B = 16384/N, H = 2048/d, L2 flushed, median of %d; TFLOP/s = 2.5 x 4BHN^2d/t (/2 causal)\n",
              reps);
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (i64 n : {1024, 4096, 16384}) {
        const auto p = problem(16384 / n, 2048 / d, n, d, causal, DType::fp16);
        Case c(p);
        c.fill(0x5eed + n + d + causal);
        for (const Rung& r : rs) {
          if (!r.supports(p.dtype, d)) continue;
          if (r.id == "fa2_bwd" && n > 1024) continue;
          Prepared pr = prepare(r, c, smem_optin);
          const std::vector<double> times =
              time_runs(nullptr, timing, &flush, [&](int) { c.poison(); }, [&] { r.bwd(pr.a); });
          const sim::Spread ms = sim::spread(times);
          const double med = ms.median;
          double flops = 4.0 * p.batch * p.heads * double(n) * double(n) * d * (causal ? 0.5 : 1.0) * 2.5;
          std::printf("TIME %-22s d=%-3d N=%-5lld B=%-2lld H=%-2lld causal=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f "
                      "tflops=%.1f\n",
                      r.id.c_str(), d, (long long)n, (long long)p.batch, (long long)p.heads, int(causal), med, ms.min,
                      ms.max, flops / (med * 1e-3) / 1e12);
          std::fflush(stdout);
          char buf[640];
          std::snprintf(buf, sizeof buf,
                        "%s{\"kernel\": \"%s\", \"model\": \"%s\", \"direction\": \"bwd\", \"batch\": %lld, \"heads\": "
                        "%lld, \"seq_q\": %lld, \"seq_kv\": %lld, \"head_dim\": %d, \"causal\": %s, \"dtype\": \"fp16\", "
                        "\"br\": 0, \"bc\": 0, \"status\": \"ok\", \"reason\": \"\", \"time_ms_median\": %.6f, "
                        "\"time_ms_min\": %.6f, \"time_ms_max\": %.6f, \"repeats\": %zu, \"tflops\": 0, "
                        "\"tflops_exact\": 0, \"gbps\": 0, \"peak_memory_bytes\": 0, \"predicted_memory_bytes\": 0, "
                        "\"rel_error\": -1}",
                        rows.empty() ? "" : ",\n", r.id.c_str(), r.id == "naive_bwd" ? "standard_bwd" : "fa2_bwd",
                        (long long)p.batch, (long long)p.heads, (long long)n, (long long)n, d, causal ? "true" : "false",
                        med, ms.min, ms.max, times.size());
          rows += buf;
        }
      }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (f == nullptr) {
      std::perror(json.c_str());
      return;
    }
    std::fprintf(f, "{\"format\": \"flashlab-bench/1\", \"meta\": {\"commit\": \"bwd_check\"}, \"rows\": [\n%s\n]}\n",
                 rows.c_str());
    std::fclose(f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flag = [&](const char* f) { return std::find(args.begin(), args.end(), f) != args.end(); };
  std::string json;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--json") json = args[i + 1];
  int reps = 10;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--reps") reps = std::max(3, std::atoi(args[i + 1].c_str()));
  int smem_optin = 0, l2 = 0;
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  naive_cublas_prepare();
  try {
    const auto rs = rungs(flag("--variants"));
    if (flag("check")) check(rs, smem_optin, false);
    if (flag("quick")) check(rs, smem_optin, true);
    if (flag("time")) time_grid(rs, smem_optin, l2, reps, json);
  } catch (const std::exception& e) {
    std::printf("ERROR %s\n", e.what());
    ++g_fail;
  }
  naive_cublas_release();
  std::printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
