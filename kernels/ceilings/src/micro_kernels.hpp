// The micro-benchmark kernels as host functions: each launches one kernel on a
// stream (checked) and says how much work one launch does, so the driver
// (session.cpp) times launches without knowing the kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace flashlab::ceilings::detail {

using i64 = std::int64_t;

// A grid that keeps every SM full for the whole launch: SMs × resident blocks.
// Blocks stay on their SM, so a block re-reading its share of a buffer hits
// the caches of that SM.
struct Grid {
  int blocks = 0, threads = 0;
  i64 total_threads() const { return static_cast<i64>(blocks) * threads; }
};

// ---- fill.cu: inputs that are never zero ---------------------------------------------
// Hashed 32-bit words with the low bit set: no word is zero.
void fill_words(void* data, i64 bytes, std::uint32_t seed, cudaStream_t s);
enum class Element { fp16, bf16 };
// Values in ±[0.25, 1): finite, never zero, so a GEMM on them does real work.
void fill_values(void* data, i64 count, Element e, std::uint32_t seed, cudaStream_t s);
// cudaSuccess when this binary carries code for the current device.
cudaError_t probe_kernel_image();

// ---- bandwidth.cu: global memory --------------------------------------------------------
enum class Loads { cached, l2_only };  // ld.global (L1 + L2) / ld.global.cg (L2 only)
const char* loads_name(Loads l);        // "ld.global", "ld.global.cg"
Grid stream_grid(int sm_count);
// Reads `bytes` (a multiple of 16) `passes` times. With fewer 16-byte words than
// threads, threads wrap around the buffer (each reads one word per pass). The
// XOR of everything read is stored only if it equals `sentinel`, which it never
// does in practice; the compiler cannot know that, so every load stays.
void read_buffer(Loads loads, const void* data, i64 bytes, int passes, Grid g, std::uint32_t sentinel,
                 std::uint32_t* out, cudaStream_t s);
// Bytes the loads of one read_buffer launch request.
i64 read_bytes(i64 bytes, int passes, Grid g);
void write_buffer(void* data, i64 bytes, std::uint32_t seed, Grid g, cudaStream_t s);
void copy_buffer(void* dst, const void* src, i64 bytes, Grid g, cudaStream_t s);

// ---- smem.cu: shared memory --------------------------------------------------------------
Grid smem_grid(int sm_count);
i64 smem_bytes_per_rep(Grid g);  // bytes one repetition reads, all blocks together
void smem_read(int reps, Grid g, std::uint32_t seed, std::uint32_t sentinel, std::uint32_t* out, cudaStream_t s);
std::string smem_method(Grid g);

// ---- fma.cu, mma.cu, wgmma.cu: arithmetic ------------------------------------------------------
enum class Op { fp32_fma, fp16_hfma2, bf16_hfma2, fp16_mma, bf16_mma, tf32_mma, fp16_wgmma, bf16_wgmma };
inline bool is_mma(Op op) { return op == Op::fp16_mma || op == Op::bf16_mma || op == Op::tf32_mma; }
inline bool is_wgmma(Op op) { return op == Op::fp16_wgmma || op == Op::bf16_wgmma; }
// A launch shape of a compute kernel; the driver keeps the fastest candidate.
struct ComputeConfig {
  int blocks_per_sm = 0, threads = 0;
  int chains = 0;  // independent accumulators per thread (FMA) or per warp (mma); commit groups in flight (wgmma)
};
// Where each block writes its cycle count (clock64) and elapsed nanoseconds
// (%globaltimer) between two barriers: their ratio is the SM clock of the run.
// One entry per block; `out` takes one float per thread.
struct ClockProbe {
  long long* cycles = nullptr;
  unsigned long long* ns = nullptr;
};

// fma.cu: CUDA cores.
std::vector<ComputeConfig> fma_configs(Op op);
double fma_flops(Op op, const ComputeConfig& c, int sm_count, int iters);  // FLOPs of one launch
void run_fma(Op op, const ComputeConfig& c, int sm_count, int iters, void* out, ClockProbe clocks, cudaStream_t s);

// mma.cu: tensor cores. Operands: one warp's A and B fragments (32 lanes × 8 words).
inline constexpr int kOperandWords = 32 * 8;
void init_operands(Op op, std::uint32_t* operands, std::uint32_t seed, cudaStream_t s);
std::vector<ComputeConfig> mma_configs(Op op);
double mma_flops(Op op, const ComputeConfig& c, int sm_count, int iters);
void run_mma(Op op, const ComputeConfig& c, int sm_count, int iters, const std::uint32_t* operands, void* out,
             ClockProbe clocks, cudaStream_t s);

// wgmma.cu: Hopper's tensor cores (sm_90a). threads = 128 × warpgroups per block.
// Empty when this build and this GPU can run the wgmma kernel, else why not (one line).
std::string wgmma_unavailable_reason(int compute_capability);
std::vector<ComputeConfig> wgmma_configs(Op op);
double wgmma_flops(Op op, const ComputeConfig& c, int sm_count, int iters);
std::string wgmma_shape(const ComputeConfig& c);  // warpgroups, instruction, groups in flight: for the method line
// The operands are hashed from `seed` inside the kernel, into shared memory.
void run_wgmma(Op op, const ComputeConfig& c, int sm_count, int iters, std::uint32_t seed, void* out,
               ClockProbe clocks, cudaStream_t s);

}  // namespace flashlab::ceilings::detail
