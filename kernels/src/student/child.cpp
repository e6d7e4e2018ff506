// A kernel file's child process: `flashlab --kernel-file-child REQUEST`. It
// opens the device, says "ready" on fd 3, then runs each case FlashLab sends
// on stdin ("case INDEX SEED") through the runner and answers its row. After a
// failed case that left the CUDA context unusable it says "exit" and ends:
// the parent starts a new child for the next case. With --fake SPEC it
// touches no GPU and plays a child that crashes, hangs or fails on cue, for
// the tests of the parent's side.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "driver.hpp"
#include "flashlab/kernels/student/isolation.hpp"
#include "flashlab/kernels/student/student_rung.hpp"
#include "protocol.hpp"

namespace flashlab::kernels::student {

using nlohmann::json;

namespace {

class Reply {
 public:
  explicit Reply(int fd) : fd_(fd) {}
  bool line(const std::string& s) const {
    std::string l = s + "\n";
    const char* p = l.data();
    std::size_t left = l.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n <= 0) return false;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    return true;
  }
  bool fatal(const std::string& message) const { return line("fatal " + json{{"message", message}}.dump()); }

 private:
  int fd_;
};

// "crash@1,hang@3" → {1: crash, 3: hang}; "hang-start" / "fail-start" (no @) act before "ready".
std::map<std::size_t, std::string> fake_plan(const std::string& spec, std::string& at_start) {
  std::map<std::size_t, std::string> plan;
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    const auto at = item.find('@');
    if (at == std::string::npos) at_start = item;
    else plan[std::stoul(item.substr(at + 1))] = item.substr(0, at);
  }
  return plan;
}

// The parent's "case INDEX SEED" for one of the request's problems; false for anything else.
bool parse_case(const std::string& command, const detail::ChildRequest& req, std::size_t& index, std::uint64_t& seed) {
  std::istringstream in(command);
  std::string word;
  return (in >> word >> index >> seed) && word == "case" && index < req.problems.size();
}

int run_fake(const detail::ChildRequest& req, const std::string& spec, const Reply& reply) {
  std::string at_start;
  const auto plan = fake_plan(spec, at_start);
  if (at_start == "hang-start") std::this_thread::sleep_for(std::chrono::hours(1));
  if (at_start == "fail-start") {
    reply.fatal("no CUDA device (a fake child that cannot start)");
    return 2;
  }
  reply.line("ready");
  for (std::string command; std::getline(std::cin, command);) {
    if (command == "quit") return 0;
    std::size_t index = 0;
    std::uint64_t seed = 0;
    if (!parse_case(command, req, index, seed)) return 2;
    const auto it = plan.find(index);
    const std::string what = it == plan.end() ? "ok" : it->second;
    if (what == "crash") ::raise(SIGSEGV);
    if (what == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (what == "exit") return 5;
    // Every field set, none to its default: the parent's tests see each come back through the pipe.
    sim::MeasuredRun r;
    try {
      r.kernel = load_kernel_file(req.kernel_path).id();
    } catch (const std::exception&) {
      r.kernel = "user:fake";
    }
    r.model = "fa1";
    r.problem = req.problems[index];
    r.tiles = {64, 32};
    r.status = sim::RunStatus::ok;
    r.time_ms_min = 1.0 + static_cast<double>(index);
    r.time_ms_median = r.time_ms_min + 0.25;
    r.time_ms_max = r.time_ms_min + 0.5;
    r.repeats = 11;
    r.launch_host_us = 3.5;
    r.peak_memory_bytes = 123456789;
    r.mem_limit_bytes = req.options.mem_limit_bytes;
    r.rel_error = 1.5e-5;
    r.ctas_per_sm = 3;
    r.heaviest_first = true;
    r.storage.o_accumulator = sim::DType::fp32;
    r.storage.dq_accumulator = sim::DType::bf16;
    r.dram_read_bytes = 1001;
    r.dram_write_bytes = 1002;
    r.l2_read_bytes = 1003;
    r.l2_write_bytes = 1004;
    r.counters_note = "fake counters";
    r.reason = "fake row of case " + std::to_string(index) + ", seed " + std::to_string(seed);
    if (what == "sticky") {
      r.status = sim::RunStatus::failed;
      r.reason = "fake: the context is unusable";
      reply.line("row " + detail::to_json(r).dump());
      reply.line("exit sticky");
      return 3;
    }
    reply.line("row " + detail::to_json(r).dump());
  }
  return 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_real(const detail::ChildRequest& req, const Reply& reply) {
  std::unique_ptr<Backend> device;
  std::unique_ptr<Backend> backend;
  KernelInfo rung;
  KernelFile file;
  try {
    file = load_kernel_file(req.kernel_path);
    std::vector<CompiledVersion> versions = req.versions;
    for (CompiledVersion& v : versions) v.image = read_file(v.image);
    device = open_cuda_backend(req.device);
    rung = student_rung(file, std::move(versions));
    backend = detail::diagnosing_backend(*device, std::make_shared<const KernelFile>(file));
  } catch (const std::exception& e) {
    reply.fatal(e.what());
    return 2;
  }
  if (!rung.built()) {
    reply.fatal("this build has no CUDA support (configure with nvcc installed)");
    return 2;
  }
  if (!reply.line("ready")) return 2;
  for (std::string command; std::getline(std::cin, command);) {
    if (command == "quit") return 0;
    std::size_t index = 0;
    std::uint64_t seed = 0;
    if (!parse_case(command, req, index, seed)) {
      reply.fatal("cannot read the command '" + command + "'");
      return 2;
    }
    RunOptions o = req.options;
    o.seed = seed;
    const sim::AttentionProblem& p = req.problems[index];
    sim::MeasuredRun row = run_case(*backend, rung, p, o);
    std::string sticky;
    if (row.status == sim::RunStatus::failed) {
      row.reason = explain_failure(row.reason, rerun_command(file.path, p));
      sticky = backend->sticky_error();
    }
    if (!reply.line("row " + detail::to_json(row).dump())) return 2;
    if (!sticky.empty()) {
      reply.line("exit " + json{{"message", sticky}}.dump());
      return 3;
    }
  }
  return 0;
}

}  // namespace

int kernel_file_child_main(int argc, char** argv) {
  // stdout is the parent's stderr: a kernel's printf shows there, and lines
  // of ours must not interleave with its buffer.
  std::ios::sync_with_stdio(true);
  const Reply reply(3);
  std::string request_path, fake;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == kKernelFileChildFlag) continue;
    if (a == "--fake" && i + 1 < argc) fake = argv[++i];
    else request_path = a;
  }
  if (::fcntl(3, F_GETFD) < 0) {
    std::cerr << "flashlab: " << kKernelFileChildFlag << " is started by flashlab bench --kernel-file, not by hand\n";
    return 2;
  }
  detail::ChildRequest req;
  try {
    req = detail::request_from_json(json::parse(read_file(request_path)));
  } catch (const std::exception& e) {
    reply.fatal(std::string("cannot read the request ") + request_path + ": " + e.what());
    return 2;
  }
  if (!fake.empty()) return run_fake(req, fake, reply);
  return run_real(req, reply);
}

}  // namespace flashlab::kernels::student
