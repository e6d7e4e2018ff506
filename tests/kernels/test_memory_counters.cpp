// Opening CUPTI counters where they cannot be read (no device, no libcupti, a
// build without CUDA) returns null with one line saying why; it never throws.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/memory_counters.hpp"

using namespace flashlab::kernels;

namespace {

void check_one_line_reason(const std::string& why) {
  INFO(why);
  CHECK_FALSE(why.empty());
  CHECK(why.find('\n') == std::string::npos);
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name, old;
  bool had = false;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (const char* o = std::getenv(n)) had = true, old = o;
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("a counter session on a device that does not exist is null, with one line saying why", "[kernels][cupti]") {
  std::string why;
  std::unique_ptr<CounterSession> s;
  REQUIRE_NOTHROW(s = CounterSession::open(4096, &why));
  CHECK_FALSE(s);
  check_one_line_reason(why);
  if (!built_with_cuda()) CHECK_THAT(why, Catch::Contains("no CUDA support"));
  REQUIRE_NOTHROW(s = CounterSession::open(-1, nullptr));  // no reason asked for: still no crash
  CHECK_FALSE(s);
}

TEST_CASE("without libcupti a counter session is null and names the library it looked for", "[kernels][cupti]") {
  const ScopedEnv env("FLASHLAB_CUPTI", "/nonexistent/libcupti.so");
  std::string why;
  std::unique_ptr<CounterSession> s;
  REQUIRE_NOTHROW(s = CounterSession::open(0, &why));
  CHECK_FALSE(s);
  check_one_line_reason(why);
  if (built_with_cuda())
    CHECK_THAT(why, Catch::StartsWith("CUPTI not found: dlopen(/nonexistent/libcupti.so) failed: "));
}

TEST_CASE("device 0 either opens a counter session or says in one line why not", "[kernels][cupti]") {
  std::string why;
  std::unique_ptr<CounterSession> s;
  REQUIRE_NOTHROW(s = CounterSession::open(0, &why));
  if (s)
    CHECK_THAT(s->description(), Catch::Contains("chip"));
  else
    check_one_line_reason(why);
}

TEST_CASE("the counters are the metrics ncu takes, DRAM first", "[kernels][cupti]") {
  const auto& m = memory_counter_metrics();
  REQUIRE(m.size() == 5);
  CHECK(m[0] == "dram__bytes_read.sum");
  CHECK(m[1] == "dram__bytes_write.sum");
  for (const std::string& name : m) CHECK(name.find("__") != std::string::npos);
}
