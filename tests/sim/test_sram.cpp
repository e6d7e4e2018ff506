// SRAM occupancy: every stream frees what it allocates, the peak probe equals
// the full stream's peak, and an overflow is reported with its numbers.
#include "sim/support.hpp"

using namespace flashlab::sim;


TEST_CASE("streams are balanced: SRAM returns to its state at every outer boundary", "[sim][sram]") {
  auto rng = flashlab::test::test_rng();
  flashlab::test::for_random_schedules(rng, 150, 200, [](const flashlab::test::Case&, const Schedule& s) {
    SramTracker t(std::numeric_limits<i64>::max());
    s.emit_prologue(t);
    const i64 after_prologue = t.bytes();
    for (i64 o = 0; o < s.outer_count(); ++o) {
      s.emit_outer(o, t);
      REQUIRE(t.bytes() == after_prologue);
    }
    s.emit_epilogue(t);
    REQUIRE(t.inconsistencies() == 0);
    REQUIRE(t.resident().empty());
    SramTracker full(std::numeric_limits<i64>::max());
    s.emit(full);
    REQUIRE(sram_peak_probe(s) == full.peak_bytes());
  });
}

TEST_CASE("FlashAttention-1's working set at its peak, tile by tile", "[sim][sram]") {
  AttentionProblem p;
  p.seq_q = 1024;
  p.head_dim = 64;
  const TileShape t{64, 384};  // the paper's rule on an A100, fp16
  SramTracker s(192 * 1024);
  Schedule(Algorithm::fa1, p, t).emit(s);
  // K_j, V_j: 2·384·64·2 B; Q_i, O_i: 2·64·64·2 B; P̃_ij: 64·384·2 B;
  // ℓ_i, m_i, m̃_ij, ℓ̃_ij, m_new, ℓ_new: 6·64·4 B.
  CHECK(s.peak_bytes() == 98304 + 16384 + 49152 + 6 * 256);
  CHECK_FALSE(s.first_overflow().has_value());
}

TEST_CASE("an overflow names the resident tiles and the capacity", "[sim][sram]") {
  AttentionProblem p;
  p.seq_q = 512;
  p.head_dim = 64;
  SramTracker s(20000);
  Schedule(Algorithm::fa2, p, {64, 64}).emit(s);
  REQUIRE(s.first_overflow().has_value());
  const std::string msg = s.first_overflow()->describe();
  CHECK_THAT(msg, Catch::Contains("Q_0"));
  CHECK_THAT(msg, Catch::Contains("M = 20,000 B"));
}

TEST_CASE("simulate() reports tiles that do not fit as an error with numbers", "[sim][sram]") {
  HardwareModel hw;
  hw.name = "tiny";
  hw.sram_bytes_per_sm = 64 * 1024;
  AttentionProblem p;
  SimOptions o;
  o.tiles = TileShape{256, 256};
  const SimResult r = simulate(Algorithm::fa1, p, hw, o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.errors().at(0), Catch::Contains("do not fit"));
  CHECK_THAT(r.errors().at(0), Catch::Contains("M = 65,536 B"));
}

TEST_CASE("a kernel's tiles are counted against the SM's SRAM and registers", "[sim][sram]") {
  // The Hopper backward's 80 × 128 tiles at d = 128: the algorithm's accounting
  // (K_j, V_j, dK_j, dV_j, Q_i, dO_i, L_i, D_i, P_ij, dS_ij, dQ_i in 16 bits)
  // is 234,112 B, above an H200's 228 KiB of SRAM; the kernel keeps dK_j, dV_j
  // and P_ij in registers.
  HardwareModel hw;
  hw.name = "h200-like";
  hw.sram_bytes_per_sm = 228 * 1024;
  AttentionProblem p{1, 2, 1024, 1024, 128, false, DType::fp16};
  SimOptions o;
  o.stream_event_limit = 0;
  o.tiles = TileShape{80, 128};
  const SimResult plain = simulate(Algorithm::fa2_bwd, p, hw, o);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.sram_peak_bytes == 4 * 128 * 128 * 2 + 3 * 80 * 128 * 2 + 2 * 80 * 4 + 2 * 80 * 128 * 2);
  o.kernel_tiles = true;
  const SimResult k = simulate(Algorithm::fa2_bwd, p, hw, o);
  REQUIRE(k.ok());
  CHECK(k.sram_capacity_bytes == 228 * 1024 + 256 * 1024);
  CHECK(k.registers_on_chip);
  CHECK_FALSE(plain.registers_on_chip);
  CHECK(k.sram_peak_bytes == plain.sram_peak_bytes);
  CHECK(k.total.level(Level::HBM).bytes() > 0);
  const auto notes = k.messages();
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("registers") != std::string::npos; }));
  // Tiles that fit M are counted as simulate() counts them; M set by the caller is kept.
  o.tiles = TileShape{64, 128};
  CHECK(simulate(Algorithm::fa2_bwd, p, hw, o).sram_capacity_bytes == 228 * 1024);
  o.tiles = TileShape{80, 128};
  o.sram_bytes = 228 * 1024;
  CHECK_FALSE(simulate(Algorithm::fa2_bwd, p, hw, o).ok());
}
