// The `flashlab` binary run as a user runs it, for the tests of its command
// line: in a scratch folder of the test process, with no display, stdout and
// stderr captured, the exit code as the shell sees it. FLASHLAB_EXE (the
// binary's path) is defined by the test target.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "text_checks.hpp"

#ifndef FLASHLAB_EXE
#error "FLASHLAB_EXE must name the flashlab binary (target_compile_definitions in the test's CMakeLists)"
#endif

namespace flashlab::test {

struct Run {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder of this process's own under the temporary directory, removed with
// everything in it when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : dir_(std::filesystem::temp_directory_path() / (tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// `flashlab ARGS` in `cwd`, without DISPLAY or WAYLAND_DISPLAY (so the default
// job is the headless one); output files are kept in `cwd`.
inline Run run_flashlab(const std::filesystem::path& cwd, const std::string& args) {
  const std::filesystem::path out = cwd / "stdout", err = cwd / "stderr";
  const std::string cmd = "cd '" + cwd.string() + "' && env -u DISPLAY -u WAYLAND_DISPLAY '" +
                          std::string(FLASHLAB_EXE) + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// A test file's own scratch folder and `flashlab ARGS` run in it; with a
// `command` (a file of `flashlab bench` tests: "bench"), `flashlab COMMAND ARGS`.
class ScratchRuns {
 public:
  explicit ScratchRuns(const std::string& tag, std::string command = "") : dir_(tag), command_(std::move(command)) {}
  Run operator()(const std::string& args) const {
    return run_flashlab(dir_.path(), command_.empty() ? args : command_ + " " + args);
  }
  // `flashlab ARGS` exits 0 and prints each of `parts`; the run, for the checks that follow.
  Run check_prints(const std::string& args, std::initializer_list<std::string> parts) const {
    Run r = (*this)(args);
    INFO("flashlab " << args << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    check_contains_each(r.out, parts);
    return r;
  }
  const std::filesystem::path& path() const { return dir_.path(); }

 private:
  ScratchDir dir_;
  std::string command_;
};

inline bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The index of column `name` in a CSV's header row; the case fails when it is not there.
inline size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<size_t>(it - header.begin());
}

inline std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// A refusal as every command makes it: exit code 2, nothing on stdout, one
// line on stderr that starts "flashlab: error: " and says `expect`.
inline void check_refused(const Run& r, const std::string& expect) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("flashlab: error: ", 0) == 0);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(expect));
}

// A bad input (the arguments after `flashlab`) and what its refusal must say.
struct Refusal {
  std::string args, expect;
};

// Every case refused as check_refused holds it; `run` maps the arguments to a
// Run (a ScratchRuns, or a lambda that adds the flags every case shares).
template <class Runner>
void check_refusals(const Runner& run, const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    CAPTURE(c.args);
    check_refused(run(c.args), c.expect);
  }
}

}  // namespace flashlab::test
