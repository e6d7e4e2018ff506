// flashlab hw list | hw show PRESET [--json] | hw compare A B
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"
#include "flashlab/analysis/profiles/measured_profile.hpp"

namespace flashlab::cli {
namespace {

std::string tflops(double f) { return f > 0 ? analysis::fixed(f / 1e12, 1) : "-"; }

class HwCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("hw", "hardware presets and profiles");
    app->require_subcommand(1);
    list_ = app->add_subcommand("list", "list the presets");
    show_ = app->add_subcommand("show", "show one preset or profile file");
    show_->add_option("preset", name_, "preset id or JSON file")->required();
    show_->add_flag("--json", json_, "print the preset's JSON");
    compare_ = app->add_subcommand("compare", "two presets or profiles side by side, e.g. a measured profile and "
                                              "its datasheet: each figure and the ratio A/B");
    compare_->add_option("a", compare_a_, "preset id or JSON file (e.g. a profile from flashlab ceilings)")->required();
    compare_->add_option("b", compare_b_, "preset id or JSON file")->required();
  }

  int run() override {
    if (list_->parsed()) return list();
    if (compare_->parsed()) return compare();
    return show();
  }

 private:
  int list() {
    analysis::TextTable t({"preset", "GPU", "SMs", "SRAM/SM", "HBM GB/s", "fp16 TC TFLOP/s", "ridge FLOP/B", "kind"});
    const auto names = sim::list_presets();
    if (names.empty()) throw UsageError("no hardware presets found (assets folder: '" + sim::assets_dir() + "')");
    for (const std::string& n : names) {
      const sim::HardwareModel hw = load_hw(n);
      const double peak = hw.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core);
      t.add({n, hw.display_name, std::to_string(hw.sm_count), sim::bytes_iec(static_cast<double>(hw.sram_bytes_per_sm)),
             analysis::fixed(hw.hbm_bandwidth / 1e9, 0), tflops(peak),
             analysis::fixed(analysis::ridge_point(peak, hw.hbm_bandwidth), 1), hw.kind});
    }
    std::cout << t.str();
    return 0;
  }

  int show() {
    const sim::HardwareModel hw = load_hw(name_);
    if (json_) {
      std::cout << sim::to_hardware_json(hw);
      return 0;
    }
    std::cout << hw.display_name << " (" << hw.name << ", " << hw.kind << ")\n";
    std::cout << "  SMs                 " << hw.sm_count << "\n";
    std::cout << "  SRAM per SM (M)     " << sim::bytes_iec(static_cast<double>(hw.sram_bytes_per_sm)) << "\n";
    if (hw.max_smem_per_block_bytes > 0)
      std::cout << "  shared mem / block  " << sim::bytes_iec(static_cast<double>(hw.max_smem_per_block_bytes)) << "\n";
    std::cout << "  L2                  " << sim::bytes_iec(static_cast<double>(hw.l2_bytes));
    if (hw.l2_partitions > 1)
      std::cout << " in " << hw.l2_partitions << " partitions (" << sim::bytes_iec(static_cast<double>(sim::shared_l2_bytes(hw)))
                << " for data every SM reads)";
    std::cout << "\n";
    if (hw.hbm_bytes > 0) std::cout << "  HBM                 " << sim::bytes_iec(static_cast<double>(hw.hbm_bytes)) << "\n";
    std::cout << "  HBM bandwidth       " << analysis::fixed(hw.hbm_bandwidth / 1e9, 0) << " GB/s\n";
    if (hw.l2_bandwidth > 0) std::cout << "  L2 bandwidth        " << analysis::fixed(hw.l2_bandwidth / 1e9, 0) << " GB/s\n";
    std::cout << "  SRAM bandwidth      " << analysis::fixed(hw.sram_bandwidth / 1e9, 0) << " GB/s (all SMs)\n";
    if (hw.clock_mhz > 0) std::cout << "  clock               " << hw.clock_mhz << " MHz\n";
    analysis::TextTable t({"dtype", "tensor TFLOP/s", "CUDA-core TFLOP/s", "ridge (tensor) FLOP/B"});
    for (sim::DType d : {sim::DType::fp16, sim::DType::bf16, sim::DType::fp32}) {
      const double tc = hw.peak(d, sim::ComputeUnit::tensor_core), cc = hw.peak(d, sim::ComputeUnit::cuda_core);
      t.add({std::string(sim::to_string(d)) + (d == sim::DType::fp32 ? " (TF32 on TC)" : ""), tflops(tc), tflops(cc),
             tc > 0 ? analysis::fixed(analysis::ridge_point(tc, hw.hbm_bandwidth), 1) : "-"});
    }
    std::cout << t.str();
    if (!hw.provenance.empty()) std::cout << "provenance: " << hw.provenance << "\n";
    std::cout << "sources:\n";
    for (const std::string& s : hw.sources) std::cout << "  - " << s << "\n";
    return 0;
  }

  // ---- hw compare ----
  // A measured profile's own figures (mma.sync, cuBLAS, cudaMemcpy) are listed
  // too, each against the other model's datasheet figure for the same ceiling.
  static std::optional<sim::MeasuredProfile> measured_profile(const std::string& name) {
    if (name.find('/') == std::string::npos && (name.size() <= 5 || name.substr(name.size() - 5) != ".json"))
      return std::nullopt;
    std::ifstream in(name, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in || !sim::looks_measured(text.str())) return std::nullopt;
    try {
      return sim::profile_from_json(text.str(), name);
    } catch (const sim::HardwareError& e) {
      throw UsageError(std::string("hw compare: ") + e.what());
    }
  }

  int compare() {
    auto load = [](const std::string& name) {
      try {
        return sim::load_hardware(name);
      } catch (const sim::HardwareError& e) {
        throw UsageError(std::string("hw compare: ") + e.what());
      }
    };
    const sim::HardwareModel a = load(compare_a_), b = load(compare_b_);
    std::cout << "A: " << a.display_name << " (" << a.name << ", " << a.kind << ")\n";
    std::cout << "B: " << b.display_name << " (" << b.name << ", " << b.kind << ")\n";
    analysis::TextTable t({"figure", "unit", "A", "B", "A/B"});
    for (const analysis::ComparisonRow& r : analysis::compare_hardware(a, b)) {
      const int decimals = r.unit == "TFLOP/s" || r.unit == "FLOP/B" ? 1 : 0;
      t.add({r.figure, r.unit, r.a > 0 ? analysis::fixed(r.a, decimals) : "-",
             r.b > 0 ? analysis::fixed(r.b, decimals) : "-", r.a > 0 && r.b > 0 ? analysis::fixed(r.ratio(), 2) : "-"});
    }
    std::cout << t.str();
    const bool a_measured = a.kind == "measured";
    const auto profile = measured_profile(a_measured ? compare_a_ : compare_b_);
    if (profile) {
      const sim::HardwareModel& other = a_measured ? b : a;
      std::cout << "figures measured on " << profile->device.name << " (" << (a_measured ? "A" : "B") << ") against "
                << other.name << ":\n";
      analysis::TextTable m({"figure", "unit", "measured", other.name, "ratio", "SM MHz"});
      for (const sim::CeilingFigure& f : profile->figures) {
        const sim::FigureSpec* s = sim::find_figure_spec(f.id);
        if (!s) continue;
        const double scale = sim::unit_scale(s->quantity);
        const int decimals = sim::is_bandwidth(s->quantity) ? 0 : 1;
        const double d = analysis::datasheet_value(other, *s).value_or(0.0);  // 0: the other gives no figure
        m.add({f.id, std::string(sim::unit_of(s->quantity)), analysis::fixed(f.value / scale, decimals),
               d > 0 ? analysis::fixed(d / scale, decimals) : "-", d > 0 ? analysis::fixed(f.value / d, 2) : "-",
               f.sm_clock_mhz > 0 ? analysis::fixed(f.sm_clock_mhz, 0) : "-"});
      }
      std::cout << m.str();
    }
    for (const sim::HardwareModel* h : {&a, &b})
      if (!h->provenance.empty()) std::cout << h->name << ": " << h->provenance << "\n";
    return 0;
  }

  CLI::App* compare_ = nullptr;
  std::string compare_a_, compare_b_;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  std::string name_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_hw_command() { return std::make_unique<HwCommand>(); }

}  // namespace flashlab::cli
