// The benchmark panel: registry kernels and named sweeps, runs on a worker
// thread (progress, cancel), a sortable results table, and opening results
// files written by `flashlab bench` on another machine.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <numeric>

#include "state/bench_backend.hpp"
#include "state/format.hpp"
#include "model/model.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

std::string status_word(analysis::RunStatus st) {
  switch (st) {
    case analysis::RunStatus::ok: return "ok";
    case analysis::RunStatus::oom: return "OOM";
    case analysis::RunStatus::skipped: return "skipped";
    case analysis::RunStatus::failed: return "failed";
  }
  return "?";
}

void take_results(AppState& s, analysis::BenchResults r, const std::string& source) {
  s.bench.results = std::move(r);
  s.bench.have_results = true;
  s.bench.source = source;
  s.bench.error.clear();
  s.bench.order_dirty = true;
  s.bench.heatmap_kernel = -1;
  s.bench.baseline_kernel = -1;
  s.bench.filter = analysis::default_bench_filter(s.bench.results);
  s.bench.values = analysis::bench_values(s.bench.results);
  s.bench.shared.reset();
  ++s.bench.generation;
  rebuild_bench_charts(s);
}

void start_job(AppState& s, const BenchRunRequest& req) {
  const BenchBackend* be = bench_backend();
  BenchJob& job = s.bench.job;
  if (!be || job.running) return;
  if (job.worker.joinable()) job.worker.join();
  job.running = true;
  job.cancel = false;
  {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.done = job.total = 0;
    job.status = "starting…";
    job.partial = {};
    job.finished = false;
  }
  job.worker = std::thread([&job, be, req] {
    analysis::BenchResults out;
    std::string status;
    try {
      out = be->run(
          req,
          [&job](size_t done, size_t total, const analysis::BenchRow& row) {
            std::lock_guard<std::mutex> lock(job.mutex);
            job.done = done;
            job.total = total;
            job.status = row.kernel + " " + sim::describe(row.problem) + ": " + status_word(row.status);
            job.partial.rows.push_back(row);
          },
          job.cancel);
      status = job.cancel ? "cancelled: kept the rows measured so far" : "finished";
    } catch (const std::exception& e) {
      status = std::string("failed: ") + e.what();
    }
    std::lock_guard<std::mutex> lock(job.mutex);
    if (out.rows.empty()) out.rows = job.partial.rows;
    job.partial = std::move(out);
    job.status = status;
    job.finished = true;
    job.running = false;
  });
}

void sort_rows(BenchState& b) {
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (!specs) return;
  if (!specs->SpecsDirty && !b.order_dirty && b.order.size() == b.results.rows.size()) return;
  b.order.resize(b.results.rows.size());
  std::iota(b.order.begin(), b.order.end(), size_t{0});
  if (specs->SpecsCount > 0) {
    const int col = specs->Specs[0].ColumnIndex;
    const bool asc = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    const auto& rows = b.results.rows;
    auto key = [&](const analysis::BenchRow& r) -> double {
      switch (col) {
        case 2: return static_cast<double>(r.problem.batch);
        case 3: return static_cast<double>(r.problem.heads);
        case 4: return static_cast<double>(r.problem.seq_q);
        case 5: return static_cast<double>(r.problem.head_dim);
        case 6: return r.problem.causal ? 1 : 0;
        case 8: return r.time_ms_median;
        case 9: return r.tflops;
        case 10: return r.gbps;
        case 11: return static_cast<double>(r.peak_memory_bytes);
        case 12: return r.rel_error;
        default: return 0;
      }
    };
    std::stable_sort(b.order.begin(), b.order.end(), [&](size_t x, size_t y) {
      const auto& rx = rows[x];
      const auto& ry = rows[y];
      if (col == 0 || col == 1 || col == 7) {
        const std::string kx = col == 0 ? rx.kernel : col == 1 ? rx.direction : status_word(rx.status);
        const std::string ky = col == 0 ? ry.kernel : col == 1 ? ry.direction : status_word(ry.status);
        return asc ? kx < ky : ky < kx;
      }
      return asc ? key(rx) < key(ry) : key(ry) < key(rx);
    });
  }
  specs->SpecsDirty = false;
  b.order_dirty = false;
}

void results_table(AppState& s) {
  BenchState& b = s.bench;
  const auto& m = b.results.meta;
  ImGui::TextColored(color_note(), "%s · %s · %s%s", m.gpu.empty() ? "unknown GPU" : m.gpu.c_str(),
                     m.date.empty() ? "no date" : m.date.c_str(), b.source.c_str(),
                     m.flop_convention.empty() ? "" : (" · " + m.flop_convention).c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("results", 14, flags, ImGui::GetContentRegionAvail())) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* h : {"kernel", "dir", "B", "H", "N", "d", "causal", "status", "time ms", "TFLOP/s", "GB/s",
                        "peak mem", "rel err", "reason"})
    ImGui::TableSetupColumn(h, std::string(h) == "reason" ? ImGuiTableColumnFlags_NoSort : 0);
  ImGui::TableHeadersRow();
  sort_rows(b);
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(b.order.size()));
  while (clip.Step())
    for (int k = clip.DisplayStart; k < clip.DisplayEnd; ++k) {
      const analysis::BenchRow& r = b.results.rows[b.order[static_cast<size_t>(k)]];
      const bool ok = r.status == analysis::RunStatus::ok;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.kernel.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.direction.c_str());
      for (i64 v : {r.problem.batch, r.problem.heads, r.problem.seq_q, r.problem.head_dim}) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(fmt_count(v).c_str());
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.problem.causal ? "yes" : "no");
      ImGui::TableNextColumn();
      ImGui::TextColored(ok ? color_good() : color_error(), "%s", status_word(r.status).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ok ? fmt_fixed(r.time_ms_median, 3, "bench time").c_str() : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ok ? fmt_fixed(r.tflops, 1, "bench tflops").c_str() : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ok ? fmt_fixed(r.gbps, 0, "bench gbps").c_str() : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.peak_memory_bytes > 0 ? fmt_bytes(static_cast<double>(r.peak_memory_bytes), "bench mem").c_str() : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.rel_error >= 0 ? fmt_fixed(r.rel_error, 6, "bench err").c_str() : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.reason.c_str());
    }
  ImGui::EndTable();
}

}  // namespace

void open_results(AppState& s, const std::string& path) {
  try {
    take_results(s, analysis::bench_from_file(path), path);
    s.view.status = "opened " + path + ": " + std::to_string(s.bench.results.rows.size()) + " rows";
    s.view.status_is_error = false;
  } catch (const std::exception& e) {
    s.bench.error = e.what();
    s.view.status = std::string("cannot open results: ") + e.what();
    s.view.status_is_error = true;
  }
}

void close_results(AppState& s) {
  BenchState& b = s.bench;
  b.results = {};
  b.have_results = false;
  b.source.clear();
  b.error.clear();
  b.order_dirty = true;
  b.heatmap_kernel = 0;
  b.baseline_kernel = -1;
  b.filter = {};
  b.values = {};
  b.kernel_ids.clear();
  b.shared.reset();
  ++b.generation;
  rebuild_bench_charts(s);
}

namespace {

// Starts the scenario's run, or says why it cannot start: never waits, never throws.
void start_pending(AppState& s) {
  BenchState& b = s.bench;
  if (!b.pending) return;
  BenchRunRequest req = *b.pending;
  const bool current = b.pending_on_current_problem;
  b.pending.reset();
  auto refuse = [&](const std::string& why) {
    s.view.status = "benchmark not run: " + why;
    s.view.status_is_error = true;
    b.run_note = s.view.status;
  };
  const BenchBackend* be = bench_backend();
  if (!be) return refuse("this build has no kernels library (configured without CUDA)");
  if (const std::string reason = be->unavailable_reason(); !reason.empty()) return refuse(reason);
  if (b.job.running) return refuse("another benchmark is running");
  if (current) {
    if (!s.model.valid)
      return refuse("the current problem is invalid (" + (s.model.errors.empty() ? std::string("see the red line") : s.model.errors.front()) + ")");
    req.problem = s.model.problem;
  }
  start_job(s, req);
  s.view.status = "benchmark running: " + (req.sweep.empty() ? sim::describe(req.problem) : "sweep " + req.sweep) +
                  (req.counters ? ", with DRAM counters" : "");
  s.view.status_is_error = false;
}

}  // namespace

void poll_bench_job(AppState& s) {
  BenchJob& job = s.bench.job;
  std::unique_lock<std::mutex> lock(job.mutex);
  if (job.finished) {
    job.finished = false;
    analysis::BenchResults r = std::move(job.partial);
    const std::string status = job.status;
    lock.unlock();
    if (job.worker.joinable()) job.worker.join();
    const bool rows = !r.rows.empty();
    if (rows) take_results(s, std::move(r), "run in this window");
    s.view.status = "benchmark " + status;
    s.bench.run_note = rows ? std::string() : s.view.status;
    s.view.status_is_error = status.rfind("failed", 0) == 0;
  } else {
    lock.unlock();
  }
  start_pending(s);
}

bool bench_busy(AppState& s) {
  if (s.bench.pending || s.bench.job.running) return true;
  std::lock_guard<std::mutex> lock(s.bench.job.mutex);
  return s.bench.job.finished;
}

void panel_bench(AppState& s) {
  BenchState& b = s.bench;
  const BenchBackend* be = bench_backend();
  const std::string reason = be ? be->unavailable_reason() : std::string();
  const float left_w = std::max(ImGui::GetContentRegionAvail().x * 0.38f, 200.0f);
  ImGui::BeginChild("bench_left", ImVec2(left_w, 0), true);
  ImGui::PushTextWrapPos(0);
  if (!be) {
    ImGui::TextColored(color_warning(), "Benchmarks cannot run from this window: this build has no kernels "
                                                     "library (configured without CUDA, or the kernels are not built).");
  } else if (!reason.empty()) {
    ImGui::TextColored(color_warning(), "Benchmarks cannot run here: %s", reason.c_str());
  } else {
    ImGui::TextColored(color_good(), "%s: ready", be->name);
  }
  ImGui::TextColored(color_dim(), "Results written by 'flashlab bench --json FILE' on a GPU machine open here on any machine.");
  ImGui::PopTextWrapPos();

  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("results");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Open").x - 24);
  const bool enter = ImGui::InputTextWithHint("##results", "bench.json or bench.csv", &b.results_path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Open") || enter) open_results(s, b.results_path);
  if (!b.error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_error(), "✕ %s", b.error.c_str());
    ImGui::PopTextWrapPos();
  }

  if (ImGui::CollapsingHeader("Kernels (registry)", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (!be) {
      ImGui::TextColored(color_dim(), "the registry is part of the kernels library, not in this build");
    } else {
      for (const BenchKernelEntry& k : be->kernels()) {
        ImGui::TextColored(k.built ? color_good() : color_dim(), "%s", k.id.c_str());
        ImGui::SameLine();
        ImGui::TextColored(color_note(), "%s (%s; d %s)%s", k.name.c_str(), k.dtypes.c_str(), k.head_dims.c_str(),
                           k.built ? "" : " — not built");
        if (!k.summary.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.summary.c_str());
      }
    }
  }
  if (!b.sweeps_loaded) {
    b.sweeps = list_sweep_files();
    b.sweeps_loaded = true;
  }
  const std::vector<BenchSweepEntry>& sweeps = b.sweeps;
  if (ImGui::CollapsingHeader("Named sweeps (assets/sweeps)", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::SmallButton("refresh")) b.sweeps_loaded = false;
    if (sweeps.empty()) ImGui::TextColored(color_dim(), "no sweep files in %s/sweeps", sim::assets_dir().c_str());
    for (size_t k = 0; k < sweeps.size(); ++k) {
      const std::string label = sweeps[k].name + (sweeps[k].title.empty() ? "" : " — " + sweeps[k].title);
      if (ImGui::Selectable(label.c_str(), static_cast<int>(k) == b.selected_sweep)) b.selected_sweep = static_cast<int>(k);
      if (!sweeps[k].source.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", sweeps[k].source.c_str());
    }
  }
  const bool can_run = be && reason.empty() && !b.job.running;
  // Which rungs a run takes when the sweep names none: the forward ladder, the backward rungs, or both.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("pass");
  ImGui::SameLine();
  ImGui::RadioButton("forward", &b.pass, 0);
  ImGui::SameLine();
  ImGui::RadioButton("backward", &b.pass, 1);
  ImGui::SameLine();
  ImGui::RadioButton("both", &b.pass, 2);
  const sim::PassSelection pass = b.pass == 1 ? sim::PassSelection::bwd : b.pass == 2 ? sim::PassSelection::fwd_bwd
                                                                                      : sim::PassSelection::fwd;
  ImGui::Checkbox("DRAM counters (CUPTI)", &b.counters);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("a counter pass per case after the timed runs: the DRAM bytes the counters panel shows as measured");
  ImGui::BeginDisabled(!can_run || sweeps.empty());
  if (ImGui::Button("Run selected sweep") && b.selected_sweep >= 0 && static_cast<size_t>(b.selected_sweep) < sweeps.size()) {
    BenchRunRequest req;
    req.sweep = sweeps[static_cast<size_t>(b.selected_sweep)].name;
    req.counters = b.counters;
    req.pass = pass;
    start_job(s, req);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_run || !s.model.valid);
  if (ImGui::Button("Run current problem")) {
    BenchRunRequest req;
    req.problem = s.model.problem;
    req.counters = b.counters;
    req.pass = pass;
    start_job(s, req);
  }
  ImGui::EndDisabled();
  // A student's own kernel file: what `flashlab bench --kernel-file` runs, the same backend function.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("your kernel");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##kernel_file", "my_fa1.cu (assets/kernels has starters)", &b.kernel_file_path);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("a .cu file with its declaration (kernels/README.md, \"Your own kernel\"): compiled for this "
                      "GPU and run in a process of its own beside its comparison rungs, checked, timed and, with DRAM "
                      "counters, its bytes placed beside the model");
  const bool have_file = !b.kernel_file_path.empty();
  auto kernel_request = [&] {
    BenchRunRequest req;
    req.kernel_files = {b.kernel_file_path};
    req.counters = b.counters;
    req.pass = sim::PassSelection::fwd;
    return req;
  };
  ImGui::BeginDisabled(!can_run || !have_file || !s.model.valid);
  if (ImGui::Button("Run kernel on current problem")) {
    BenchRunRequest req = kernel_request();
    req.problem = s.model.problem;
    start_job(s, req);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_run || !have_file || sweeps.empty());
  if (ImGui::Button("Run kernel on selected sweep") && b.selected_sweep >= 0 &&
      static_cast<size_t>(b.selected_sweep) < sweeps.size()) {
    BenchRunRequest req = kernel_request();
    req.sweep = sweeps[static_cast<size_t>(b.selected_sweep)].name;
    start_job(s, req);
  }
  ImGui::EndDisabled();
  if (b.job.running) {
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) b.job.cancel = true;
    std::lock_guard<std::mutex> lock(b.job.mutex);
    const float f = b.job.total > 0 ? static_cast<float>(b.job.done) / static_cast<float>(b.job.total) : 0.0f;
    const std::string text = std::to_string(b.job.done) + " / " + std::to_string(b.job.total) + " cases";
    ImGui::ProgressBar(f, ImVec2(-1, 0), text.c_str());
    ImGui::TextColored(color_dim(), "%s", b.job.status.c_str());
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("bench_right", ImVec2(0, 0), true);
  if (b.have_results) results_table(s);
  else ImGui::TextColored(color_dim(), "No results yet: open a file or run a sweep. The charts appear in the tabs Time, "
                                       "TFLOP/s, Memory, Speed-up and Batch×N.");
  ImGui::EndChild();
}

}  // namespace flashlab::gui
