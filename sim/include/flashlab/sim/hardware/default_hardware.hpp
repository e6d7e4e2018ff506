// The GPU every front end starts on: the lecture's A100 (80 GB PCIe, 1,935 GB/s,
// 312 TFLOP/s fp16 on tensor cores, ridge 161 FLOP/B). The CLI's --hw default,
// the window's first preset and the lecture scenarios name the same one.
#pragma once

namespace flashlab::sim {

inline constexpr const char* kDefaultHardware = "A100-PCIe-80GB";
// The ring's: the GPU of the machines it was measured on.
inline constexpr const char* kDefaultRingHardware = "H200-SXM-141GB";

}  // namespace flashlab::sim
