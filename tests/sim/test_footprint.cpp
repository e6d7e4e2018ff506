// The device memory an algorithm holds: the tensors its loop nest touches in
// HBM, at full size — checked against the formulas written out by hand.
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

TEST_CASE("a footprint too large for 64 bits is an error, not a wrapped number", "[sim][footprint]") {
  const auto p = problem(1 << 20, 1 << 10, 1 << 22, 64, false, DType::fp32);
  CHECK_THROWS_AS(hbm_footprint_bytes(Algorithm::standard, p), OverflowError);
}
