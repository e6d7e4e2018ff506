// Every number the GUI shows goes through these, so that none is printed as
// "nan" or "inf": a non-finite value becomes "—" and is counted (tests assert
// the count stays 0). Units are in the names.
#pragma once

#include <string>

#include "app_state.hpp"

namespace flashlab::gui {

// Where non-finite values are counted; set once by the app.
void set_screen_checks(ScreenChecks* checks);

std::string fmt_bytes(double bytes, const char* where);   // "1.23 GB"  (decimal, as bandwidths are)
std::string fmt_count(i64 v);                              // "1,234,567"
std::string fmt_si(double v, const char* unit, const char* where);  // "312 TFLOP/s"
std::string fmt_fixed(double v, int decimals, const char* where);
std::string fmt_ms(double ms, const char* where);          // "0.123 ms", "12.3 s"
// One quantity over another: "0.12×", "32.0×", and from a thousand on in three
// digits with a prefix ("1.05 M×"), so that a ratio keeps a column's width at any N;
// one above zero that would round to it, "< 0.01×". `decimals`: below 10 (from 10 on: one).
std::string fmt_ratio(double r, const char* where, int decimals = 2);
// Running max m_i may legitimately be −∞ (no key folded in yet).
std::string fmt_stat(double v, const char* where);

// An algorithm's title without its parenthesis: "Standard attention".
std::string short_title(sim::Algorithm a);
// The same inside a sentence: a capitalised first word lowered ("standard
// attention", "eager PyTorch"; "FlashAttention-2" stays as it is).
std::string title_in_sentence(sim::Algorithm a);

}  // namespace flashlab::gui
