// What the controls edit: the one-GPU view's inputs and, as their member
// `ring`, the Across GPUs view's own. Every one of them is a row of the one
// settings table (presenter/scenario_settings.hpp), which scenario files,
// `flashlab gui --list-settings` and the random walk go through.
#pragma once

#include <string>

#include "flashlab/sim/hardware/default_hardware.hpp"
#include "flashlab/sim.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::gui {

enum class Lockstep { progress, block };

// Typed values are kept as text so that a half-typed or invalid value can be
// shown next to the reason it is refused, never silently replaced.
struct Inputs {
  sim::Algorithm algo_a = sim::Algorithm::fa1;
  sim::Algorithm algo_b = sim::Algorithm::fa2;
  bool compare = true;  // two algorithms side by side in lockstep
  std::string seq = "1024", batch = "1", heads = "1", head_dim = "64";
  std::string kv_heads;  // H_kv; empty: as many as H (grouped-query attention when fewer)
  bool causal = false;
  sim::DType dtype = sim::DType::fp16;
  bool sram_override = false;
  std::string sram = "96KiB";
  bool manual_tiles = false;
  std::string br = "64", bc = "64";
  // The Hopper rung's tiles and, for FlashAttention-2's loop nest (the one the
  // rung follows), its schedule inside a CTA: TMA ring, warpgroups, units.
  bool hopper = false;
  // The GPU of both views (the ring's GPUs are this one).
  std::string hw_preset = sim::kDefaultHardware;
  bool use_hw_file = false;
  std::string hw_file;
  Lockstep lockstep = Lockstep::progress;

  // The ring's own: sequence-parallel ring attention over P GPUs. Its problem
  // is its own too — a model's heads over a long sequence, bf16 and causal by
  // default — beside the one-GPU view's single head. `model` is an
  // attention_models() id, or "custom" for the typed heads, key/value heads
  // and head dim.
  struct Ring {
    std::string model = "llama2-7b";
    std::string heads = "32", kv_heads = "8", head_dim = "128";  // custom only
    std::string batch = "1", seq = "32K", gpus = "8", gpus_per_node = "8";
    sim::RingLayout layout = sim::RingLayout::zigzag;
    bool causal = true;
    sim::PassSelection passes = sim::PassSelection::fwd;  // the forward, or forward + backward (a training step)
    sim::DType dtype = sim::DType::bf16;
    std::string intra = "nvlink4", inter = "ib-ndr";  // interconnect preset ids (or a JSON file)
    std::string efficiency = "1";                      // fraction of the block's bound the rung reaches (flashlab ring: 1)
    bool compare_layouts = false;  // the other layout's timeline under this one, on the same axis
    bool calibrate = true;         // a measured run's prediction: efficiency from the file's P = 1 run
    int run_choice = -1;           // the measured run the user picked (index in the file); -1: the first that matches
    // A run is its problem and its steps: "fused" or "pairwise" (how its steps
    // launched their kernels); empty: fused when the file has both.
    std::string steps;

    bool operator==(const Ring& o) const;
    bool operator!=(const Ring& o) const { return !(*this == o); }
  };
  Ring ring;

  // The fields the one-GPU model is computed from: all but the ring's, whose
  // model (ring_model.hpp) follows them on its own.
  bool same_one_gpu(const Inputs& o) const;
  // "Reset view": the one-GPU view's defaults, the ring's inputs kept.
  void reset_one_gpu() {
    const Ring kept = ring;
    *this = Inputs{};
    ring = kept;
  }

  bool operator==(const Inputs& o) const { return same_one_gpu(o) && ring == o.ring; }
  bool operator!=(const Inputs& o) const { return !(*this == o); }
};

}  // namespace flashlab::gui
