// flashlab hw list | hw show PRESET [--json]
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"

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
  }

  int run() override {
    if (list_->parsed()) return list();
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
    std::cout << "  L2                  " << sim::bytes_iec(static_cast<double>(hw.l2_bytes)) << "\n";
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

  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  std::string name_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_hw_command() { return std::make_unique<HwCommand>(); }

}  // namespace flashlab::cli
