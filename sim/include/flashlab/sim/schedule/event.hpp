// One step of a schedule: a tile moving between levels, a computation on
// resident tiles, or tiles leaving SRAM.
#pragma once

#include <array>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// A tile of a tensor. ti/tj are its block coordinates: Q_i = (i, -1),
// K_j = (-1, j), S_ij = (i, j); (-1, -1) is a whole tensor.
struct TileRef {
  Tensor tensor = Tensor::Q;
  i64 ti = -1, tj = -1;
  i64 rows = 0, cols = 0;  // extent in elements
  i64 bytes = 0;           // rows·cols·element size
  i64 elements() const { return rows * cols; }
  bool same_tile(const TileRef& o) const { return tensor == o.tensor && ti == o.ti && tj == o.tj; }
};

struct TileEvent {
  EventKind kind = EventKind::compute;
  int line = 0;         // pseudocode line of the algorithm (1-based)
  i64 i = -1, j = -1;   // loop indices of the iteration this event belongs to
  bool masked = false;  // inside a partially masked block
  // load: target moves from -> SRAM. store: SRAM -> to (from = none for an
  // initialisation written straight to HBM). compute: operands are read from
  // SRAM, target is written to SRAM (replacing `replaces` when set). free:
  // operands leave SRAM.
  Level from = Level::none, to = Level::none;
  TileRef target;
  std::array<TileRef, 10> operands{};
  int operand_count = 0;
  bool has_replaces = false;
  TileRef replaces;
  i64 matmul_flops = 0;
  i64 softmax_flops = 0;  // elementwise and reduction work of softmax and rescaling
  i64 exps = 0;           // exponentials and logarithms
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const TileEvent& e) = 0;
};

}  // namespace flashlab::sim
