// Each micro-benchmark on the device: a positive figure, a median of at least
// 10 runs, and no higher than 1.05× its datasheet peak (a figure above the
// hardware's limit means the benchmark counts work it did not do); wgmma only
// where the GPU has it, and above mma.sync there. The
// working-set sweep shows its plateaus; a quick profile round-trips.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>

#include "flashlab/analysis/profiles/measured_profile.hpp"
#include "flashlab/ceilings/ceilings.hpp"

using namespace flashlab;
using sim::CeilingFigure;

namespace {

// 5%: the datasheet's boost clock may sit a little under the clock a card reaches.
constexpr double kOverDatasheet = 1.05;

ceilings::Session& session() {
  static ceilings::Session s([] {
    ceilings::Options o;
    o.quick = true;  // the figures, not their last percent: the full run is `flashlab ceilings`
    return o;
  }());
  return s;
}

const std::optional<sim::HardwareModel>& datasheet() {
  static const std::optional<sim::HardwareModel> d =
      analysis::match_datasheet(session().device().name, session().device().sm_count, analysis::datasheet_presets());
  return d;
}

// The datasheet's figure, else a bound from the device's own numbers where one
// exists (HBM: 2 × memory clock × bus width; SMEM: 128 bytes per clock per SM;
// L2 cannot outrun the SMs' load path either).
std::optional<double> bound_for(const sim::FigureSpec& s) {
  const sim::DeviceFacts& d = session().device();
  if (datasheet())
    if (const auto v = analysis::datasheet_value(*datasheet(), s)) return v;
  const double smem = 128.0 * static_cast<double>(d.sm_count) * d.max_sm_clock_mhz * 1e6;
  switch (s.quantity) {
    case sim::Quantity::hbm_bandwidth:
      if (d.theoretical_hbm_bandwidth() > 0) return d.theoretical_hbm_bandwidth();
      break;
    case sim::Quantity::l2_bandwidth:
    case sim::Quantity::smem_bandwidth:
      if (smem > 0) return smem;
      break;
    case sim::Quantity::flops:
      if (s.dtype == sim::DType::fp32 && s.unit == sim::ComputeUnit::cuda_core && d.max_sm_clock_mhz > 0)
        return 2.0 * 128 * static_cast<double>(d.sm_count) * d.max_sm_clock_mhz * 1e6;
      break;
  }
  return std::nullopt;
}

void check_figure(const std::string& id) {
  const sim::FigureSpec* spec = sim::find_figure_spec(id);
  REQUIRE(spec);
  const CeilingFigure f = session().measure(id);
  INFO(session().device().name << ": " << id << " = " << f.value / sim::unit_scale(spec->quantity) << " "
                               << sim::unit_of(spec->quantity) << " (" << f.method << ")");
  CHECK(f.id == id);
  CHECK(f.value > 0);
  CHECK(f.work > 0);
  CHECK(f.repeats >= 10);
  CHECK(f.min_ms > 0);
  CHECK(f.min_ms <= f.median_ms);
  CHECK(f.median_ms <= f.max_ms);
  CHECK(f.value == Approx(f.work / (f.median_ms / 1e3)));
  const std::optional<double> bound = bound_for(*spec);
  if (bound) {
    INFO("bound " << *bound / sim::unit_scale(spec->quantity) << " "
                  << (datasheet() ? "from " + datasheet()->name : std::string("from the device's own numbers")));
    CHECK(f.value <= kOverDatasheet * *bound);
  } else {
    WARN(id << ": no datasheet figure for " << session().device().name << " to bound it; only positivity checked");
  }
  if (spec->quantity == sim::Quantity::flops && !spec->reference) {
    // Measured inside the kernel (clock64 over %globaltimer): a real clock, at most the maximum.
    CHECK(f.sm_clock_mhz > 100);
    CHECK(f.sm_clock_mhz <= kOverDatasheet * session().device().max_sm_clock_mhz);
  }
}

}  // namespace

TEST_CASE("HBM read bandwidth", "[gpu][ceilings]") { check_figure("hbm_read"); }
TEST_CASE("HBM write bandwidth", "[gpu][ceilings]") { check_figure("hbm_write"); }
TEST_CASE("HBM copy bandwidth", "[gpu][ceilings]") { check_figure("hbm_copy"); }
TEST_CASE("cudaMemcpy device to device", "[gpu][ceilings]") { check_figure("memcpy_d2d"); }
TEST_CASE("L2 read bandwidth", "[gpu][ceilings]") { check_figure("l2_read"); }
TEST_CASE("shared-memory bandwidth", "[gpu][ceilings]") { check_figure("smem_read"); }
TEST_CASE("FP32 FMA peak", "[gpu][ceilings]") { check_figure("fp32_fma"); }
TEST_CASE("FP16 HFMA2 peak", "[gpu][ceilings]") { check_figure("fp16_hfma2"); }
TEST_CASE("BF16 HFMA2 peak", "[gpu][ceilings]") { check_figure("bf16_hfma2"); }
TEST_CASE("FP16 mma.sync peak", "[gpu][ceilings]") { check_figure("fp16_mma"); }
TEST_CASE("BF16 mma.sync peak", "[gpu][ceilings]") { check_figure("bf16_mma"); }
TEST_CASE("TF32 mma.sync peak", "[gpu][ceilings]") { check_figure("tf32_mma"); }
TEST_CASE("cuBLAS FP16 GEMM 8192^3", "[gpu][ceilings]") { check_figure("fp16_cublas"); }
TEST_CASE("cuBLAS BF16 GEMM 8192^3", "[gpu][ceilings]") { check_figure("bf16_cublas"); }

// wgmma (sm_90a): measured on Hopper alone; elsewhere the test says why and checks that
// measure() refuses with that reason. On Hopper it must beat mma.sync (that is why it
// exists) and do no more than 4,096 dense FP16/BF16 FLOPs per SM per clock (1,024 FMA,
// the H100 whitepaper's rate) at the clock the kernel itself observed.
void check_wgmma(const std::string& wgmma_id, const std::string& mma_id) {
  const std::string why = session().reason_not_measured(wgmma_id);
  if (!why.empty()) {
    WARN("SKIPPED: " << wgmma_id << " is not measured on " << session().device().name << ": " << why);
    CHECK_THROWS_AS(session().measure(wgmma_id), ceilings::NotMeasured);
    return;
  }
  check_figure(wgmma_id);
  const CeilingFigure w = session().measure(wgmma_id);
  const CeilingFigure m = session().measure(mma_id);
  INFO(wgmma_id << " " << w.value / 1e12 << " TFLOP/s at " << w.sm_clock_mhz << " MHz; " << mma_id << " "
                << m.value / 1e12 << " TFLOP/s (" << w.method << ")");
  CHECK(w.value > m.value);
  REQUIRE(w.sm_clock_mhz > 0);
  const double per_sm_clock = w.value / (static_cast<double>(session().device().sm_count) * w.sm_clock_mhz * 1e6);
  CHECK(per_sm_clock <= 4096 * kOverDatasheet);
}

TEST_CASE("FP16 wgmma peak (Hopper)", "[gpu][ceilings]") { check_wgmma("fp16_wgmma", "fp16_mma"); }
TEST_CASE("BF16 wgmma peak (Hopper)", "[gpu][ceilings]") { check_wgmma("bf16_wgmma", "bf16_mma"); }

TEST_CASE("every figure of the registry has a test above", "[gpu][ceilings]") {
  CHECK(sim::figure_specs().size() == 16);
}

TEST_CASE("the working-set sweep: L1, L2 and HBM plateaus", "[gpu][ceilings]") {
  const sim::DeviceFacts& d = session().device();
  const double smem_bound = 128.0 * static_cast<double>(d.sm_count) * d.max_sm_clock_mhz * 1e6;
  const double hbm_bound = datasheet() ? datasheet()->hbm_bandwidth : d.theoretical_hbm_bandwidth();
  for (const char* loads : {"ld.global", "ld.global.cg"}) {
    INFO(loads);
    const sim::SweepSeries s = session().sweep(loads);
    CHECK(s.loads == loads);
    REQUIRE(s.points.size() >= 5);
    CHECK(s.points.front().working_set_bytes == 1024);
    for (const sim::SweepPoint& p : s.points) {
      INFO(p.working_set_bytes << " bytes: " << p.bandwidth / 1e9 << " GB/s");
      CHECK(p.bandwidth > 0);
      CHECK(p.bandwidth <= kOverDatasheet * smem_bound);  // no cache outruns the SMs' load path
    }
    const sim::SweepPoint& last = s.points.back();
    REQUIRE(last.working_set_bytes >= 8 * d.l2_bytes);
    if (hbm_bound > 0) CHECK(last.bandwidth <= kOverDatasheet * hbm_bound);
    // Somewhere in the cache-sized working sets the loads run above HBM speed: well
    // above through L1 (aggregate L1 bandwidth is several times HBM's), above through
    // L2 alone (on an H200 L2 is less than twice as fast as its HBM).
    double best_cached = 0;
    for (const sim::SweepPoint& p : s.points)
      if (p.working_set_bytes <= d.l2_bytes / 4) best_cached = std::max(best_cached, p.bandwidth);
    CHECK(best_cached > (s.loads == "ld.global" ? 2.0 : 1.2) * last.bandwidth);
  }
}

TEST_CASE("a quick profile of this GPU round-trips and loads as a preset", "[gpu][ceilings]") {
  ceilings::Options o;
  o.quick = true;
  const sim::MeasuredProfile p = ceilings::measure_all(o);
  // Every figure, but for those this GPU cannot measure (wgmma off Hopper): each leaves one note.
  size_t not_measured = 0;
  for (const sim::FigureSpec& spec : sim::figure_specs())
    not_measured += !session().reason_not_measured(std::string(spec.id)).empty();
  CHECK(p.notes.size() == not_measured);
  CHECK(p.figures.size() == sim::figure_specs().size() - not_measured);
  CHECK(p.hw.kind == "measured");
  CHECK(p.hw.hbm_bandwidth > 0);
  CHECK(p.hw.l2_bandwidth > p.hw.hbm_bandwidth);
  CHECK(p.hw.sram_bandwidth > p.hw.l2_bandwidth);
  CHECK(p.wall_s < 20);  // goal: --quick under 20 s
  const std::string text = sim::profile_to_json(p);
  const sim::MeasuredProfile q = sim::profile_from_json(text, "quick.json");
  CHECK(q.figures.size() == p.figures.size());
  CHECK(sim::parse_hardware_json(text, "quick.json").hbm_bandwidth == Approx(p.hw.hbm_bandwidth));
}
