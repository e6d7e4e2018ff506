// `nvidia-smi topo -m` read into a matrix of link codes and a one-line summary.
#include "flashlab/sim/hardware/gpu_topology.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <stdexcept>

#include "flashlab/sim/hardware/gpu_topology_json.hpp"

namespace flashlab::sim {

namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// The number `s` holds after `prefix` ("GPU7" after "GPU": 7); -1 when it holds anything else.
int number_after(const std::string& s, const char* prefix) {
  const std::string p(prefix);
  if (s.size() <= p.size() || s.compare(0, p.size(), p) != 0) return -1;
  int v = 0;
  for (std::size_t k = p.size(); k < s.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k])) || v > 100000) return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

int gpu_index(const std::string& token) { return number_after(token, "GPU"); }

// "X", or upper-case letters and digits starting with a letter ("NV18", "SYS").
bool is_link_code(const std::string& t) {
  if (t.empty() || !std::isupper(static_cast<unsigned char>(t[0]))) return false;
  return std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isupper(c) || std::isdigit(c); });
}

GpuTopology unreadable(const std::string& why) {
  GpuTopology t;
  t.problem = why;
  return t;
}

std::string join(const std::set<std::string>& codes) {
  std::string s;
  for (const std::string& c : codes) s += (s.empty() ? "" : ", ") + c;
  return s;
}

// The kind of link between every pair of GPUs, in one line.
std::string summarise(const GpuTopology& t) {
  const int n = t.gpu_count;
  if (n == 1) return "one GPU";
  int pairs = 0, nvlink_pairs = 0, fewest = 0, most = 0;
  std::set<std::string> pcie;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      ++pairs;
      const int k = nvlink_count(t.link(a, b));
      if (k == 0) {
        pcie.insert(t.link(a, b));
        continue;
      }
      fewest = nvlink_pairs == 0 ? k : std::min(fewest, k);
      most = std::max(most, k);
      ++nvlink_pairs;
    }
  const std::string counts =
      fewest == most ? std::to_string(most) + " links" : std::to_string(fewest) + " to " + std::to_string(most) + " links";
  if (nvlink_pairs == pairs) return "NVLink, " + counts + " between every pair";
  const std::string pcie_words =
      pcie.size() == 1 ? *pcie.begin() + ": " + describe_link_code(*pcie.begin()) : join(pcie);
  if (nvlink_pairs == 0) return "PCIe between every pair (" + pcie_words + ")";
  return "NVLink between " + std::to_string(nvlink_pairs) + " of " + std::to_string(pairs) + " pairs (" + counts +
         "), PCIe between the others (" + pcie_words + ")";
}

}  // namespace

const std::string& GpuTopology::link(int a, int b) const {
  if (a < 0 || b < 0 || a >= gpu_count || b >= gpu_count)
    throw std::out_of_range("GPU pair (" + std::to_string(a) + ", " + std::to_string(b) + ") outside a topology of " +
                            std::to_string(gpu_count) + " GPUs");
  return links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
}

std::string strip_terminal_escapes(const std::string& text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      plain += text[i];
      continue;
    }
    // ESC, then '[' and parameters up to the final letter.
    while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  }
  return plain;
}

GpuTopology parse_nvidia_smi_topo(const std::string& text) {
  GpuTopology t;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return t;
  std::istringstream in(strip_terminal_escapes(text));
  std::vector<std::string> header;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> tok = tokens_of(line);
    // The header names the columns from GPU0 on; a row starting with GPU0 has "X" in it.
    if (!tok.empty() && tok[0] == "GPU0" && std::find(tok.begin(), tok.end(), "X") == tok.end()) {
      header = std::move(tok);
      break;
    }
  }
  if (header.empty()) return unreadable("no header row naming GPU0 (not the output of nvidia-smi topo -m)");
  int n = 0;
  while (n < static_cast<int>(header.size()) && gpu_index(header[static_cast<std::size_t>(n)]) == n) ++n;

  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> tok = tokens_of(line);
    if (tok.empty() || gpu_index(tok[0]) < 0) break;  // the NIC rows, a blank line, the legend
    const int row = static_cast<int>(t.links.size());
    if (gpu_index(tok[0]) != row)
      return unreadable("row " + tok[0] + " where GPU" + std::to_string(row) + " was expected");
    if (row >= n) return unreadable("row " + tok[0] + " beyond the header's " + std::to_string(n) + " GPU columns");
    if (static_cast<int>(tok.size()) < n + 1)
      return unreadable("row " + tok[0] + " has " + std::to_string(tok.size() - 1) + " cells for " +
                        std::to_string(n) + " GPU columns");
    std::vector<std::string> codes(tok.begin() + 1, tok.begin() + 1 + n);
    for (int c = 0; c < n; ++c) {
      const std::string& code = codes[static_cast<std::size_t>(c)];
      if (!is_link_code(code))
        return unreadable("row " + tok[0] + ", column GPU" + std::to_string(c) + ": '" + code + "' is not a link code");
      if ((c == row) != (code == "X"))
        return unreadable("row " + tok[0] + ", column GPU" + std::to_string(c) + ": '" + code +
                          "' (\"X\", the GPU itself, belongs on the diagonal and only there)");
    }
    t.links.push_back(std::move(codes));
  }
  if (static_cast<int>(t.links.size()) != n)
    return unreadable("the header names " + std::to_string(n) + " GPUs but " + std::to_string(t.links.size()) +
                      " GPU rows follow it");
  t.gpu_count = n;
  t.gpus_per_node = n;
  t.summary = summarise(t);
  return t;
}

int nvlink_count(const std::string& code) { return std::max(0, number_after(code, "NV")); }

std::string describe_link_code(const std::string& code) {
  if (const int k = nvlink_count(code); k > 0) return std::to_string(k) + " bonded NVLink" + (k == 1 ? "" : "s");
  if (code == "X") return "the GPU itself";
  if (code == "SYS" || code == "SOC") return "PCIe and the SMP interconnect between NUMA nodes";
  if (code == "NODE") return "PCIe and the interconnect between PCIe host bridges of one NUMA node";
  if (code == "PHB") return "PCIe through a PCIe host bridge";
  if (code == "PXB") return "PCIe through several PCIe bridges, no host bridge";
  if (code == "PIX") return "PCIe through at most one PCIe bridge";
  return "a code this parser does not know";
}

nlohmann::json gpu_topology_json(const GpuTopology& t) {
  nlohmann::json j{{"gpu_count", t.gpu_count}, {"gpus_per_node", t.gpus_per_node}, {"summary", t.summary},
                   {"links", t.links}};
  if (!t.problem.empty()) j["problem"] = t.problem;
  return j;
}

}  // namespace flashlab::sim
