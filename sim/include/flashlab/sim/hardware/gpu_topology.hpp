// The GPUs of one host and the links between them, as `nvidia-smi topo -m`
// prints them: a matrix of link codes per GPU pair ("NV18": a bonded set of 18
// NVLinks; "SYS", "NODE", "PHB", "PXB", "PIX": PCIe paths of growing
// closeness; "X": the GPU itself), read into values. The text stays the
// record (ring results and measured links keep it); these fields are derived
// from it wherever a file is read or written. Plain values, no I/O.
#pragma once

#include <string>
#include <vector>

namespace flashlab::sim {

struct GpuTopology {
  int gpu_count = 0;                            // GPU rows of the matrix; 0: no topology
  std::vector<std::vector<std::string>> links;  // [i][j]: the code between GPU i and GPU j ("X" when i = j)
  std::string summary;                          // "NVLink, 18 links between every pair", "PCIe between every pair (SYS: ...)"
  int gpus_per_node = 0;                        // GPUs of this host: nvidia-smi shows one host
  std::string problem;                          // why a non-empty text gave no matrix; empty otherwise

  bool empty() const { return gpu_count == 0; }
  // The code between GPU a and GPU b; throws std::out_of_range outside the matrix.
  const std::string& link(int a, int b) const;
};

// `text` without terminal escape sequences (ESC [ … letter): nvidia-smi
// underlines its header with them when it writes to a terminal.
std::string strip_terminal_escapes(const std::string& text);

// The GPU rows of the matrix, escapes or not, columns separated by tabs or
// spaces; the NIC rows, the affinity columns and the legends are skipped.
// Empty text gives an empty topology; text without a readable matrix gives an
// empty one whose `problem` says why (never a guess).
GpuTopology parse_nvidia_smi_topo(const std::string& text);

// The NVLinks a code bonds: 18 for "NV18", 0 for any other code.
int nvlink_count(const std::string& code);
// nvidia-smi's legend for a code, in words: "18 bonded NVLinks",
// "PCIe and the SMP interconnect between NUMA nodes" (SYS), ...
std::string describe_link_code(const std::string& code);

}  // namespace flashlab::sim
