// `nvidia-smi topo -m` read into link codes: real-looking outputs with and
// without the terminal escapes nvidia-smi writes to a terminal, with NIC rows,
// affinity columns and legends; one GPU; PCIe, NVLink and mixed machines; and
// text that is not a matrix, which gives a reason rather than a guess.
#include <catch2/catch.hpp>

#include "flashlab/sim/hardware/gpu_topology.hpp"
#include "flashlab/sim/hardware/gpu_topology_json.hpp"

using namespace flashlab::sim;

namespace {

// Two H200s over 18 NVLinks and two NICs, as nvidia-smi prints to a terminal
// (the header underlined with ESC[4m ... ESC[0m).
const char* const kTwoH200 =
    "\t\x1b[4mGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tSYS\tSYS\t0-47,96-143\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tSYS\tSYS\t48-95,144-191\t1\t\tN/A\n"
    "NIC0\tSYS\tSYS\t X \tPIX\t\t\t\t\n"
    "NIC1\tSYS\tSYS\tPIX\t X \t\t\t\t\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n"
    "  NIC1: mlx5_1\n";

// Four PCIe GPUs on two CPUs, written with spaces (as a pipe or a copy shows it).
const char* const kFourPcie =
    "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
    "GPU0     X      PIX     SYS     SYS     0-15            0\n"
    "GPU1    PIX      X      SYS     SYS     0-15            0\n"
    "GPU2    SYS     SYS      X      PIX     16-31           1\n"
    "GPU3    SYS     SYS     PIX      X      16-31           1\n"
    "\n"
    "Legend:\n"
    "  X    = Self\n";

std::string eight_nv18() {
  std::string t = "\t";
  for (int c = 0; c < 8; ++c) t += "GPU" + std::to_string(c) + "\t";
  t += "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
  for (int r = 0; r < 8; ++r) {
    t += "GPU" + std::to_string(r);
    for (int c = 0; c < 8; ++c) t += c == r ? "\t X " : "\tNV18";
    t += "\t0-55\t" + std::to_string(r / 4) + "\t\tN/A\n";
  }
  return t;
}

}  // namespace

TEST_CASE("topology: two H200s over NVLink, escapes, NIC rows and the legends", "[topology]") {
  const GpuTopology t = parse_nvidia_smi_topo(kTwoH200);
  INFO(t.problem);
  REQUIRE(t.gpu_count == 2);
  CHECK(t.gpus_per_node == 2);
  CHECK(t.problem.empty());
  CHECK(t.link(0, 0) == "X");
  CHECK(t.link(0, 1) == "NV18");
  CHECK(t.link(1, 0) == "NV18");
  CHECK(t.summary == "NVLink, 18 links between every pair");
  CHECK_THROWS_AS(t.link(0, 2), std::out_of_range);
  // The same text without its escapes reads the same.
  const GpuTopology plain = parse_nvidia_smi_topo(strip_terminal_escapes(kTwoH200));
  CHECK(plain.links == t.links);
  CHECK(strip_terminal_escapes("a\x1b[4mb\x1b[0mc") == "abc");
}

TEST_CASE("topology: eight GPUs through NVSwitch, four PCIe GPUs, one GPU", "[topology]") {
  const GpuTopology eight = parse_nvidia_smi_topo(eight_nv18());
  REQUIRE(eight.gpu_count == 8);
  CHECK(eight.link(3, 6) == "NV18");
  CHECK(eight.summary == "NVLink, 18 links between every pair");

  const GpuTopology four = parse_nvidia_smi_topo(kFourPcie);
  REQUIRE(four.gpu_count == 4);
  CHECK(four.link(0, 1) == "PIX");
  CHECK(four.link(1, 2) == "SYS");
  CHECK(four.summary == "PCIe between every pair (PIX, SYS)");

  const GpuTopology one = parse_nvidia_smi_topo("\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
                                                "GPU0\t X \t0-63\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n");
  REQUIRE(one.gpu_count == 1);
  CHECK(one.summary == "one GPU");
}

TEST_CASE("topology: NVLink bridges between some pairs, PCIe between the others", "[topology]") {
  const GpuTopology t = parse_nvidia_smi_topo(
      "\tGPU0\tGPU1\tGPU2\tGPU3\n"
      "GPU0\t X \tNV12\tSYS\tSYS\n"
      "GPU1\tNV12\t X \tSYS\tSYS\n"
      "GPU2\tSYS\tSYS\t X \tNV4\n"
      "GPU3\tSYS\tSYS\tNV4\t X \n");
  REQUIRE(t.gpu_count == 4);
  CHECK(t.summary ==
        "NVLink between 2 of 6 pairs (4 to 12 links), PCIe between the others "
        "(SYS: PCIe and the SMP interconnect between NUMA nodes)");
  CHECK(nvlink_count("NV12") == 12);
  CHECK(nvlink_count("SYS") == 0);
  CHECK(nvlink_count("NV") == 0);
  CHECK(describe_link_code("NV18") == "18 bonded NVLinks");
  CHECK(describe_link_code("PIX") == "PCIe through at most one PCIe bridge");
}

TEST_CASE("topology: text that is not a matrix gives a reason, never a guess", "[topology]") {
  const GpuTopology empty = parse_nvidia_smi_topo(" \n\t\n");
  CHECK(empty.empty());
  CHECK(empty.problem.empty());
  struct Bad {
    const char* text;
    const char* problem;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"example: 8 GPUs of one node", "no header row naming GPU0"},
      {"\tGPU0\tGPU1\nGPU0\t X \tNV18\n", "the header names 2 GPUs but 1 GPU rows follow it"},
      {"\tGPU0\tGPU1\nGPU0\t X \t0-47\nGPU1\tNV18\t X \n", "row GPU0, column GPU1: '0-47' is not a link code"},
      {"\tGPU0\tGPU1\nGPU0\tNV18\tNV18\nGPU1\tNV18\t X \n", "row GPU0, column GPU0: 'NV18'"},
      {"\tGPU0\tGPU1\nGPU1\tNV18\t X \nGPU0\t X \tNV18\n", "row GPU1 where GPU0 was expected"},
      {"\tGPU0\nGPU0\t X\nGPU1\tNV18\t X\n", "row GPU1 beyond the header's 1 GPU columns"},
  }));
  const GpuTopology t = parse_nvidia_smi_topo(bad.text);
  CHECK(t.empty());
  CHECK(t.summary.empty());
  CHECK_THAT(t.problem, Catch::Contains(bad.problem));
}

TEST_CASE("topology: the JSON form carries the matrix and the summary", "[topology]") {
  const nlohmann::json j = gpu_topology_json(parse_nvidia_smi_topo(kTwoH200));
  CHECK(j["gpu_count"] == 2);
  CHECK(j["gpus_per_node"] == 2);
  CHECK(j["summary"] == "NVLink, 18 links between every pair");
  CHECK(j["links"][0][1] == "NV18");
  CHECK_FALSE(j.contains("problem"));
  CHECK(gpu_topology_json(parse_nvidia_smi_topo("no matrix here"))["problem"].is_string());
}
