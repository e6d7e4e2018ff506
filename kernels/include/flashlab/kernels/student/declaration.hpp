// A student's kernel file: one .cu file holding an extern "C" __global__
// kernel `flashlab_attention(FlashLabArgs args)` and, in a comment block at its
// top, what the kernel claims to be — which loop nest of the simulator it runs
// (naive, fa1, fa2), its B_r × B_c, its threads, shared memory, grid and
// launches, the dtypes and head dims it takes:
//
//   // flashlab kernel
//   //   name:      my_fa2
//   //   algorithm: fa2
//   //   tiles:     64 x 64
//   //   threads:   Br
//   //   smem:      (Br + 2 * Bc) * d * 4
//   //   grid:      T_r, B * H
//   //   dtypes:    fp32, fp16, bf16
//   //   head_dims: 32, 64, 128
//
// Read on the CPU alone (no CUDA, no GPU): every mistake is a DeclarationError
// whose message starts with "FILE:LINE:". kernels/README.md, "Your own kernel",
// lists every key.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::kernels::student {

using sim::i64;

// A mistake in a kernel file's declaration, or a file that cannot be read:
// one line, "my_fa1.cu:7: tiles: expected B_r x B_c (got '64')".
class DeclarationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The names an expression of a declaration may use, with their values. The
// compile-time ones (Br, Bc, d, dtype_bytes) are known for each compiled
// version of the kernel; the problem's (B, H, H_kv, N_q, N_kv, T_r, T_c) only
// when a case runs.
struct Symbols {
  std::vector<std::pair<std::string, i64>> values;
  const i64* find(std::string_view name) const;
};
// The names of the compiled version: Br, Bc, d, dtype_bytes.
const std::vector<std::string>& compile_time_names();
// Those and the problem's: B, H, H_kv, N_q, N_kv, T_r (= ⌈N_q/B_r⌉), T_c (= ⌈N_kv/B_c⌉).
const std::vector<std::string>& run_time_names();
Symbols compile_time_symbols(sim::TileShape tiles, i64 head_dim, sim::DType dtype);
Symbols run_time_symbols(sim::TileShape tiles, const sim::AttentionProblem& p);

// An integer expression: numbers, the names above, + - * / % and parentheses,
// and cdiv(a, b) (⌈a/b⌉), min(a, b), max(a, b).
class Expression {
 public:
  Expression() = default;
  // Throws std::invalid_argument with what is wrong ("unknown name 'N' (did
  // you mean N_q?) ...") when `text` is not an expression over `names`.
  static Expression parse(std::string_view text, const std::vector<std::string>& names);
  // Throws std::domain_error on a division by zero or a value beyond 64 bits.
  i64 evaluate(const Symbols& s) const;
  const std::string& text() const { return text_; }
  bool empty() const { return root_ == nullptr; }

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

// What the kernel claims to be.
struct KernelDeclaration {
  std::string name;                        // "my_fa1": the rung's name in every table and chart
  sim::Algorithm algorithm = sim::Algorithm::fa2;  // standard (declared "naive"), fa1 or fa2
  sim::TileShape tiles;                    // B_r × B_c; 0×0 when not declared (naive only)
  Expression threads;                      // threads per block (compile time)
  Expression smem;                         // dynamic shared memory per block, bytes (compile time; default 0)
  std::array<Expression, 3> grid;          // blocks in x, y, z (run time; y, z default 1)
  Expression launches;                     // launches per run, args.launch = 0 … launches−1 (run time; default 1)
  Expression workspace;                    // bytes of args.workspace (run time; default 0)
  std::vector<sim::DType> dtypes;
  std::vector<int> head_dims;              // empty: any d ≥ 1
  // O kept between launches in another type than the problem's (a fa1
  // kernel accumulating O_i in fp32 in its workspace): the model counts it so.
  std::optional<sim::DType> o_accumulator;
  int line = 0;                            // the line of "// flashlab kernel"

  bool supports(sim::DType t) const;
  bool supports_head_dim(i64 d) const;
};

// A kernel file as read: its source, where it came from and its declaration.
struct KernelFile {
  std::string path;     // as given on the command line
  std::string label;    // its file name, for messages: "my_fa1.cu"
  std::string source;
  KernelDeclaration declaration;
  // The rung's id in results: "user:" and the declared name.
  std::string id() const;
};

// The prefix of every user kernel's id, so that results files, charts and
// reports tell a student's kernel from the ladder's rungs.
inline constexpr std::string_view kUserIdPrefix = "user:";

// The declaration of `source` (the file's text); `label` starts each message.
// Throws DeclarationError.
KernelDeclaration parse_declaration(std::string_view source, const std::string& label);
// Reads and parses a kernel file. The default name is the file's stem.
// Throws DeclarationError (also for a file that cannot be read).
KernelFile load_kernel_file(const std::string& path);

// The most shared memory one block of any NVIDIA GPU may ask for
// (cudaDevAttrMaxSharedMemoryPerBlockOptin of the H100 and H200, 227 KiB):
// a declaration asking for more is impossible everywhere.
inline constexpr i64 kLargestSmemPerBlock = 232'448;

// One compiled version's constants: threads and dynamic shared memory of a
// block. Throws std::domain_error naming the key when an expression fails.
struct BlockShape {
  i64 threads = 0;
  i64 smem_bytes = 0;
};
BlockShape block_shape(const KernelDeclaration& k, i64 head_dim, sim::DType dtype);

// One case's launch as the declaration computes it. Throws std::domain_error
// naming the key when an expression fails.
struct LaunchShape {
  BlockShape block;
  std::array<i64, 3> grid{1, 1, 1};
  i64 launches = 1;
  i64 workspace_bytes = 0;
};
LaunchShape launch_shape(const KernelDeclaration& k, const sim::AttentionProblem& p);

// The tiles the runner reports for the row and the simulator models: the
// declared ones, 0×0 for a kernel that materialises S and P (its model does
// not depend on tiles).
sim::TileShape model_tiles(const KernelDeclaration& k);

// The keys of a declaration, in the order the docs list them.
const std::vector<std::string>& declaration_keys();

}  // namespace flashlab::kernels::student
