// Which passes of training: the one vocabulary of the algorithms' records,
// the front ends' --pass, a problem's parallel part, the ring's timelines
// and the results files, with its one parser and one printer.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace flashlab::sim {

// One pass: the forward O = softmax(τQKᵀ)V, or the backward dQ, dK, dV from
// dO (and what the forward kept).
enum class Pass : std::uint8_t { fwd, bwd };
std::string_view to_string(Pass p);  // "fwd", "bwd"

// What is asked for: one pass, or a training step's forward followed by its
// backward (counted as their sum where a front end shows one figure).
enum class PassSelection : std::uint8_t { fwd, bwd, fwd_bwd };
std::string_view to_string(PassSelection p);  // "fwd", "bwd", "fwd+bwd"
// "fwd", "bwd", "fwd+bwd" and their other names ("forward", "backward",
// "both", "train", ...); nullopt for anything else.
std::optional<PassSelection> parse_pass_selection(std::string_view s);

PassSelection selection_of(Pass p);     // the selection of that one pass
bool includes(PassSelection s, Pass p);  // whether `s` computes pass `p`

}  // namespace flashlab::sim
