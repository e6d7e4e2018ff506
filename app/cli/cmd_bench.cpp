// flashlab bench: the kernel ladder on the GPU — every kernel on every point of
// a grid of problems (flags or a named sweep), checked against fp64 and timed
// (kernels/runner); the measurements placed beside the model (rates, the
// model's memory: analysis/placement); a table on stdout, CSV and JSON on
// request (analysis/bench_results).
#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

#include "bench_kernel_files.hpp"
#include "bench_ring.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/placement/bench_table.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/placement/measured_checks.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/runner/runner.hpp"

namespace flashlab::cli {
namespace {

using kernels::BenchAxes;

// The list `flashlab bench --list` prints: every registry kernel, its dtypes,
// head dims, minimum SM and whether this build can run it.
std::string registry_table() {
  analysis::TextTable t({"id", "name", "dtypes", "head dims", "min SM", "tiles", "model", "pass", "built"});
  for (const kernels::KernelInfo& k : kernels::registry()) {
    const char* tiles = k.tile_source == kernels::TileSource::runtime    ? "runtime (B_r, B_c)"
                        : k.tile_source == kernels::TileSource::compiled ? "compiled"
                                                                         : "-";
    t.add({k.id, k.name, kernels::dtype_list(k), kernels::head_dim_list(k),
           std::to_string(k.min_sm / 10) + "." + std::to_string(k.min_sm % 10), tiles,
           std::string(sim::to_string(k.model)),
           k.pass() == sim::Pass::bwd ? "bwd (after " + k.forward + ")" : std::string("fwd"),
           k.built() ? "yes" : "no (no CUDA)"});
  }
  return t.str();
}

class BenchCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("bench", "run the CUDA kernels: check against fp64, time, measure memory");
    app->add_option("--kernels", kernels_, "comma list of registry ids (flashlab bench --list), default: every rung "
                                           "of the --pass");
    app->add_option("--pass", pass_, "fwd (default) | bwd | fwd+bwd: the forward ladder, the backward rungs (each "
                                     "after its forward rung, untimed; only the backward is timed), or both; rows "
                                     "carry their direction. With --kernels: the listed rungs must compute it");
    app->add_option("--sweep", sweep_, "a named sweep of assets/sweeps (flashlab bench --list-sweeps) or a JSON file; "
                                       "the flags below override its axes");
    app->add_option("-b,--batch", batch_, "batch sizes B, comma list (default 16)");
    app->add_option("--tokens", tokens_, "tokens per batch: B = tokens / N (instead of --batch)");
    app->add_option("-n,--seq", seq_, "sequence lengths N, comma list (suffixes: 16K; default 1024)");
    app->add_option("--seq-kv", seq_kv_, "key/value lengths (default: N; non-causal only)");
    app->add_option("--heads", heads_, "heads H, comma list (default 16)");
    app->add_option("-d,--head-dim", head_dim_, "head dims d, comma list (default 64)");
    app->add_option("--emb-dim", emb_dim_, "embedding dims H·d, comma list (with --heads or --head-dim; all three when they agree)");
    app->add_option("--causal", causal_, "no | yes | both (default no)");
    app->add_option("--dtype", dtype_, "comma list of fp16, bf16, fp32 (default fp16)");
    app->add_option("--repeats", repeats_, "timed runs per case, at least 10 (more for short kernels)")
        ->capture_default_str();
    app->add_option("--warmup", warmup_, "untimed runs before timing")->capture_default_str();
    app->add_flag("--no-l2-flush", no_flush_, "do not flush L2 between timed runs (warm-cache numbers)");
    app->add_flag("--check-only", check_only_, "run each case once and check it; no timing");
    app->add_flag("--counters", counters_,
                  "a counter pass per case (CUPTI): DRAM bytes measured beside the L2 model's prediction");
    app->add_option("--check", check_, "fp64 check: sampled (rows/heads within a FLOP budget) | full | off")
        ->capture_default_str();
    app->add_option("--tiles", tiles_, "default | paper (B_c = ⌈M/4d⌉, B_r = min(B_c, d), M = the device's "
                                       "shared memory per SM) for fa1, fa2")
        ->capture_default_str();
    app->add_option("--br", br_, "B_r for fa1, fa2 (with --bc)");
    app->add_option("--bc", bc_, "B_c for fa1, fa2 (with --br)");
    app->add_option("--mem-limit", mem_limit_, "refuse allocations of a case above BYTES (e.g. 15GiB: a T4's memory)");
    app->add_option("--input-scale", input_scale_, "inputs are N(0, s²)")->capture_default_str();
    app->add_option("--seed", seed_, "seed of the inputs")->capture_default_str();
    app->add_option("--csv", csv_, "write the results as CSV to FILE");
    app->add_option("--json", json_, "write the results as JSON to FILE");
    app->add_flag("--quiet", quiet_, "no progress lines on stderr");
    app->add_flag("--list", list_, "list the kernels of the registry and exit");
    app->add_flag("--list-sweeps", list_sweeps_, "list the named sweeps and exit");
    app->add_option("--results", results_, "results files (JSON or CSV written by flashlab bench), repeat the flag "
                                           "for several: print each again, placed against today's model (DRAM "
                                           "predicted beside the counters, rates); with --check-roof: check them");
    app->add_option("--gpus", gpus_, "the ring over several GPUs: GPU counts P, comma list (NCCL between this "
                                     "machine's GPUs; each problem also runs on one GPU for the scaling efficiency). "
                                     "With a ring sweep (ring-llama2-7b, ...): overrides its GPU counts");
    app->add_option("--model", model_, "the ring: attention of a model (llama2-7b, llama3.2-3b, llama3.2-1b), comma "
                                       "list; instead of --heads/--kv-heads/--head-dim");
    app->add_option("--kv-heads", kv_heads_, "K/V heads H_kv, comma list (grouped-query attention; default H)");
    app->add_option("--layout", layout_, "the ring: " + layout_help() + ", comma list");
    app->add_flag("--virtual-gpus", virtual_gpus_, "the ring: its P GPUs as virtual GPUs on device 0, K/V passed by "
                                                   "device copies (checks the ring's arithmetic on one GPU; its "
                                                   "transfer times say nothing about links)");
    app->add_option("--devices", devices_, "the ring: CUDA device numbers of its GPUs, comma list (default 0 … P-1)");
    app->add_flag("--ranks", ranks_, "the ring: this process is one rank of a job, a process per GPU, started by "
                                     "torchrun, srun or mpirun (or scripts/launch-ranks.sh): the environment names "
                                     "the rank, the job's size and where rank 0 listens; each rank takes its local "
                                     "GPU; rank 0 prints and writes the results");
    app->add_option("--rendezvous-timeout", rendezvous_timeout_, "with --ranks: seconds to wait for every rank to "
                                                                 "join (default 60)");
    app->add_option("--ring-steps", ring_steps_, "the ring: how a step launches its work, comma list: fused (default: "
                                                 "the rungs read grouped K/V heads, fold partial outputs and add "
                                                 "gradients themselves) | pairwise (expansion, merges and sums as "
                                                 "separate kernels: the ring as first written)");
    app->add_option("--comm-stream", comm_stream_, "the ring: the exchange's stream, priority (default: the "
                                                   "device's greatest, so NCCL's CTAs take the first SMs the rung "
                                                   "frees) | default (both streams alike: a transfer waits for the "
                                                   "rung's last CTA to be dispatched)");
    app->add_option("--kernel-file", kernel_files_,
                    "your own kernel (a .cu file with its declaration; kernels/README.md, \"Your own kernel\"): "
                    "compiled for this GPU, run in a process of its own beside the ladder on every problem, checked, "
                    "timed and graded; repeat the flag for several. Its comparison rungs (its algorithm's and fa2) "
                    "run unless --kernels names others (none: only the files)");
    app->add_option("--kernel-timeout", kernel_timeout_,
                    "with --kernel-file: seconds a case of a kernel file may go without an answer before its "
                    "process is stopped (an endless loop)")
        ->capture_default_str();
    app->add_flag("--compile-only", compile_only_,
                  "with --kernel-file: compile the files for every dtype and head dim of the grid and stop (NVRTC "
                  "alone: no GPU needed)");
    app->add_flag("--no-isolation", no_isolation_,
                  "with --kernel-file: run the kernels in this process (for cuda-gdb and compute-sanitizer; a crash "
                  "then ends the run and a hang is not stopped)");
    app->add_flag("--check-roof", check_roof_,
                  "check that no timed run of the --results files is above the roofline of its GPU's datasheet "
                  "preset (exit 1 when one is); runs no kernel");
    app->add_flag("--per-point", per_point_,
                  "with --results: one line per row instead of the tables, its DRAM bytes (read + write) predicted "
                  "beside measured, and the slots-apart state where a launch of several CTAs per SM has two");
  }

  int run() override {
    if (list_) {
      std::cout << registry_table();
      return 0;
    }
    if (list_sweeps_) return print_sweeps();
    if (check_roof_ || !results_.empty()) refuse_run_flags();
    if (check_roof_ && per_point_)
      throw UsageError("--per-point prints the results files' rows; --check-roof checks them (give one or the other)");
    if (check_roof_) return check_roof();
    if (per_point_ && results_.empty()) throw UsageError("--per-point: give the results files with --results FILE");
    if (!results_.empty()) return print_results();
    require_output_folder("--csv", csv_);  // before the runs, not after them
    require_output_folder("--json", json_);
    if (!kernel_files_.empty()) return run_kernel_files();
    for (const char* flag : {"--kernel-timeout", "--compile-only", "--no-isolation"})
      if (app->count(flag) > 0) throw UsageError(std::string(flag) + " belongs to --kernel-file");
    if (kernels_ == "none") throw UsageError("--kernels none leaves nothing to run without --kernel-file");
    if (ring_asked()) return run_ring_bench(ring_flags());

    BenchAxes axes;
    std::optional<sim::i64> sweep_mem_limit;
    if (!sweep_.empty()) {
      try {
        const kernels::SweepFile s = kernels::load_sweep(sweep_);
        axes = s.axes;
        sweep_mem_limit = s.mem_limit_bytes;
        if (!quiet_) std::cerr << "sweep " << s.name << ": " << s.title << "\n";
      } catch (const std::exception& e) {
        throw UsageError(std::string("--sweep: ") + e.what());
      }
    }
    override_axes(axes);
    std::optional<sim::PassSelection> pass;
    if (!pass_.empty()) {
      pass = sim::parse_pass_selection(pass_);
      if (!pass) throw UsageError("--pass: expected fwd, bwd or fwd+bwd (got '" + pass_ + "')");
    }
    std::vector<const kernels::KernelInfo*> selected;
    std::vector<sim::AttentionProblem> problems;
    try {
      selected = kernels::select_kernels(axes.kernels, pass.value_or(sim::PassSelection::fwd));
      problems = kernels::expand_axes(axes);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (pass && *pass != sim::PassSelection::fwd_bwd)
      for (const kernels::KernelInfo* k : selected)
        if (!sim::includes(*pass, k->pass()))
          throw UsageError("--kernels: " + k->id + " computes the " + std::string(sim::to_string(k->pass())) +
                           " pass, and --pass " + std::string(sim::to_string(*pass)) + " asks for the other");
    kernels::RunOptions o = options();
    if (!mem_limit_.empty()) o.mem_limit_bytes = parse_positive("--mem-limit", mem_limit_);
    else if (sweep_mem_limit) o.mem_limit_bytes = *sweep_mem_limit;

    // Everything the user typed is valid; now the device.
    std::unique_ptr<kernels::Backend> backend;
    try {
      backend = kernels::open_cuda_backend();
    } catch (const kernels::NoDevice& e) {
      throw UsageError(e.what());
    }
    // The rows as the model places them: with the device's M, as the kernels ran.
    const sim::HardwareModel device = kernels::simulator_hardware(backend->device());
    kernels::Progress progress;
    if (!quiet_) progress = bench_progress(device);
    const sim::MeasuredRuns runs = kernels::run_bench(*backend, selected, problems, o, progress);
    const analysis::BenchResults results = analysis::bench_results(runs, device);
    std::cout << analysis::bench_table(results);
    write_output("--csv", csv_, analysis::bench_to_csv(results));
    write_output("--json", json_, analysis::bench_to_json(results));

    return bench_exit_code(results);
  }

 private:
  // The ring over several GPUs: --gpus, or a ring sweep.
  bool ring_asked() const {
    if (app->count("--rendezvous-timeout") > 0 && !ranks_)
      throw UsageError("--rendezvous-timeout is for --ranks (a process per GPU)");
    if (!gpus_.empty()) return true;
    if (sweep_.empty()) {
      if (!model_.empty() || !layout_.empty() || !devices_.empty() || virtual_gpus_ || !ring_steps_.empty() ||
          !comm_stream_.empty() || ranks_)
        throw UsageError("--model, --layout, --devices, --ring-steps, --comm-stream, --virtual-gpus and --ranks are "
                         "the ring's: give --gpus P too");
      return false;
    }
    try {
      return kernels::load_sweep(sweep_).ring;
    } catch (const std::exception& e) {
      throw UsageError(std::string("--sweep: ") + e.what());
    }
  }

  RingBenchFlags ring_flags() const {
    for (const auto& [set, flag] : {std::pair{!kernels_.empty(), "--kernels"}, std::pair{!tokens_.empty(), "--tokens"},
                                    std::pair{!seq_kv_.empty(), "--seq-kv"}, std::pair{!emb_dim_.empty(), "--emb-dim"},
                                    std::pair{counters_, "--counters"}, std::pair{!br_.empty() || !bc_.empty(), "--br/--bc"},
                                    std::pair{tiles_ != "default", "--tiles"}})
      if (set)
        throw UsageError(std::string(flag) + " is not a ring option (the ring runs the fastest tensor-core rung with "
                         "its own tiles)");
    RingBenchFlags f;
    f.gpus = gpus_;
    f.devices = devices_;
    f.model = model_;
    f.kv_heads = kv_heads_;
    f.layout = layout_;
    f.sweep = sweep_;
    f.batch = batch_;
    f.seq = seq_;
    f.heads = heads_;
    f.head_dim = head_dim_;
    f.causal = causal_;
    f.dtype = dtype_;
    f.pass = pass_;
    f.check = check_;
    f.mem_limit = mem_limit_;
    f.csv = csv_;
    f.json = json_;
    f.repeats = repeats_;
    f.warmup = warmup_;
    f.check_only = check_only_;
    f.no_flush = no_flush_;
    f.quiet = quiet_;
    f.seed = seed_;
    f.virtual_gpus = virtual_gpus_;
    f.ranks = ranks_;
    f.rendezvous_timeout_s = rendezvous_timeout_;
    if (!ring_steps_.empty()) f.steps = ring_steps_;
    if (!comm_stream_.empty()) f.comm_stream = comm_stream_;
    return f;
  }

  std::vector<std::pair<std::string, analysis::BenchResults>> results_files() const {
    std::vector<std::pair<std::string, analysis::BenchResults>> files;
    for (const std::string& path : results_) {
      try {
        files.emplace_back(path, analysis::bench_from_file(path));
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
    }
    return files;
  }

  // --results reads files and runs nothing: a run's flag beside it would be
  // ignored, so it is refused, named.
  void refuse_run_flags() const {
    for (const char* flag : {"--kernels", "--sweep", "--batch", "--tokens", "--seq", "--seq-kv", "--heads",
                             "--head-dim", "--emb-dim", "--causal", "--dtype", "--repeats", "--warmup", "--tiles",
                             "--br", "--bc", "--mem-limit", "--counters", "--check-only", "--csv", "--json", "--gpus",
                             "--model", "--kv-heads", "--layout", "--devices", "--ring-steps", "--virtual-gpus",
                             "--ranks", "--comm-stream", "--kernel-file"})
      if (app->count(flag) > 0)
        throw UsageError(std::string(flag) + " belongs to a run; --results reads results files and runs nothing "
                         "(give one or the other)");
  }

  // Each file's table again, its rows placed on the datasheet preset of its GPU
  // with the SM count and L2 the run recorded: what today's model says of
  // yesterday's measurements.
  int print_results() {
    const auto files = results_files();
    const std::vector<sim::HardwareModel> presets = analysis::datasheet_presets();
    for (const auto& [path, results] : files) {
      std::cout << path << "\n";
      const auto hw = analysis::results_hardware(results.meta, presets);
      if (!hw) {
        std::cout << "  the rows as written (no datasheet preset matches the GPU '" << results.meta.gpu << "', "
                  << results.meta.sm_count << " SMs: nothing placed again)\n";
        std::cout << (per_point_ ? analysis::dram_points(results) : analysis::bench_table(results));
        continue;
      }
      std::cout << "  placed against " << hw->name << " (L2 " << sim::bytes_iec(static_cast<double>(hw->l2_bytes))
                << ", " << hw->sm_count << " SMs, M = " << sim::bytes_iec(static_cast<double>(hw->sram_bytes_per_sm))
                << ") with today's model\n";
      const analysis::BenchResults placed = analysis::replace_results(results, *hw);
      std::cout << (per_point_ ? analysis::dram_points(placed) : analysis::bench_table(placed));
    }
    return 0;
  }

  int check_roof() {
    if (results_.empty()) throw UsageError("--check-roof: give the results files to check with --results FILE");
    const auto files = results_files();
    const std::vector<sim::HardwareModel> presets = analysis::datasheet_presets();
    int checked = 0, above = 0;
    for (const auto& [path, results] : files) {
      const analysis::RoofCheck c = analysis::check_roof(results, presets);
      std::cout << path << ": " << (c.gpu.empty() ? "unknown GPU" : c.gpu);
      if (!c.why_not.empty()) {
        std::cout << ": not checked, " << c.why_not << "\n";
        continue;
      }
      int measured = 0;
      for (const analysis::RoofRun& r : c.runs) measured += r.measured_dram ? 1 : 0;
      std::cout << " against " << c.hardware << ": " << c.runs.size() << " timed run(s) checked (" << measured
                << " with measured DRAM bytes), " << c.above << " above the roof\n";
      for (const std::string& s : c.skipped) std::cout << "  " << s << "\n";
      const auto closest = std::max_element(c.runs.begin(), c.runs.end(), [](const auto& a, const auto& b) {
        return a.roof_fraction() < b.roof_fraction();
      });
      if (closest != c.runs.end())
        std::cout << "  closest to its roof: " << closest->kernel << " " << sim::describe(closest->problem) << ", "
                  << analysis::fixed(100 * closest->roof_fraction(), 1) << "% of it ("
                  << (closest->compute_s >= closest->memory_s ? "compute" : "memory") << "-bound; "
                  << analysis::fixed(closest->time_s * 1e3, 4) << " ms measured, "
                  << analysis::fixed(closest->bound_s * 1e3, 4) << " ms bound)\n";
      if (c.above > 0) {
        analysis::TextTable t({"kernel", "problem", "measured ms", "bound ms", "compute ms", "memory ms", "cause"});
        for (const analysis::RoofRun& r : c.runs)
          if (r.above())
            t.add({r.kernel, sim::describe(r.problem), analysis::fixed(r.time_s * 1e3, 4),
                   analysis::fixed(r.bound_s * 1e3, 4), analysis::fixed(r.compute_s * 1e3, 4),
                   analysis::fixed(r.memory_s * 1e3, 4), r.cause});
        std::cout << t.str();
      }
      checked += static_cast<int>(c.runs.size());
      above += c.above;
    }
    std::cout << "bound: max(convention FLOPs / the dtype's highest datasheet peak, DRAM bytes / datasheet "
                 "bandwidth); DRAM bytes measured by the counters, else the L2 model's prediction for the row's "
                 "kernel and launch\n";
    std::cout << checked << " run(s) checked, " << above << " above the roof\n";
    return above > 0 ? 1 : 0;
  }

  // --kernel-file: the grid of the flags (or a sweep), the files beside the
  // rungs they are compared with; bench_kernel_files.cpp runs it.
  int run_kernel_files() {
    if (!gpus_.empty() || ranks_) throw UsageError("--kernel-file runs on one GPU; --gpus and --ranks are the ring's");
    if (!pass_.empty() && pass_ != "fwd")
      throw UsageError("--pass " + pass_ + ": a kernel file is a forward kernel (backward kernels are not taken "
                       "yet); leave --pass out or give fwd");
    if (!(kernel_timeout_ > 0) || kernel_timeout_ > 3600)
      throw UsageError("--kernel-timeout: expected seconds above 0, at most 3600");
    if (compile_only_ && no_isolation_) throw UsageError("--compile-only runs nothing; --no-isolation has no effect");
    BenchAxes axes;
    std::optional<sim::i64> sweep_mem_limit;
    if (!sweep_.empty()) {
      try {
        const kernels::SweepFile s = kernels::load_sweep(sweep_);
        if (s.ring) throw UsageError("--sweep " + sweep_ + " is a ring sweep; --kernel-file runs on one GPU");
        axes = s.axes;
        sweep_mem_limit = s.mem_limit_bytes;
      } catch (const UsageError&) {
        throw;
      } catch (const std::exception& e) {
        throw UsageError(std::string("--sweep: ") + e.what());
      }
    }
    override_axes(axes);
    KernelFileBench b;
    b.paths = kernel_files_;
    try {
      b.problems = kernels::expand_axes(axes);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (app->count("--kernels") > 0) b.rungs = kernels_ == "none" ? std::vector<std::string>{} : split(kernels_);
    b.options = options();
    if (!mem_limit_.empty()) b.options.mem_limit_bytes = parse_positive("--mem-limit", mem_limit_);
    else if (sweep_mem_limit) b.options.mem_limit_bytes = *sweep_mem_limit;
    b.timeout_s = kernel_timeout_;
    b.compile_only = compile_only_;
    b.in_process = no_isolation_;
    b.csv = csv_;
    b.json = json_;
    b.quiet = quiet_;
    return run_kernel_file_bench(b);
  }

  int print_sweeps() {
    const std::vector<std::string> names = kernels::list_sweeps();
    if (names.empty()) throw UsageError("no sweeps found (looked in '" + kernels::sweeps_dir() + "'; set FLASHLAB_ASSETS)");
    analysis::TextTable t({"sweep", "title", "points"});
    for (const std::string& n : names) {
      try {
        const kernels::SweepFile s = kernels::load_sweep(n);
        const std::size_t points = s.ring ? kernels::expand_ring_axes(s.axes).size() : kernels::expand_axes(s.axes).size();
        t.add({n, s.title + (s.ring ? " (--gpus)" : ""), std::to_string(points)});
      } catch (const std::exception& e) {
        t.add({n, std::string("ERROR: ") + e.what(), ""});
      }
    }
    std::cout << t.str();
    return 0;
  }

  void override_axes(BenchAxes& a) const {
    if (!kernels_.empty()) a.kernels = split(kernels_);
    if (!batch_.empty()) {
      a.batch = size_list("--batch", batch_);
      a.tokens.clear();
    }
    if (!tokens_.empty()) {
      a.tokens = size_list("--tokens", tokens_);
      if (batch_.empty()) a.batch.clear();
    }
    if (!seq_.empty()) a.seq = size_list("--seq", seq_);
    if (!seq_kv_.empty()) a.seq_kv = size_list("--seq-kv", seq_kv_);
    // Heads, head dim and embedding dim constrain each other: a flag replaces
    // the sweep's pair rather than joining it.
    if (!heads_.empty() || !head_dim_.empty() || !emb_dim_.empty()) {
      a.heads = heads_.empty() ? std::vector<sim::i64>{} : size_list("--heads", heads_);
      a.head_dim = head_dim_.empty() ? std::vector<sim::i64>{} : size_list("--head-dim", head_dim_);
      a.emb_dim = emb_dim_.empty() ? std::vector<sim::i64>{} : size_list("--emb-dim", emb_dim_);
    }
    if (!kv_heads_.empty()) a.kv_heads = size_list("--kv-heads", kv_heads_);
    if (!causal_.empty()) {
      if (causal_ == "no") a.causal = {false};
      else if (causal_ == "yes") a.causal = {true};
      else if (causal_ == "both") a.causal = {false, true};
      else throw UsageError("--causal: expected no, yes or both (got '" + causal_ + "')");
    }
    if (!dtype_.empty()) {
      a.dtypes.clear();
      for (const std::string& t : split(dtype_)) {
        const auto dt = sim::parse_dtype(t);
        if (!dt) throw UsageError("--dtype: unknown dtype '" + t + "' (expected fp16, bf16 or fp32)");
        a.dtypes.push_back(*dt);
      }
    }
  }

  kernels::RunOptions options() const {
    kernels::RunOptions o;
    if (repeats_ < 10)
      throw UsageError("--repeats: at least 10 timed runs (got " + std::to_string(repeats_) +
                       "; a median of fewer is noise — use --check-only to skip timing)");
    if (warmup_ < 0) throw UsageError("--warmup: must be 0 or more");
    o.repeats = check_only_ ? 0 : repeats_;
    o.warmup = warmup_;
    o.l2_flush = !no_flush_;
    o.counters = counters_;
    if (check_ == "sampled") o.check = kernels::CheckMode::sampled;
    else if (check_ == "full") o.check = kernels::CheckMode::full;
    else if (check_ == "off") o.check = kernels::CheckMode::off;
    else throw UsageError("--check: expected sampled, full or off (got '" + check_ + "')");
    if (!(input_scale_ > 0) || input_scale_ > 1e4)
      throw UsageError("--input-scale: expected a positive number up to 10000");
    o.input_scale = input_scale_;
    o.seed = seed_;
    if (br_.empty() != bc_.empty()) throw UsageError("--br and --bc go together (give both or neither)");
    if (!br_.empty()) {
      if (tiles_ != "default") throw UsageError("--tiles and --br/--bc are alternatives (give one)");
      o.tiles.rule = kernels::TileRule::explicit_tiles;
      o.tiles.tiles = {parse_positive("--br", br_), parse_positive("--bc", bc_)};
    } else if (tiles_ == "paper") {
      o.tiles.rule = kernels::TileRule::paper;
    } else if (tiles_ != "default") {
      throw UsageError("--tiles: expected default or paper (got '" + tiles_ + "'); explicit tiles are --br and --bc");
    }
    return o;
  }

  std::string pass_, gpus_, model_, kv_heads_, layout_, devices_, ring_steps_, comm_stream_;
  std::string kernels_, sweep_, batch_, tokens_, seq_, seq_kv_, heads_, head_dim_, emb_dim_, causal_, dtype_;
  std::string check_ = "sampled", tiles_ = "default", br_, bc_, mem_limit_, csv_, json_;
  std::vector<std::string> results_, kernel_files_;
  double kernel_timeout_ = 10;
  bool compile_only_ = false, no_isolation_ = false;
  bool check_roof_ = false, virtual_gpus_ = false, ranks_ = false, per_point_ = false;
  double rendezvous_timeout_ = 60;
  int repeats_ = 20, warmup_ = 3;
  double input_scale_ = 1.0;
  std::uint64_t seed_ = 0x5eed;
  bool no_flush_ = false, check_only_ = false, counters_ = false, quiet_ = false, list_ = false, list_sweeps_ = false;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace flashlab::cli
