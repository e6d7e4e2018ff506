// flashlab links as a user runs it: on a machine that cannot measure (no GPU,
// one GPU, no NCCL, a build without CUDA) one line naming why and exit code 2;
// malformed flags named, exit code 2, before anything is measured.
#include <catch2/catch.hpp>

#include "../support/run_flashlab.hpp"

using flashlab::test::Run;

namespace {

const flashlab::test::ScratchDir& scratch() {
  static const flashlab::test::ScratchDir dir("flashlab-links-cli");
  return dir;
}

Run run_flashlab(const std::string& args) { return flashlab::test::run_flashlab(scratch().path(), args); }

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("links: without 2 GPUs and NCCL, one line naming why and exit code 2", "[cli][links]") {
  const Run r = run_flashlab("links --max-bytes 64 --warmup 0 --iterations 1 --preset preset.json --csv links.csv");
  if (r.code == 0) {
    // A machine with 2 GPUs and NCCL measures instead (the GPU tests cover it).
    CHECK(has(r.out, "Measured link"));
    return;
  }
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(has(r.err, "flashlab: error: links: "));
  CHECK((has(r.err, "CUDA") || has(r.err, "GPU") || has(r.err, "NCCL")));
  CHECK_FALSE(std::filesystem::exists(scratch().path() / "preset.json"));
}

TEST_CASE("links: malformed flags are named with exit code 2", "[cli][links]") {
  struct Bad {
    const char* args;
    const char* message;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"links --devices 0", "links: a link needs 2 devices; 1 named"},
      {"links --devices 0,x", "--devices: expected CUDA device numbers like 0,1 (got 'x')"},
      {"links --devices 1,1", "device 1 is named twice"},
      {"links --min-bytes 1K --max-bytes 512", "the largest message (512 bytes) is smaller than the smallest (1024)"},
      {"links --max-bytes lots", "--max-bytes"},
      {"links --step 1", "--step: expected 2 to 100000, not 1"},
      {"links --iterations 0", "--iterations"},
      {"links --preset no-such-folder/p.json", "--preset: folder 'no-such-folder' does not exist"},
      {"links --datasheet warp-drive", "--datasheet: unknown link 'warp-drive'"},
  }));
  const Run r = run_flashlab(bad.args);
  INFO(bad.args << "\n" << r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(has(r.err, bad.message));
}
