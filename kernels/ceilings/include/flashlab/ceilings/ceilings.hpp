// The ceilings of the GPU at hand, measured: HBM, L2 and shared-memory
// bandwidth, CUDA-core and tensor-core peaks, cudaMemcpy and cuBLAS beside
// them, and an ERT-style working-set sweep. Plain C++ (no CUDA types): a build
// without CUDA links the same API and every entry point says in one sentence
// why it cannot measure. docs/roofline.md says how each figure is measured.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::ceilings {

// No device, or no CUDA in this build: the message is the one line to print.
class Unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA, cuBLAS or allocation failure while measuring: "file:line: call failed: ...".
class MeasureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A figure this GPU or this build cannot measure at all (wgmma without a Hopper
// GPU or without sm_90a code in the build): the message is the one-line reason.
// measure_all() records it as a note and measures the rest.
class NotMeasured : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool built_with_cuda();
// Empty when device 0 can be measured, otherwise why not (one line).
std::string unavailable_reason();

struct Options {
  bool quick = false;  // fewer repeats, a coarser sweep, shorter kernels: under 20 s
  int repeats = 0;     // timed runs per figure (median); 0 = 20 (full) or 10 (quick); at least 10
};

// What one measurement step reports as it finishes (for progress lines).
using Progress = std::function<void(const std::string& line)>;

// The device, its buffers, stream, events and cuBLAS handle, held for a series
// of measurements. Construct once; each call measures one figure.
class Session {
 public:
  explicit Session(const Options& o);  // throws Unavailable
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const sim::DeviceFacts& device() const;
  int repeats() const;
  // One figure by its id (sim::figure_specs()); throws std::invalid_argument
  // for an unknown id, NotMeasured when this GPU or build cannot measure it and
  // MeasureError when the device fails.
  sim::CeilingFigure measure(const std::string& id);
  // Why measure(id) would throw NotMeasured (one line); empty when it can measure.
  std::string reason_not_measured(const std::string& id) const;
  // The working-set sweep for "ld.global" (L1 and L2) or "ld.global.cg" (L2 only):
  // 1 KiB to 4 GiB in powers of two (quick: every fourth power), capped by free memory.
  sim::SweepSeries sweep(const std::string& loads);
  // The SM clock NVML reports now (0 without NVML).
  double nvml_sm_clock_mhz();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Everything, in the order of sim::figure_specs(), then both sweeps, as a
// profile (kind "measured"); a figure not measured (NotMeasured, a failed
// cuBLAS) leaves a note instead. Throws Unavailable or MeasureError.
sim::MeasuredProfile measure_all(const Options& o, const Progress& progress = {});

}  // namespace flashlab::ceilings
