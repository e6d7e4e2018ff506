#include "flashlab/analysis/charts/implementations.hpp"

#include <algorithm>

namespace flashlab::analysis {

namespace {

// The palette() slots no family of the table takes: unknown ids share them.
constexpr int kFreeColours[] = {7, 10};

// Students' kernels: colours neither the palette nor the table use, chosen by
// the kernel's name (two names may meet in one colour; legends name each).
constexpr Color kUserColours[] = {
    {20, 20, 20, 255},    // near-black: "yours" against the ladder's colours
    {200, 30, 160, 255},  // magenta
    {0, 130, 130, 255},   // teal
    {140, 90, 200, 255},  // lavender
};
constexpr std::string_view kUserPrefix = "user:";

unsigned name_hash(const std::string& s) {
  unsigned h = 0;
  for (char ch : s) h = h * 31 + static_cast<unsigned char>(ch);
  return h;
}

}  // namespace

const std::vector<Implementation>& implementations() {
  // Colours, Okabe–Ito first (palette()): PyTorch eager vermillion (the labs'
  // red line) and with it the unfused model of eager PyTorch; FlashAttention-1
  // blue (their blue line); standard attention in its cuBLAS rung's purple,
  // our own GEMM's rung grey beside it; FlashAttention-2 green, its tensor-core
  // and Hopper rungs, drawn beside it, violet and wine; PyTorch's SDPA in
  // colours no rung of ours takes. The labs draw eager PyTorch, SDPA's
  // FlashAttention-2 and the tensor-core rung together: vermillion, sky blue
  // and violet stay apart for protan, deutan and tritan eyes too (CIELAB
  // distance over 55 in each simulation, where orange beside vermillion fell
  // to 17). Dark yellow and brown are left for ids not in the table.
  static const std::vector<Implementation> table{
      {"naive", "standard attention (our GEMM)", "naive", 6, ""},
      {"naive_cublas", "standard attention (cuBLAS)", "naive_cublas", 3, "standard"},
      {"fa1", "FlashAttention-1 (CUDA cores)", "fa1", 0, "fa1"},
      {"fa2", "FlashAttention-2 (CUDA cores)", "fa2", 2, "fa2"},
      {"fa2_tc", "FlashAttention-2 (tensor cores)", "fa2_tc", 11, ""},
      {"fa3_hopper", "FlashAttention-3 (Hopper, wgmma)", "fa3_hopper", 8, ""},
      {"naive_bwd", "standard attention backward (cuBLAS)", "naive_cublas", 3, "standard_bwd"},
      {"fa2_bwd", "FlashAttention-2 backward (CUDA cores)", "fa2", 2, "fa2_bwd"},
      {"fa2_tc_bwd", "FlashAttention-2 backward (tensor cores)", "fa2_tc", 11, ""},
      {"fa3_hopper_bwd", "FlashAttention-3 backward (Hopper, wgmma)", "fa3_hopper", 8, ""},
      {"torch_eager", "PyTorch eager", "torch_eager", 1, "pytorch"},
      {"sdpa_flash", "PyTorch SDPA (FlashAttention-2)", "sdpa_flash", 5, ""},
      {"sdpa_cudnn", "PyTorch SDPA (cuDNN)", "sdpa_cudnn", 9, ""},
  };
  return table;
}

const Implementation* find_implementation(const std::string& id) {
  const auto& t = implementations();
  const auto it = std::find_if(t.begin(), t.end(), [&](const Implementation& i) { return i.id == id; });
  return it == t.end() ? nullptr : &*it;
}

std::string implementation_name(const std::string& id) {
  if (is_user_kernel(id)) return id.substr(kUserPrefix.size()) + " (your kernel)";
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
  if (is_user_kernel(id))
    return kUserColours[name_hash(id.substr(kUserPrefix.size())) % (sizeof kUserColours / sizeof kUserColours[0])];
  return palette(kFreeColours[name_hash(id) % (sizeof kFreeColours / sizeof kFreeColours[0])]);
}

const Implementation* implementation_of(sim::Algorithm a) {
  const auto& t = implementations();
  for (const sim::Algorithm x : {a, sim::forward_of(a)}) {
    const std::string_view key = sim::algorithm_info(x).key;
    const auto it = std::find_if(t.begin(), t.end(), [&](const Implementation& i) { return i.model == key; });
    if (it != t.end()) return &*it;
  }
  return nullptr;
}

Color algorithm_colour(sim::Algorithm a) {
  const Implementation* i = implementation_of(a);
  return i ? palette(i->colour) : implementation_colour(std::string(sim::algorithm_info(a).key));
}

bool is_pytorch(const std::string& id) { return id.rfind("torch", 0) == 0 || id.rfind("sdpa", 0) == 0; }

bool is_user_kernel(const std::string& id) { return id.size() > kUserPrefix.size() && id.rfind(kUserPrefix, 0) == 0; }

}  // namespace flashlab::analysis
