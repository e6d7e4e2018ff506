#include "flashlab/analysis/implementations.hpp"

#include <algorithm>

namespace flashlab::analysis {

namespace {

// The palette() slots no family of the table takes: unknown ids share them.
constexpr int kFreeColours[] = {7, 10};

}  // namespace

const std::vector<Implementation>& implementations() {
  // Colours: PyTorch eager vermillion (the labs' red line), FlashAttention-1
  // blue (their blue line); the rest far enough apart on a projector.
  static const std::vector<Implementation> table{
      {"naive", "standard attention (our GEMM)", "naive", 6},
      {"naive_cublas", "standard attention (cuBLAS)", "naive_cublas", 3},
      {"fa1", "FlashAttention-1 (CUDA cores)", "fa1", 0},
      {"fa2", "FlashAttention-2 (CUDA cores)", "fa2", 2},
      {"fa2_tc", "FlashAttention-2 (tensor cores)", "fa2_tc", 4},
      {"fa3_hopper", "FlashAttention-3 (Hopper, wgmma)", "fa3_hopper", 8},
      {"naive_bwd", "standard attention backward (cuBLAS)", "naive_cublas", 3},
      {"fa2_bwd", "FlashAttention-2 backward (CUDA cores)", "fa2", 2},
      {"fa2_tc_bwd", "FlashAttention-2 backward (tensor cores)", "fa2_tc", 4},
      {"torch_eager", "PyTorch eager", "torch_eager", 1},
      {"sdpa_flash", "PyTorch SDPA (FlashAttention-2)", "sdpa_flash", 5},
      {"sdpa_cudnn", "PyTorch SDPA (cuDNN)", "sdpa_cudnn", 9},
  };
  return table;
}

const Implementation* find_implementation(const std::string& id) {
  const auto& t = implementations();
  const auto it = std::find_if(t.begin(), t.end(), [&](const Implementation& i) { return i.id == id; });
  return it == t.end() ? nullptr : &*it;
}

std::string implementation_name(const std::string& id) {
  const Implementation* i = find_implementation(id);
  return i ? std::string(i->name) : id;
}

std::string run_name(const std::string& id, const std::string& direction) {
  const Implementation* i = find_implementation(id);
  const bool own_pass = i && i->family != i->id;  // a backward rung says so in its name
  return implementation_name(id) + (direction == "bwd" && !own_pass ? " backward" : "");
}

Color implementation_colour(const std::string& id) {
  if (const Implementation* i = find_implementation(id)) return palette(i->colour);
  unsigned h = 0;
  for (char ch : id) h = h * 31 + static_cast<unsigned char>(ch);
  return palette(kFreeColours[h % (sizeof kFreeColours / sizeof kFreeColours[0])]);
}

bool is_pytorch(const std::string& id) { return id.rfind("torch", 0) == 0 || id.rfind("sdpa", 0) == 0; }

}  // namespace flashlab::analysis
