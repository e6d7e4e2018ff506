// flashlab links as a user runs it: on a machine that cannot measure (no GPU,
// one GPU, no NCCL, a build without CUDA) one line naming why and exit code 2;
// malformed flags named, exit code 2, before anything is measured; and a
// measured link file taken by flashlab ring.
#include <catch2/catch.hpp>

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_links_cli_cases {

using flashlab::test::contains;
using flashlab::test::line_count;
using flashlab::test::Run;

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-links-cli");

TEST_CASE("links: without 2 GPUs and NCCL, one line naming why and exit code 2", "[cli][links]") {
  const Run r = run_flashlab("links --max-bytes 64 --warmup 0 --iterations 1 --preset preset.json --csv links.csv");
  if (r.code == 0) {
    // A machine with 2 GPUs and NCCL measures instead (the GPU tests cover it).
    CHECK(contains(r.out, "Measured link"));
    return;
  }
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK(contains(r.err, "flashlab: error: links: "));
  CHECK((contains(r.err, "CUDA") || contains(r.err, "GPU") || contains(r.err, "NCCL")));
  CHECK_FALSE(std::filesystem::exists(run_flashlab.path() / "preset.json"));
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
  CHECK(line_count(r.err) == 1);
  CHECK(contains(r.err, bad.message));
}

TEST_CASE("links: flashlab ring takes a measured link file and follows its curve", "[cli][links][ring]") {
  flashlab::sim::InterconnectModel l;
  l.id = "measured-test";
  l.label = "measured test link";
  l.kind = "measured";
  l.source = "measured on 2× Test GPU, 2026-11-26, NCCL 2.28.9";
  // 8 B in 10 µs, 1 MiB in 13 µs, 1 GiB in 2.9 ms.
  for (const auto& [bytes, s] : std::vector<std::pair<double, double>>{{8, 10e-6}, {1 << 20, 13e-6}, {1 << 30, 2.9e-3}})
    l.curve.push_back({bytes, s, bytes / s, 0.9 * bytes / s});
  l.bandwidth = l.curve.back().bandwidth;
  l.latency_s = l.curve.front().time_s;
  std::ofstream(run_flashlab.path() / "measured.json") << flashlab::sim::to_interconnect_json(l);

  const Run j = run_flashlab("ring --gpus 4 --seq 8K --link measured.json --json --timeline");
  INFO(j.err);
  REQUIRE(j.code == 0);
  const nlohmann::json out = nlohmann::json::parse(j.out);
  CHECK(out["topology"]["intra"]["kind"] == "measured");
  CHECK(out["topology"]["intra"]["curve_points"] == 3);
  for (const auto& e : out["events"])
    if (e["kind"] == "transfer") {
      const double bytes = e["bytes"].get<double>();
      // Both directions at once (every GPU sends and receives): 0.9 of the one-way rate.
      CHECK(e["end_s"].get<double>() - e["start_s"].get<double>() == Approx(l.transfer_s(bytes) / 0.9));
    }
  const Run text = run_flashlab("ring --gpus 4 --seq 8K --link measured.json");
  CHECK(contains(text.out, "measured test link"));
  CHECK(contains(text.out, "transfers follow its measured curve of 3 message sizes"));
}

}  // namespace test_links_cli_cases
