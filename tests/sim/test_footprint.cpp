// The device memory an algorithm holds: the tensors its loop nest touches in
// HBM, at full size — checked against the formulas written out by hand.
#include <algorithm>

#include "sim/support.hpp"
#include "support/problems.hpp"

using namespace flashlab::sim;

using flashlab::test::problem;

TEST_CASE("the HBM footprint is the model's HBM tensors, exactly", "[sim][footprint]") {
  const i64 B = 3, H = 5, N = 1000, d = 64;
  for (bool causal : {false, true}) {
    const auto p16 = problem(B, H, N, d, causal, DType::fp16);
    const i64 qkvo = 4 * B * H * N * d * 2;
    CHECK(hbm_footprint_bytes(Algorithm::standard, p16) == qkvo + 2 * B * H * N * N * 2);
    CHECK(hbm_footprint_bytes(Algorithm::pytorch, p16) == qkvo + 2 * B * H * N * N * 2);
    CHECK(hbm_footprint_bytes(Algorithm::fa1, p16) == qkvo + 2 * B * H * N * 4);  // ℓ, m fp32
    CHECK(hbm_footprint_bytes(Algorithm::fa2, p16) == qkvo + B * H * N * 4);      // logsumexp fp32
  }
  const auto p32 = problem(B, H, N, d, false, DType::fp32, 17);
  CHECK(hbm_footprint_bytes(Algorithm::standard, p32) ==
        (2 * B * H * N * d + 2 * B * H * 17 * d) * 4 + 2 * B * H * N * 17 * 4);
  CHECK(hbm_tensors(Algorithm::fa2, p32) == std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V, Tensor::O, Tensor::LSE});
}

TEST_CASE("grouped K/V heads: K, V and their gradients hold B·H_kv heads, everything else B·H", "[sim][footprint]") {
  const i64 B = 2, H = 8, Hkv = 2, N = 1000, d = 64;
  auto p = problem(B, H, N, d, true, DType::fp16);
  p.kv_heads = Hkv;
  CHECK(hbm_footprint_bytes(Algorithm::fa2, p) == (2 * B * H * N * d + 2 * B * Hkv * N * d) * 2 + B * H * N * 4);
  CHECK(hbm_footprint_bytes(Algorithm::standard, p) ==
        (2 * B * H * N * d + 2 * B * Hkv * N * d) * 2 + 2 * B * H * N * N * 2);
  // H_kv = H is the plain problem.
  p.kv_heads = H;
  CHECK(hbm_footprint_bytes(Algorithm::fa2, p) == hbm_footprint_bytes(Algorithm::fa2, problem(B, H, N, d, true, DType::fp16)));
}

TEST_CASE("grouped K/V heads added apart in fp32: dKaccum and dVaccum join the backward's peak", "[sim][footprint][bwd]") {
  const i64 B = 2, H = 8, Hkv = 2, N = 1000, d = 64;
  auto p = problem(B, H, N, d, true, DType::fp16);
  p.kv_heads = Hkv;
  StorageTypes st;
  st.dq_accumulator = DType::fp32;
  const TrainingStepMemory in_place = training_step_memory(Algorithm::fa2_bwd, p, st);
  CHECK(in_place.kv_accumulator_bytes == 0);
  st.dkv_accumulator = DType::fp32;
  const TrainingStepMemory apart = training_step_memory(Algorithm::fa2_bwd, p, st);
  CHECK(apart.kv_accumulator_bytes == 2 * B * Hkv * N * d * 4);
  CHECK(apart.backward_peak_bytes == in_place.backward_peak_bytes + 2 * B * Hkv * N * d * 4);
  // Without groups a rung that would add apart writes dK, dV itself: nothing more.
  p.kv_heads = 0;
  CHECK(training_step_memory(Algorithm::fa2_bwd, p, st).kv_accumulator_bytes == 0);
}

TEST_CASE("the backward's HBM footprint: the forward's inputs and what it kept, dO and the gradients", "[sim][footprint][bwd]") {
  const i64 B = 3, H = 5, N = 1000, d = 64, BH = B * H;
  for (bool causal : {false, true}) {
    const auto p = problem(B, H, N, d, causal, DType::fp16);
    const i64 nd = BH * N * d * 2, nn = BH * N * N * 2, row = BH * N * 4;
    // Q, K, V, dO, dQ, dK, dV; P read, dP and dS written (no O: Algorithm 3 does not need it).
    // standard_bwd writes dS over dP (one N² buffer); eager PyTorch's softmax_backward allocates dS.
    CHECK(hbm_footprint_bytes(Algorithm::standard_bwd, p) == 7 * nd + 2 * nn);
    CHECK(hbm_footprint_bytes(Algorithm::pytorch_bwd, p) == 7 * nd + 3 * nn);
    // Q, K, V, O, dO, dQ, dK, dV; ℓ and m.
    CHECK(hbm_footprint_bytes(Algorithm::fa1_bwd, p) == 8 * nd + 2 * row);
    // Q, K, V, O, dO, dQ, dK, dV; the logsumexp L and D = rowsum(dO ∘ O).
    CHECK(hbm_footprint_bytes(Algorithm::fa2_bwd, p) == 8 * nd + 2 * row);
    StorageTypes fp32_dq;
    fp32_dq.dq_accumulator = DType::fp32;
    CHECK(hbm_footprint_bytes(Algorithm::fa2_bwd, p, fp32_dq) == 8 * nd + 2 * row + BH * N * d * 4);  // + dQaccum
    CHECK(hbm_footprint_bytes(Algorithm::fa1_bwd, p, fp32_dq) == 8 * nd + 2 * row + BH * N * d * 4);
  }
  const auto p = problem(1, 1, 100, 16);
  CHECK(hbm_tensors(Algorithm::fa2_bwd, p) ==
        std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V, Tensor::O, Tensor::LSE, Tensor::dO, Tensor::dQ, Tensor::dK,
                            Tensor::dV, Tensor::D});
  StorageTypes fp32_dq;
  fp32_dq.dq_accumulator = DType::fp32;
  CHECK(hbm_tensors(Algorithm::fa2_bwd, p, fp32_dq).back() == Tensor::dQaccum);
  CHECK(hbm_tensors(Algorithm::standard_bwd, p) ==
        std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V, Tensor::P, Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV,
                            Tensor::dS, Tensor::dP});
}

namespace {
i64 bytes_of(const std::vector<TensorMemory>& v, Tensor t) {
  for (const TensorMemory& x : v)
    if (x.tensor == t) return x.bytes;
  return -1;
}
std::vector<Tensor> tensors_of(const std::vector<TensorMemory>& v) {
  std::vector<Tensor> out;
  for (const TensorMemory& x : v) out.push_back(x.tensor);
  return out;
}
}  // namespace

TEST_CASE("a training step: what the forward keeps for the backward, and the backward's peak", "[sim][footprint][bwd]") {
  const i64 B = 2, H = 4, N = 1000, d = 64, BH = B * H;
  const auto p = problem(B, H, N, d, true, DType::bf16);
  const i64 nd = BH * N * d * 2, nn = BH * N * N * 2, row = BH * N * 4;
  using V = std::vector<Tensor>;

  // Eager PyTorch and standard attention keep P, Θ(N²) per head; the inputs Q, K, V are read again.
  for (Algorithm a : {Algorithm::pytorch, Algorithm::standard}) {
    INFO(to_string(a));
    const TrainingStepMemory m = training_step_memory(a, p);
    CHECK(m.forward == a);
    CHECK(m.backward == *backward_of(a));
    CHECK(tensors_of(m.saved) == V{Tensor::P});
    CHECK(m.saved_bytes() == nn);
    CHECK(tensors_of(m.inputs) == V{Tensor::Q, Tensor::K, Tensor::V});
    CHECK(m.inputs_bytes() == 3 * nd);
    if (a == Algorithm::pytorch) {
      CHECK(tensors_of(m.own) == V{Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV, Tensor::dS, Tensor::dP});
      // The peak is the dS pass: P, dP and dS at once, dV already written (dQ, dK not yet).
      CHECK(m.backward_peak_bytes == 3 * nd + nn /* P */ + nd /* dO */ + 2 * nn /* dP, dS */ + nd /* dV */);
    } else {
      // dS written over dP: one N² buffer from the dP pass to the last read of dS,
      // so the peak is the last pass, with every gradient written.
      CHECK(tensors_of(m.own) == V{Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV, Tensor::dP});
      CHECK(m.backward_peak_bytes == 3 * nd + nn /* P */ + nd /* dO */ + nn /* dP = dS */ + 3 * nd /* dV, dQ, dK */);
    }
  }
  // FlashAttention-1 keeps O, ℓ and m; FlashAttention-2 keeps O and the logsumexp L: Θ(N·d).
  {
    const TrainingStepMemory m = training_step_memory(Algorithm::fa1_bwd, p);  // either of the pair names it
    CHECK(m.forward == Algorithm::fa1);
    CHECK(tensors_of(m.saved) == V{Tensor::O, Tensor::l, Tensor::m});
    CHECK(m.saved_bytes() == nd + 2 * row);
    CHECK(tensors_of(m.own) == V{Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV});
    CHECK(m.backward_peak_bytes == m.saved_bytes() + m.inputs_bytes() + m.own_bytes());
  }
  {
    const TrainingStepMemory m = training_step_memory(Algorithm::fa2, p);
    CHECK(tensors_of(m.saved) == V{Tensor::O, Tensor::LSE});
    CHECK(m.saved_bytes() == nd + row);
    CHECK(bytes_of(m.saved, Tensor::LSE) == row);
    CHECK(tensors_of(m.own) == V{Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV, Tensor::D});
    // All of it at once: Q, K, V, O, L, then dO, dQ, dK, dV and D.
    CHECK(m.backward_peak_bytes == 3 * nd + nd + row + 4 * nd + row);
    // With dQ accumulated in fp32: the post-pass holds dQaccum and dQ, D is gone by then.
    StorageTypes fp32_dq;
    fp32_dq.dq_accumulator = DType::fp32;
    const TrainingStepMemory k = training_step_memory(Algorithm::fa2, p, fp32_dq);
    CHECK(bytes_of(k.own, Tensor::dQaccum) == BH * N * d * 4);
    CHECK(k.backward_peak_bytes == 3 * nd + nd + row /* Q K V, O, L */ + nd /* dO */ + 2 * nd /* dK, dV */ +
                                       BH * N * d * 4 /* dQaccum */ + nd /* dQ */);
  }
  // What the forward keeps grows as N² for the materialising pair and as N for FlashAttention.
  const auto p2 = problem(B, H, 2 * N, d, true, DType::bf16);
  CHECK(training_step_memory(Algorithm::pytorch, p2).saved_bytes() == 4 * nn);
  CHECK(training_step_memory(Algorithm::fa2, p2).saved_bytes() == 2 * (nd + row));
}

TEST_CASE("a footprint too large for 64 bits is an error, not a wrapped number", "[sim][footprint]") {
  const auto p = problem(1 << 20, 1 << 10, 1 << 22, 64, false, DType::fp32);
  CHECK_THROWS_AS(hbm_footprint_bytes(Algorithm::standard, p), OverflowError);
}

TEST_CASE("a pass's own tensors: Q, K, V, O forward, and dO, dQ, dK, dV with them backward", "[sim][footprint]") {
  const i64 B = 3, H = 8, Hkv = 2, N = 1000, d = 64;
  auto p = problem(B, H, N, d, false, DType::fp16);
  CHECK(tensor_bytes(Tensor::Q, p) == B * H * N * d * 2);
  CHECK(tensor_bytes(Tensor::LSE, p) == B * H * N * 4);  // a statistic: fp32
  CHECK(pass_tensor_bytes(p, Pass::fwd) == 4 * B * H * N * d * 2);
  CHECK(pass_tensor_bytes(p, Pass::bwd) == 8 * B * H * N * d * 2);
  CHECK(pass_tensors(Pass::fwd) == std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V, Tensor::O});
  // Grouped heads: K, V, dK, dV hold B·H_kv heads.
  p.kv_heads = Hkv;
  CHECK(pass_tensor_bytes(p, Pass::fwd) == (2 * B * H + 2 * B * Hkv) * N * d * 2);
  CHECK(pass_tensor_bytes(p, Pass::bwd) == (4 * B * H + 4 * B * Hkv) * N * d * 2);
  // The forward's tensors are those FlashAttention-2 keeps in HBM, less its logsumexp.
  CHECK(pass_tensor_bytes(p, Pass::fwd) == hbm_footprint_bytes(Algorithm::fa2, p) - tensor_bytes(Tensor::LSE, p));
}

namespace {
i64 sum_of(const std::vector<TensorMemory>& buffers) {
  i64 s = 0;
  for (const TensorMemory& b : buffers) s += b.bytes;
  return s;
}
}  // namespace

TEST_CASE("a run's buffers: every buffer of the pass, and a backward's with what its forward's run left",
          "[sim][footprint][bwd]") {
  const i64 B = 2, H = 4, Hkv = 2, N = 1000, d = 64, BH = B * H;
  for (bool grouped : {false, true}) {
    auto p = problem(B, H, N, d, true, DType::bf16);
    if (grouped) p.kv_heads = Hkv;
    INFO("H_kv " << p.h_kv());
    const i64 q = BH * N * d * 2, kv = B * p.h_kv() * N * d * 2, nn = BH * N * N * 2, row = BH * N * 4;
    auto run = [&](Algorithm a, StorageTypes st = {}) { return sum_of(run_buffers(a, p, st)); };
    // FlashAttention-1 with its O_i accumulated in fp32: O in bf16 and the fp32 accumulator beside it.
    StorageTypes fa1_rung;
    fa1_rung.o_accumulator = DType::fp32;
    CHECK(run(Algorithm::fa1) == 2 * q + 2 * kv + 2 * row);
    CHECK(run(Algorithm::fa1, fa1_rung) == 2 * q + 2 * kv + BH * N * d * 4 + 2 * row);
    // The materialising pair: Q, K, V, O, S and P of the forward; dO, dQ, dK, dV and dP (dS over it).
    CHECK(run(Algorithm::standard) == 2 * q + 2 * kv + 2 * nn);
    CHECK(run(Algorithm::standard_bwd) == 2 * q + 2 * kv + 2 * nn + 2 * q + 2 * kv + nn);
    // FlashAttention-2's pair with an fp32 dQaccum (and dKaccum, dVaccum when a group adds apart).
    StorageTypes tc;
    tc.dq_accumulator = DType::fp32;
    const i64 fa2_pair = 2 * q + 2 * kv + row /* L */ + 2 * q + 2 * kv + row /* D */ + BH * N * d * 4;
    CHECK(run(Algorithm::fa2_bwd, tc) == fa2_pair);
    tc.dkv_accumulator = DType::fp32;
    const i64 kv_acc = grouped ? 2 * B * Hkv * N * d * 4 : 0;
    CHECK(run(Algorithm::fa2_bwd, tc) == fa2_pair + kv_acc);
    // As the runner allocates them: each argument, result and L alone, the rest of a pass in one workspace.
    auto sorted = [](std::vector<i64> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    CHECK(sorted(run_allocations(Algorithm::fa1, p, fa1_rung)) ==
          sorted({q, kv, kv, q, BH * N * d * 4 + 2 * row}));
    CHECK(sorted(run_allocations(Algorithm::standard_bwd, p)) == sorted({q, kv, kv, q, 2 * nn, q, q, kv, kv, nn}));
    CHECK(sorted(run_allocations(Algorithm::fa2_bwd, p, tc)) ==
          sorted({q, kv, kv, q, row, q, q, kv, kv, row + BH * N * d * 4 + kv_acc}));
  }
  // An accumulator the kernel names is its own buffer in the problem's type too.
  const auto p32 = problem(1, 2, 256, 32, false, DType::fp32);
  StorageTypes st;
  st.o_accumulator = DType::fp32;
  st.dq_accumulator = DType::fp32;
  CHECK(sum_of(run_buffers(Algorithm::fa1, p32, st)) == sum_of(run_buffers(Algorithm::fa1, p32)) + 2 * 256 * 32 * 4);
  CHECK(sum_of(run_buffers(Algorithm::fa2_bwd, p32, st)) ==
        sum_of(run_buffers(Algorithm::fa2_bwd, p32)) + 2 * 256 * 32 * 4);
}

TEST_CASE("device memory of cudaMalloc'd buffers: whole granules from one up, the smaller ones none",
          "[sim][footprint]") {
  const i64 G = kAllocationGranuleBytes, MiB = i64{1} << 20;
  CHECK(G == 2 * MiB);
  CHECK(allocation_device_bytes({}) == 0);
  CHECK(allocation_device_bytes({G}) == G);
  CHECK(allocation_device_bytes({G + 1}) == 2 * G);
  CHECK(allocation_device_bytes({3 * MiB, MiB}) == 4 * MiB);  // 3 MiB takes two granules, 1 MiB none
  // Buffers all under a granule: the device grows by none of them; what they ask for is the least they hold.
  CHECK(allocation_device_bytes({MiB + MiB / 2, MiB + MiB / 2}) == 3 * MiB);
  CHECK(allocation_device_bytes({100, 200}) == 300);
}

TEST_CASE("a run's memory: its buffers as the driver allocates them, each in whole granules",
          "[sim][footprint][bwd]") {
  // B 2, H 32, N 3000, d 64 bf16: Q, K, V, O are 24,576,000 B each (23.4 MiB: 12 granules), the
  // logsumexp 768,000 B (under one granule), FlashAttention-2's backward workspace (dQaccum in fp32
  // and D) 49,920,000 B (47.6 MiB: 24 granules).
  const i64 B = 2, H = 32, N = 3000, d = 64, BH = B * H, G = kAllocationGranuleBytes;
  const auto p = problem(B, H, N, d, false, DType::bf16);
  const i64 q = BH * N * d * 2, row = BH * N * 4, dq_acc = BH * N * d * 4;
  REQUIRE(q == 24'576'000);
  REQUIRE(q % G != 0);
  CHECK(run_memory_bytes(Algorithm::fa2, p) == 4 * 12 * G);  // 96 MiB; the buffers ask for 99,072,000 B
  CHECK(run_memory_bytes(Algorithm::fa2, p) > sum_of(run_buffers(Algorithm::fa2, p)));
  StorageTypes tc;
  tc.dq_accumulator = DType::fp32;
  REQUIRE(dq_acc + row == 49'920'000);
  CHECK(run_memory_bytes(Algorithm::fa2_bwd, p, tc) == 8 * 12 * G + 24 * G);  // 240 MiB
  // FlashAttention-1's O accumulator, ℓ and m: one workspace of 50,688,000 B, 25 granules.
  StorageTypes fa1_rung;
  fa1_rung.o_accumulator = DType::fp32;
  CHECK(run_memory_bytes(Algorithm::fa1, p, fa1_rung) == 4 * 12 * G + 25 * G);  // 146 MiB
  // Buffers all under a granule: exactly what they ask for.
  const auto small = problem(1, 2, 256, 32, false, DType::fp16);
  CHECK(run_memory_bytes(Algorithm::fa2, small) == sum_of(run_buffers(Algorithm::fa2, small)));
}
