#include "flashlab/sim/schedule/trace.hpp"

namespace flashlab::sim {

TraceCsvWriter::TraceCsvWriter(std::ostream& out, i64 sram_capacity_bytes)
    : out_(out), sram_(sram_capacity_bytes) {
  out_ << "step,kind,line,i,j,masked,tile,tensor,rows,cols,bytes,from,to,operands,matmul_flops,"
          "softmax_flops,exps,sram_bytes\n";
}

void TraceCsvWriter::on_event(const TileEvent& e) {
  sram_.on_event(e);
  std::string ops;
  for (int k = 0; k < e.operand_count; ++k) {
    if (k > 0) ops += ' ';
    ops += tile_label(e.operands[static_cast<size_t>(k)]);
  }
  const bool has_target = e.kind != EventKind::free;
  out_ << step_++ << ',' << to_string(e.kind) << ',' << e.line << ',' << e.i << ',' << e.j << ','
       << (e.masked ? 1 : 0) << ',' << (has_target ? tile_label(e.target) : "") << ','
       << (has_target ? to_string(e.target.tensor) : "") << ',' << (has_target ? e.target.rows : 0) << ','
       << (has_target ? e.target.cols : 0) << ',' << (has_target ? e.target.bytes : 0) << ','
       << to_string(e.from) << ',' << to_string(e.to) << ",\"" << ops << "\"," << e.matmul_flops << ','
       << e.softmax_flops << ',' << e.exps << ',' << sram_.bytes() << '\n';
}

}  // namespace flashlab::sim
