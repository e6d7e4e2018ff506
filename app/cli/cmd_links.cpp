// flashlab links: the links between this host's GPUs, measured (NCCL
// send/recv and the copy engines between every GPU pair, kernels/link_bench),
// printed as a table, written as CSV and as a measured link preset
// (flashlab-interconnect/1, kind "measured") that `flashlab ring --link FILE`
// and the GUI's link choice take.
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/kernels/links/link_bench.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::cli {
namespace {

int count_flag(const std::string& flag, const std::string& value, sim::i64 least) {
  const sim::i64 v = value == "0" && least == 0 ? 0 : parse_positive(flag, value);
  if (v < least || v > 100000) throw UsageError(flag + ": expected " + std::to_string(least) + " to 100000, not " + value);
  return static_cast<int>(v);
}

class LinksCommand final : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("links",
                              "measure the links between this machine's GPUs: NCCL send/recv and the copy engines "
                              "between every pair, one way and both ways, 8 B to 1 GiB; write a measured link preset");
    app->add_option("--devices", devices_, "CUDA device numbers to measure, comma list (default: every GPU)");
    app->add_option("--min-bytes", min_bytes_, "smallest message (suffixes: 4K = 4096)")->capture_default_str();
    app->add_option("--max-bytes", max_bytes_, "largest message (suffixes: 256M = 256 MiB)")->capture_default_str();
    app->add_option("--step", step_, "each size is the one before times this (2 or more); the largest is always measured")
        ->capture_default_str();
    app->add_option("--warmup", warmup_, "untimed iterations before each size's timed ones")->capture_default_str();
    app->add_option("--iterations", iterations_, "timed iterations per size; the figure is their median")
        ->capture_default_str();
    app->add_flag("--no-copy-engines", no_copy_engines_, "measure NCCL only, not cudaMemcpyPeerAsync");
    app->add_flag("--no-hold", no_hold_,
                  "start the GPUs while the host enqueues an iteration (small messages' times then include the "
                  "host's launch time)");
    app->add_option("--csv", csv_, "write every pair, transport and size as CSV");
    app->add_option("--preset", preset_,
                    "write the measured link (flashlab-interconnect/1, kind measured) for flashlab ring --link FILE");
    app->add_option("--id", id_, "the preset's id (default measured-<gpu>-<P>gpu-<date>)");
    app->add_option("--label", label_, "the preset's label (default: the GPUs and their topology)");
    app->add_option("--datasheet", datasheet_,
                    "the datasheet link to compare with (a preset id or file; default: nvlink4 when every pair is "
                    "NV18 in nvidia-smi topo -m, else none)");
    app->add_flag("--quiet", quiet_, "no progress lines on stderr");
  }

  int run() override {
    kernels::LinkBenchOptions o;
    o.devices = parse_device_list("--devices", devices_);
    o.min_bytes = parse_positive("--min-bytes", min_bytes_);
    o.max_bytes = parse_positive("--max-bytes", max_bytes_);
    o.step = count_flag("--step", step_, 2);
    o.warmup = count_flag("--warmup", warmup_, 0);
    o.iterations = count_flag("--iterations", iterations_, 1);
    o.copy_engines = defaults_.copy_engines && !no_copy_engines_;
    o.hold_streams = defaults_.hold_streams && !no_hold_;
    if (const std::vector<std::string> bad = kernels::validate(o); !bad.empty()) throw UsageError("links: " + bad.front());
    for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--csv", csv_}, {"--preset", preset_}})
      if (!path.empty()) require_output_folder(flag, path);
    std::optional<sim::InterconnectModel> datasheet;
    if (!datasheet_.empty()) datasheet = load_datasheet(datasheet_);
    if (const std::string why = kernels::link_bench_unavailable_reason(o); !why.empty())
      throw UsageError("links: " + why);

    const sim::LinkMeasurements m = usage_errors_of<kernels::LinkCheckError, kernels::Unsupported, kernels::CudaError>("links", [&] {
      return kernels::run_link_bench(o, [&](const std::string& line) {
        if (!quiet_) std::cerr << "links: " << line << std::endl;
      });
    });

    if (!datasheet)
      if (const std::string id = analysis::matching_datasheet_link(m); !id.empty()) datasheet = load_datasheet(id);
    const sim::InterconnectModel link =
        analysis::measured_link(m, {id_, label_}, datasheet ? &*datasheet : nullptr);
    std::cout << analysis::link_table(m) << "\n";
    std::cout << "Measured link " << link.id << ": " << sim::fixed(link.bandwidth / 1e9, 1)
              << " GB/s one direction at " << sim::bytes_iec(link.curve.back().bytes) << ", "
              << sim::fixed(link.latency_s * 1e6, 2) << " µs for " << sim::bytes_iec(link.curve.front().bytes) << "\n";
    for (const std::string& n : link.notes) std::cout << "  - " << n << "\n";
    if (!csv_.empty()) {
      write_output("--csv", csv_, analysis::links_csv(m));
      std::cout << "wrote " << csv_ << "\n";
    }
    if (!preset_.empty()) {
      write_output("--preset", preset_, sim::to_interconnect_json(link));
      std::cout << "wrote " << preset_ << " (id " << link.id << "): flashlab ring --link " << preset_
                << "; in assets/interconnects/measured/ it is chosen by its id (flashlab ring --link " << link.id
                << ", the GUI's link list)\n";
    }
    return 0;
  }

 private:
  static sim::InterconnectModel load_datasheet(const std::string& name) {
    return usage_errors_of<sim::InterconnectError>("--datasheet", [&] { return sim::load_interconnect(name); });
  }

  // The defaults are the benchmark's own.
  const kernels::LinkBenchOptions defaults_{};
  std::string devices_, min_bytes_ = std::to_string(defaults_.min_bytes), max_bytes_ = std::to_string(defaults_.max_bytes),
                        step_ = std::to_string(defaults_.step), warmup_ = std::to_string(defaults_.warmup),
                        iterations_ = std::to_string(defaults_.iterations), csv_, preset_, id_, label_, datasheet_;
  bool no_copy_engines_ = false, no_hold_ = false, quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_links_command() { return std::make_unique<LinksCommand>(); }

}  // namespace flashlab::cli
