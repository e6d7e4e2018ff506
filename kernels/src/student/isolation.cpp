// The parent's side of a kernel file's child: the request written once, the
// child started with a pipe for commands (its stdin) and one for answers (its
// fd 3), its stdout joined to our stderr (a kernel's printf shows, the tables
// on stdout stay clean), a watchdog on every answer, and a failed row naming
// what happened when the child ends, hangs or cannot start.
#include "flashlab/kernels/student/isolation.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "flashlab/kernels/student/student_rung.hpp"
#include "protocol.hpp"

namespace flashlab::kernels::student {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  return "signal " + std::to_string(sig) + (abbrev ? " (SIG" + std::string(abbrev) + (what ? ": " + std::string(what) : "") + ")" : "");
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

}  // namespace

struct KernelProcess::Impl {
  KernelFile file;
  std::vector<sim::AttentionProblem> problems;
  RunOptions options;
  IsolationOptions isolation;
  fs::path folder;
  fs::path request;
  pid_t pid = -1;
  int command_fd = -1;  // the child's stdin
  int reply_fd = -1;    // the child's fd 3
  std::string buffer;   // read from reply_fd, not yet a whole line
  int started = 0;
  std::string broken;   // a child that cannot start says so once; every later case gets it

  ~Impl() {
    stop();
    std::error_code ec;
    if (!folder.empty()) fs::remove_all(folder, ec);
  }

  sim::MeasuredRun base_row(std::size_t index) const {
    sim::MeasuredRun r;
    r.kernel = file.id();
    r.model = std::string(sim::to_string(file.declaration.algorithm));
    r.problem = problems.at(index);
    r.tiles = model_tiles(file.declaration);
    r.mem_limit_bytes = options.mem_limit_bytes;
    r.storage.o_accumulator = file.declaration.o_accumulator;
    r.status = sim::RunStatus::failed;
    return r;
  }

  void close_fds() {
    if (command_fd >= 0) ::close(command_fd);
    if (reply_fd >= 0) ::close(reply_fd);
    command_fd = reply_fd = -1;
    buffer.clear();
  }

  // The child's end, collected: "" while it runs, else how it ended.
  std::string reap(bool wait) {
    if (pid < 0) return "it was not running";
    int status = 0;
    pid_t r;
    do r = ::waitpid(pid, &status, wait ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) return "";
    pid = -1;
    close_fds();
    if (r < 0) return "it ended (waitpid: " + std::string(std::strerror(errno)) + ")";
    if (WIFSIGNALED(status)) return "it ended with " + signal_text(WTERMSIG(status));
    if (WIFEXITED(status)) return "it exited with code " + std::to_string(WEXITSTATUS(status));
    return "it ended";
  }

  void kill_child() {
    if (pid < 0) return;
    ::kill(-pid, SIGKILL);  // its process group: anything it started too
    ::kill(pid, SIGKILL);
    reap(true);
  }

  void stop() {
    if (pid < 0) return;
    if (command_fd >= 0) {
      const char quit[] = "quit\n";
      (void)!::write(command_fd, quit, sizeof quit - 1);
      ::close(command_fd);
      command_fd = -1;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < until) {
      if (!reap(false).empty() || pid < 0) return;
      ::usleep(10'000);
    }
    kill_child();
  }

  // Starts a child; "" or why not.
  std::string spawn() {
    std::vector<std::string> argv = isolation.child_command;
    if (argv.empty()) argv = {self_executable(), kKernelFileChildFlag};
    argv.push_back(request.string());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);

    int command[2], reply[2];
    if (::pipe2(command, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    if (::pipe2(reply, O_CLOEXEC) != 0) {
      ::close(command[0]);
      ::close(command[1]);
      return std::string("pipe: ") + std::strerror(errno);
    }
    const long max_fd = std::min<long>(::sysconf(_SC_OPEN_MAX) > 0 ? ::sysconf(_SC_OPEN_MAX) : 1024, 4096);
    const pid_t child = ::fork();
    if (child < 0) {
      const std::string why = std::string("fork: ") + std::strerror(errno);
      for (int fd : {command[0], command[1], reply[0], reply[1]}) ::close(fd);
      return why;
    }
    if (child == 0) {
      // Only async-signal-safe calls until exec.
      ::setpgid(0, 0);
      ::dup2(command[0], 0);
      ::dup2(reply[1], 3);
      ::dup2(2, 1);
      for (long fd = 4; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
      ::execv(cargv[0], cargv.data());
      const char msg[] = "fatal {\"message\":\"cannot start the child process (exec failed)\"}\n";
      (void)!::write(3, msg, sizeof msg - 1);
      ::_exit(127);
    }
    ::setpgid(child, child);  // also here: no race with a kill before the child ran setpgid
    ::close(command[0]);
    ::close(reply[1]);
    pid = child;
    command_fd = command[1];
    reply_fd = reply[0];
    ++started;
    return "";
  }

  // One line from the child within `timeout_s`: the line, or nullopt with
  // `ended` set ("" for a timeout, else how the child ended).
  std::optional<std::string> read_line(double timeout_s, std::string& ended) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ended.clear();
        return std::nullopt;
      }
      pollfd p{reply_fd, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(reply_fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ended = reap(true);
        if (ended.empty()) ended = "it closed its pipe";
        return std::nullopt;
      }
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
  }

  std::string message_of(const std::string& line, std::size_t prefix) const {
    try {
      return json::parse(line.substr(prefix)).at("message").get<std::string>();
    } catch (const std::exception&) {
      return line.substr(prefix);
    }
  }

  // A running child that has said "ready", or why there is none.
  std::string ensure_child() {
    if (pid >= 0) return "";
    if (!broken.empty()) return broken;
    if (const std::string why = spawn(); !why.empty())
      return broken = "cannot start a process for " + file.path + ": " + why;
    std::string ended;
    const auto line = read_line(isolation.start_timeout_s, ended);
    if (line && *line == "ready") return "";
    if (line && line->rfind("fatal ", 0) == 0) {
      const std::string why = message_of(*line, 6);
      kill_child();
      return broken = why;
    }
    if (!line && ended.empty()) {
      kill_child();
      return "the process for " + file.path + " did not start within " + fixed1(isolation.start_timeout_s) +
             " s (its CUDA context and libraries); it was stopped";
    }
    if (line) {
      kill_child();
      return "the process for " + file.path + " answered '" + line->substr(0, 80) + "' instead of ready";
    }
    return "the process for " + file.path + " ended before it was ready: " + ended;
  }

  sim::MeasuredRun run(std::size_t index, std::uint64_t seed) {
    sim::MeasuredRun row = base_row(index);
    const std::string rerun = rerun_command(file.path, row.problem);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (const std::string why = ensure_child(); !why.empty()) {
        row.reason = why;
        return row;
      }
      const std::string command = "case " + std::to_string(index) + " " + std::to_string(seed) + "\n";
      bool sent = ::write(command_fd, command.data(), command.size()) == static_cast<ssize_t>(command.size());
      std::string ended;
      std::optional<std::string> line;
      if (sent) line = read_line(isolation.case_timeout_s, ended);
      else ended = reap(true);
      if (line && line->rfind("row ", 0) == 0) {
        try {
          return detail::run_from_json(json::parse(line->substr(4)));
        } catch (const std::exception& e) {
          kill_child();
          row.reason = "the kernel's process answered a row FlashLab cannot read (" + std::string(e.what()) + ")";
          return row;
        }
      }
      if (line && line->rfind("exit", 0) == 0) {
        // It ended after the case before, its CUDA context unusable: a new child takes this case.
        reap(true);
        continue;
      }
      if (line && line->rfind("fatal ", 0) == 0) {
        row.reason = message_of(*line, 6);
        kill_child();
        return row;
      }
      if (line) {
        kill_child();
        row.reason = "the kernel's process answered '" + line->substr(0, 80) + "' instead of a row";
        return row;
      }
      if (ended.empty()) {
        kill_child();
        row.reason = "hung: no answer within " + fixed1(isolation.case_timeout_s) +
                     " s (--kernel-timeout), so its process was stopped: an endless loop, or a __syncthreads() "
                     "that some threads never reach? find it: compute-sanitizer --tool synccheck " + rerun +
                     ", or cuda-gdb --args " + rerun + " and Ctrl-C while it hangs";
        return row;
      }
      if (attempt == 0 && !sent) continue;  // it had ended before this case: a new child takes it
      row.reason = "the kernel's process ended during this case without a result: " + ended +
                   " (the host side crashed, or the machine ran out of memory); run it alone: " + rerun;
      return row;
    }
    row.reason = "the kernel's process ended twice before this case could start";
    return row;
  }
};

KernelProcess::KernelProcess(const KernelFile& file, const std::vector<CompiledVersion>& versions,
                             std::vector<sim::AttentionProblem> problems, const RunOptions& options, int device,
                             IsolationOptions isolation)
    : impl_(std::make_unique<Impl>()) {
  impl_->file = file;
  impl_->problems = std::move(problems);
  impl_->options = options;
  impl_->isolation = std::move(isolation);
  // SIGPIPE would end FlashLab when a child is gone before a command reaches it.
  ::signal(SIGPIPE, SIG_IGN);

  std::string tmpl = (fs::temp_directory_path() / "flashlab-kernel-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error("cannot make a temporary folder for " + file.path + ": " + std::strerror(errno));
  impl_->folder = tmpl;
  detail::ChildRequest req;
  req.kernel_path = fs::absolute(file.path).string();
  req.problems = impl_->problems;
  req.options = options;
  req.device = device;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    CompiledVersion v = versions[i];
    const fs::path image = impl_->folder / ("version-" + std::to_string(i) + (v.target.rfind("sm_", 0) == 0 ? ".cubin" : ".ptx"));
    std::ofstream out(image, std::ios::binary);
    out.write(v.image.data(), static_cast<std::streamsize>(v.image.size()));
    if (!out) throw std::runtime_error("cannot write " + image.string());
    v.image = image.string();
    req.versions.push_back(std::move(v));
  }
  impl_->request = impl_->folder / "request.json";
  std::ofstream out(impl_->request);
  out << detail::to_json(req).dump();
  if (!out) throw std::runtime_error("cannot write " + impl_->request.string());
}

KernelProcess::~KernelProcess() = default;

sim::MeasuredRun KernelProcess::run(std::size_t index, std::uint64_t seed) { return impl_->run(index, seed); }

int KernelProcess::children_started() const { return impl_->started; }

void KernelProcess::stop() { impl_->stop(); }

}  // namespace flashlab::kernels::student
