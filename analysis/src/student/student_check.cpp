#include "flashlab/analysis/student/student_check.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/analysis/model/roofline_ceilings.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/input/problem_text.hpp"

namespace flashlab::analysis {

namespace {

// ---- the columns ---------------------------------------------------------------

enum class Quantity { batch, seq, heads, head_dim, emb_dim, causal, dtype, pass, impl, time, tflops, memory };
constexpr int kQuantityCount = 12;

// How a column of each quantity may be named. The shape's columns match one
// of `names` exactly (lower case, words joined by '_': "Batch Size" is
// batch_size); the measured ones hold one of `words` and name their unit.
struct QuantityInfo {
  Quantity quantity;
  const char* what;   // in messages: "batch", "time"
  const char* flag;   // the command's flag giving it for every row; "" when none
  std::vector<std::string> names;
  std::vector<std::string> words;
  const char* help;   // what student_column_names() adds after the names
};

const std::vector<QuantityInfo>& quantities() {
  static const std::vector<QuantityInfo> table = {
      {Quantity::batch, "batch", "--batch", {"batch", "batch_size", "batchsize", "bs", "b"}, {}, ""},
      {Quantity::seq, "sequence length", "--seq",
       {"seq", "seq_len", "seqlen", "seq_length", "sequence_length", "sequence_len", "n"}, {}, ""},
      {Quantity::heads, "heads", "--heads", {"heads", "num_heads", "n_heads", "nheads", "num_head", "h"}, {}, ""},
      {Quantity::head_dim, "head dim", "--head-dim", {"head_dim", "headdim", "d", "d_head", "dim_head", "head_size"}, {}, ""},
      {Quantity::emb_dim, "embedding dim", "--emb-dim",
       {"emb_dim", "embedding_dim", "embed_dim", "emb", "d_model", "hidden_size", "hidden_dim"}, {},
       " (then d = emb_dim / heads)"},
      {Quantity::causal, "causal", "--causal", {"causal", "is_causal"}, {}, " (true/false, 1/0, yes/no)"},
      {Quantity::dtype, "dtype", "--dtype", {"dtype", "precision"}, {}, " (fp16, bf16, fp32; default fp16)"},
      {Quantity::pass, "pass", "--pass", {"pass", "direction"}, {},
       " (forward/backward, fwd/bwd; default: the time column's word, else forward)"},
      {Quantity::impl, "implementation", "", {"impl", "implementation", "kernel", "method"}, {}, ""},
      {Quantity::time, "time", "", {}, {"time", "latency", "duration", "runtime", "elapsed"},
       ", or forward/backward ('Forward Pass (s)'), and its unit: (s), ms or us — 'Forward Time (s)', time_ms — "
       "in the name or in every cell (18.77s, 132.62ms); a forward and a backward column are both read; a time "
       "of something else (communication, data loading, optimizer, a whole step) is not"},
      {Quantity::tflops, "TFLOP/s", "", {}, {"flop"},
       " (optional): tflops, 'TFLOP/s', GFLOP/s; the labs' 'Total Flops (FLOPs/s)' is read as TFLOP/s"},
      {Quantity::memory, "peak memory", "", {}, {"memory", "mem"},
       " (optional), and its unit: MB or MiB (2^20 bytes), GB or GiB (2^30), KB, bytes"},
  };
  return table;
}

const QuantityInfo& info(Quantity q) {
  const auto& t = quantities();
  return *std::find_if(t.begin(), t.end(), [&](const QuantityInfo& i) { return i.quantity == q; });
}

// Lower case, µ as u, split at anything that is not a letter or a digit.
std::vector<std::string> name_words(const std::string& name) {
  std::string s;
  for (size_t k = 0; k < name.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(name[k]);
    if ((c == 0xC2 && k + 1 < name.size() && static_cast<unsigned char>(name[k + 1]) == 0xB5) ||
        (c == 0xCE && k + 1 < name.size() && static_cast<unsigned char>(name[k + 1]) == 0xBC)) {
      s += 'u';  // µ (micro sign) and μ (Greek mu)
      ++k;
    } else {
      s += static_cast<char>(std::isalnum(c) ? std::tolower(c) : ' ');
    }
  }
  std::vector<std::string> words;
  for (size_t k = 0; k < s.size();) {
    const size_t e = s.find(' ', k);
    const std::string w = s.substr(k, e == std::string::npos ? std::string::npos : e - k);
    if (!w.empty()) words.push_back(w);
    if (e == std::string::npos) break;
    k = e + 1;
  }
  return words;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : "_") + w;
  return s;
}

bool has_word(const std::vector<std::string>& words, const std::vector<std::string>& any) {
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& w) { return std::find(any.begin(), any.end(), w) != any.end(); });
}

bool has_flop_word(const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(), [](const std::string& w) { return w.find("flop") != std::string::npos; });
}

const std::vector<std::string>& pass_words() {
  static const std::vector<std::string> w = {"forward", "fwd", "backward", "bwd"};
  return w;
}

// Words naming a time that is not an attention pass's: a distributed run's
// communication, the input pipeline, the optimizer, a whole step or epoch.
const std::vector<std::string>& other_time_words() {
  static const std::vector<std::string> w = {
      "communication", "comm", "comms", "allreduce", "allgather", "nccl", "transfer", "memcpy", "copy", "h2d",
      "d2h", "dataloader", "data", "loading", "optimizer", "optim", "cpu", "sync", "wait", "idle", "compile",
      "compilation", "setup", "overhead", "step", "epoch", "iteration", "iter", "total", "training", "inference"};
  return w;
}

std::optional<Quantity> quantity_of(const std::vector<std::string>& words) {
  const std::string key = joined(words);
  for (const QuantityInfo& q : quantities())
    if (std::find(q.names.begin(), q.names.end(), key) != q.names.end()) return q.quantity;
  if (has_flop_word(words)) return Quantity::tflops;
  if (has_word(words, info(Quantity::time).words) || key == "ms" || key == "us") return Quantity::time;
  if (has_word(words, info(Quantity::memory).words)) return Quantity::memory;
  if (has_word(words, pass_words())) return Quantity::time;  // "Forward Pass (s)"
  return std::nullopt;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A unit found among a name's words: the factor to the base unit and how it reads.
struct Unit {
  double factor = 1;
  std::string reads_as;
};

std::optional<Unit> unit_among(const std::vector<std::string>& words,
                               const std::vector<std::pair<std::vector<std::string>, Unit>>& units,
                               const std::string& column) {
  std::optional<Unit> found;
  for (const std::string& w : words)
    for (const auto& [spellings, unit] : units)
      if (std::find(spellings.begin(), spellings.end(), w) != spellings.end()) {
        if (found && found->factor != unit.factor)
          throw StudentTableError("column " + quoted(column) + ": two units in its name");
        found = unit;
      }
  return found;
}

const std::vector<std::pair<std::vector<std::string>, Unit>>& time_units() {
  static const std::vector<std::pair<std::vector<std::string>, Unit>> units = {
      {{"s", "sec", "secs", "second", "seconds"}, {1, "seconds"}},
      {{"ms", "msec", "millisecond", "milliseconds"}, {1e-3, "milliseconds"}},
      {{"us", "usec", "microsecond", "microseconds"}, {1e-6, "microseconds"}}};
  return units;
}

// The unit a time column's name gives; none: its cells carry their own.
std::optional<Unit> time_unit(const std::vector<std::string>& words, const std::string& column) {
  return unit_among(words, time_units(), column);
}

// The short spelling of a time unit, as a cell writes it.
std::string unit_symbol(const Unit& u) { return u.factor == 1 ? "s" : u.factor == 1e-3 ? "ms" : "us"; }

Unit memory_unit(const std::vector<std::string>& words, const std::string& column) {
  // torch.cuda.max_memory_allocated() / 2**20 is what the labs print as "MB".
  static const std::vector<std::pair<std::vector<std::string>, Unit>> units = {
      {{"mb", "megabytes"}, {1048576.0, "MiB (2^20 bytes): torch.cuda.max_memory_allocated() / 2**20, as the labs print it"}},
      {{"mib"}, {1048576.0, "MiB (2^20 bytes)"}},
      {{"gb", "gigabytes"}, {1073741824.0, "GiB (2^30 bytes): torch's bytes / 2**30"}},
      {{"gib"}, {1073741824.0, "GiB (2^30 bytes)"}},
      {{"kb", "kib"}, {1024.0, "KiB (2^10 bytes)"}},
      {{"b", "bytes", "byte"}, {1, "bytes"}}};
  if (const auto u = unit_among(words, units, column)) return *u;
  throw StudentTableError("column " + quoted(column) + ": no unit in its name (MB, MiB, GB, GiB or bytes)");
}

Unit tflops_unit(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (w.rfind("tflop", 0) == 0) return {1, "TFLOP/s"};
    if (w.rfind("gflop", 0) == 0) return {1e-3, "GFLOP/s"};
    if (w.rfind("pflop", 0) == 0) return {1e3, "PFLOP/s"};
  }
  return {1, "TFLOP/s: the labs' column of that name holds TFLOP/s, not FLOP/s"};
}

std::optional<sim::Pass> pass_named_by(const std::vector<std::string>& words) {
  if (has_word(words, {"forward", "fwd"})) return sim::Pass::fwd;
  if (has_word(words, {"backward", "bwd"})) return sim::Pass::bwd;
  return std::nullopt;
}

// A column of times: where it is, the unit its name gives (none: each cell
// carries its own, "18.77s") and the pass its name names ("Forward Time (s)").
struct TimeColumn {
  int at = -1;
  std::string name;
  std::optional<Unit> unit;
  std::optional<sim::Pass> pass;
};

// Which column holds each quantity (-1: none), and the units of the measured
// ones. The times may be two columns, a forward's and a backward's; at[time]
// is the first.
struct Columns {
  std::vector<std::string> header;
  std::array<int, kQuantityCount> at{};
  std::vector<TimeColumn> times;
  std::vector<std::string> other_times;  // quoted: times of something other than a pass
  Unit tflops, memory;
  std::vector<std::string> notes;

  int of(Quantity q) const { return at[static_cast<size_t>(q)]; }
  const std::string& name(Quantity q) const { return header[static_cast<size_t>(of(q))]; }
  bool both_passes() const { return times.size() > 1; }
};

Columns match_columns(const std::vector<std::string>& header) {
  Columns c;
  c.header = header;
  c.at.fill(-1);
  std::vector<std::string> unread;
  for (size_t k = 0; k < header.size(); ++k) {
    const std::vector<std::string> words = name_words(header[k]);
    const auto q = quantity_of(words);
    if (!q) {
      unread.push_back(quoted(header[k]));
      continue;
    }
    if (*q == Quantity::time && has_word(words, other_time_words())) {
      c.other_times.push_back(quoted(header[k]));
      continue;
    }
    int& slot = c.at[static_cast<size_t>(*q)];
    if (*q == Quantity::time) {
      const TimeColumn t{static_cast<int>(k), header[k], time_unit(words, header[k]), pass_named_by(words)};
      for (const TimeColumn& o : c.times)
        if (!t.pass || !o.pass || *t.pass == *o.pass)
          throw StudentTableError("columns " + quoted(o.name) + " and " + quoted(t.name) +
                                  " both give the time (keep one, or name each pass: 'Forward Time (s)', "
                                  "'Backward Time (s)')");
      c.times.push_back(t);
      if (slot < 0) slot = static_cast<int>(k);
      c.notes.push_back(quoted(header[k]) + (t.unit ? " read in " + t.unit->reads_as
                                                    : std::string(" read by the unit in each cell (s, ms or us)")));
      continue;
    }
    if (slot >= 0)
      throw StudentTableError("columns " + quoted(header[static_cast<size_t>(slot)]) + " and " + quoted(header[k]) +
                              " both give the " + info(*q).what + " (keep one)");
    slot = static_cast<int>(k);
    if (*q == Quantity::tflops) {
      c.tflops = tflops_unit(words);
      c.notes.push_back(quoted(header[k]) + " read as " + c.tflops.reads_as);
    } else if (*q == Quantity::memory) {
      c.memory = memory_unit(words, header[k]);
      c.notes.push_back(quoted(header[k]) + " read as " + c.memory.reads_as);
    }
  }
  // One TFLOP/s or memory column beside a forward and a backward time belongs to neither.
  if (c.both_passes())
    for (Quantity q : {Quantity::tflops, Quantity::memory})
      if (c.of(q) >= 0) {
        c.notes.erase(std::remove_if(c.notes.begin(), c.notes.end(),
                                     [&](const std::string& n) { return n.rfind(quoted(c.name(q)) + " read", 0) == 0; }),
                      c.notes.end());
        c.notes.push_back("not read: " + quoted(c.name(q)) + " (the file times both passes: its " + info(q).what +
                          " is not one pass's; check one pass per file to check it)");
        c.at[static_cast<size_t>(q)] = -1;
      }
  if (!c.other_times.empty()) {
    std::string list;
    for (const std::string& u : c.other_times) list += (list.empty() ? "" : ", ") + u;
    c.notes.push_back("not read: " + list + " (a time of something other than an attention pass)");
  }
  if (!unread.empty()) {
    std::string list;
    for (const std::string& u : unread) list += (list.empty() ? "" : ", ") + u;
    c.notes.push_back("not read: " + list);
  }
  return c;
}

const std::optional<std::string>& default_of(const StudentDefaults& d, Quantity q) {
  static const std::optional<std::string> none;
  switch (q) {
    case Quantity::batch: return d.batch;
    case Quantity::seq: return d.seq;
    case Quantity::heads: return d.heads;
    case Quantity::head_dim: return d.head_dim;
    case Quantity::emb_dim: return d.emb_dim;
    case Quantity::causal: return d.causal;
    case Quantity::dtype: return d.dtype;
    case Quantity::pass: return d.pass;
    default: return none;
  }
}

std::string accepted_names(Quantity q) {
  std::string s;
  for (const std::string& n : info(q).names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::optional<sim::Pass> parse_pass(const std::string& s);

// A column and a flag for the same quantity, or neither where one is needed.
void check_sources(const Columns& c, const StudentDefaults& d) {
  for (const QuantityInfo& q : quantities())
    if (c.of(q.quantity) >= 0 && default_of(d, q.quantity))
      throw StudentTableError(std::string(q.flag) + ": the file gives the " + q.what + " in column " +
                              quoted(c.name(q.quantity)) + "; give one or the other");
  for (Quantity q : {Quantity::batch, Quantity::seq, Quantity::heads})
    if (c.of(q) < 0 && !default_of(d, q))
      throw StudentTableError(std::string("no ") + info(q).what + ": a column (" + accepted_names(q) + ") or " +
                              info(q).flag);
  const bool d_given = c.of(Quantity::head_dim) >= 0 || d.head_dim;
  const bool emb_given = c.of(Quantity::emb_dim) >= 0 || d.emb_dim;
  if (!d_given && !emb_given)
    throw StudentTableError("no head dim: a column (" + accepted_names(Quantity::head_dim) + "), an embedding dim (" +
                            accepted_names(Quantity::emb_dim) + "), --head-dim or --emb-dim");
  if (c.times.empty() && !c.other_times.empty())
    throw StudentTableError("no time of an attention pass: " + c.other_times.front() +
                            " times something else; name the pass's time like 'Forward Time (s)' or time_ms");
  if (c.times.empty())
    throw StudentTableError("no time column: name one with its unit, like 'Forward Time (s)' or time_ms");
  if (c.both_passes() && (d.pass || c.of(Quantity::pass) >= 0))
    throw StudentTableError((d.pass ? std::string("--pass") : "column " + quoted(c.name(Quantity::pass))) +
                            ": the file times both passes, in " + quoted(c.times[0].name) + " and " +
                            quoted(c.times[1].name));
  const std::optional<sim::Pass>& named = c.times.front().pass;
  if (d.pass && named && parse_pass(*d.pass) && *parse_pass(*d.pass) != *named)
    throw StudentTableError("--pass: the time column " + quoted(c.times.front().name) + " names the " +
                            (*named == sim::Pass::fwd ? "forward" : "backward") + " pass");
}

// ---- the rows -------------------------------------------------------------------

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::vector<std::string>> split_table(const std::string& text) {
  const std::string first_line = text.substr(0, text.find('\n'));
  if (first_line.find('\t') == std::string::npos) return csv_parse(text);
  std::vector<std::vector<std::string>> rows;
  size_t k = 0;
  while (k <= text.size()) {
    const size_t e = text.find('\n', k);
    const std::string line = text.substr(k, e == std::string::npos ? std::string::npos : e - k);
    std::vector<std::string> row;
    size_t f = 0;
    while (true) {
      const size_t t = line.find('\t', f);
      row.push_back(line.substr(f, t == std::string::npos ? std::string::npos : t - f));
      if (t == std::string::npos) break;
      f = t + 1;
    }
    rows.push_back(std::move(row));
    if (e == std::string::npos) break;
    k = e + 1;
  }
  return rows;
}

bool blank(const std::vector<std::string>& row) {
  return std::all_of(row.begin(), row.end(), [](const std::string& f) { return trimmed(f).empty(); });
}

bool comment(const std::vector<std::string>& row) { return !row.empty() && trimmed(row.front()).rfind('#', 0) == 0; }

// "16.0" (a spreadsheet's or pandas' float column) is the whole number 16.
std::string whole_text(const std::string& s) {
  const size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0) return s;
  const bool digits = std::all_of(s.begin(), s.begin() + static_cast<long>(dot), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  const bool zeros = std::all_of(s.begin() + static_cast<long>(dot) + 1, s.end(), [](char c) { return c == '0'; });
  return digits && zeros ? s.substr(0, dot) : s;
}

std::optional<bool> parse_causal(const std::string& s) {
  const std::string l = sim::lower(s);
  if (l == "true" || l == "1" || l == "yes") return true;
  if (l == "false" || l == "0" || l == "no") return false;
  return std::nullopt;
}

std::optional<sim::Pass> parse_pass(const std::string& s) {
  const std::string l = sim::lower(s);
  if (l == "forward" || l == "fwd") return sim::Pass::fwd;
  if (l == "backward" || l == "bwd") return sim::Pass::bwd;
  return std::nullopt;
}

bool says_oom(const std::string& s) {
  const std::string l = sim::lower(s);
  return l == "oom" || l.find("out of memory") != std::string::npos;
}

// A cell with no time: a run that failed or was skipped.
bool no_time(const std::string& s) {
  const std::string l = sim::lower(s);
  return l.empty() || l == "-" || l == "n/a" || l == "na" || l == "nan";
}

bool not_reported(const std::string& s) {
  const std::string l = sim::lower(s);
  return l.empty() || l == "-" || l == "n/a" || l == "na" || l == "nan" || says_oom(l);
}

std::optional<double> parse_real(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// One data row: each quantity's text and the name messages give it.
class RowReader {
 public:
  RowReader(const Columns& c, const StudentDefaults& d, const std::vector<std::string>& cells, int line)
      : c_(c), d_(d), cells_(cells), line_(line) {}

  bool given(Quantity q) const { return c_.of(q) >= 0 || default_of(d_, q).has_value(); }
  std::string text(Quantity q) const {
    return c_.of(q) >= 0 ? trimmed(cells_[static_cast<size_t>(c_.of(q))]) : *default_of(d_, q);
  }
  // "line 4, column 'batch_size'" or "--batch".
  std::string name(Quantity q) const {
    return c_.of(q) >= 0 ? where() + ", column " + quoted(c_.name(q)) : std::string(info(q).flag);
  }
  std::string where() const { return "line " + std::to_string(line_); }
  [[noreturn]] void fail(const std::string& message) const {
    throw StudentTableError(message.rfind("line ", 0) == 0 || message.rfind("--", 0) == 0 ? message
                                                                                          : where() + ": " + message);
  }

  // The row's implementation, shape and pass: all an OOM row has.
  StudentRow read_shape() const {
    StudentRow r;
    r.line = line_;
    if (given(Quantity::impl)) r.impl = text(Quantity::impl);
    r.problem = problem();
    r.pass = pass();
    return r;
  }

  // The row's shape, with the pass of time column `t`.
  StudentRow read_shape(const TimeColumn& t) const {
    StudentRow r = read_shape();
    if (t.pass) r.pass = *t.pass;
    return r;
  }

  // The time of column `t`, in seconds, and the unit its cell wrote (none:
  // the column's name gave it).
  std::pair<double, std::optional<Unit>> time(const TimeColumn& t) const {
    const std::string s = trimmed(cells_[static_cast<size_t>(t.at)]);
    const std::string where = this->where() + ", column " + quoted(t.name);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    const bool number = !s.empty() && end != s.c_str() && std::isfinite(v);
    const std::string rest = number ? trimmed(std::string(end)) : s;
    std::optional<Unit> cell;
    if (number && !rest.empty()) {
      const std::vector<std::string> words = name_words(rest);
      if (words.size() == 1) cell = unit_among(words, time_units(), t.name);
    }
    if (!number || (!rest.empty() && !cell) || v <= 0)
      fail(where + ": " + quoted(s) + " is not a positive time (a number" +
           (t.unit ? "" : " and its unit, as 18.77s or 132.62ms") + "; OOM, or empty for a run without one)");
    if (!cell && !t.unit)
      fail(where + ": " + quoted(s) + " has no unit, and the column's name gives none: write it in the cell (" + s +
           "ms) or in the name ('" + t.name + " (ms)')");
    return {v * (cell ? *cell : *t.unit).factor, cell};
  }

  StudentRow read(const TimeColumn& t, double time_s) const {
    StudentRow r = read_shape(t);
    r.time_s = time_s;
    r.reported_tflops = measured(Quantity::tflops, c_.tflops.factor);
    r.memory_bytes = measured(Quantity::memory, c_.memory.factor);
    return r;
  }

 private:
  sim::AttentionProblem problem() const {
    sim::ProblemText t;
    sim::ProblemFieldNames names;
    names.batch = name(Quantity::batch);
    names.heads = name(Quantity::heads);
    names.seq = name(Quantity::seq);
    names.dtype = name(Quantity::dtype);
    t.batch = whole_text(text(Quantity::batch));
    t.heads = whole_text(text(Quantity::heads));
    t.seq = whole_text(text(Quantity::seq));
    t.dtype = given(Quantity::dtype) ? text(Quantity::dtype) : std::string("fp16");
    t.causal = causal();
    if (given(Quantity::head_dim)) {
      names.head_dim = name(Quantity::head_dim);
      t.head_dim = whole_text(text(Quantity::head_dim));
      if (given(Quantity::emb_dim)) check_emb_dim(t.head_dim);
    } else {
      names.head_dim = where() + ", head dim d = " + info(Quantity::emb_dim).what + " / heads";
      t.head_dim = std::to_string(head_dim_of_emb());
    }
    const sim::ParsedProblem parsed = sim::parse_problem(t, names);
    if (!parsed.ok()) fail(parsed.first());
    return parsed.problem;
  }

  // d = emb_dim / H, refused when H does not divide it.
  sim::i64 head_dim_of_emb() const {
    std::vector<std::string> errors;
    const auto emb = sim::parse_positive(name(Quantity::emb_dim), whole_text(text(Quantity::emb_dim)), errors);
    const auto H = sim::parse_positive(name(Quantity::heads), whole_text(text(Quantity::heads)), errors);
    if (!errors.empty()) fail(errors.front());
    if (*emb % *H != 0 && c_.of(Quantity::emb_dim) < 0 && c_.of(Quantity::heads) < 0)
      fail("--emb-dim " + std::to_string(*emb) + " is not a multiple of --heads " + std::to_string(*H) +
           " (d = emb_dim / heads)");
    if (*emb % *H != 0)
      fail(where() + ": embedding dim " + std::to_string(*emb) + " is not a multiple of the " + std::to_string(*H) +
           " heads (d = emb_dim / heads)");
    return *emb / *H;
  }

  void check_emb_dim(const std::string& head_dim) const {
    std::vector<std::string> errors;
    const auto d = sim::parse_positive(name(Quantity::head_dim), head_dim, errors);
    const auto emb = sim::parse_positive(name(Quantity::emb_dim), whole_text(text(Quantity::emb_dim)), errors);
    const auto H = sim::parse_positive(name(Quantity::heads), whole_text(text(Quantity::heads)), errors);
    if (!errors.empty()) fail(errors.front());
    if (*emb != *H * *d)
      fail(where() + ": embedding dim " + std::to_string(*emb) + " is not heads × head dim = " + std::to_string(*H) +
           " × " + std::to_string(*d));
  }

  bool causal() const {
    if (!given(Quantity::causal)) return false;
    const std::string s = text(Quantity::causal);
    const auto v = parse_causal(s);
    if (!v) fail(name(Quantity::causal) + ": " + quoted(s) + " is not true or false (true, false, 1, 0, yes, no)");
    return *v;
  }

  sim::Pass pass() const {
    if (!given(Quantity::pass)) return c_.times.front().pass.value_or(sim::Pass::fwd);
    const std::string s = text(Quantity::pass);
    const auto v = parse_pass(s);
    if (!v) fail(name(Quantity::pass) + ": " + quoted(s) + " is not a pass (forward, backward, fwd, bwd)");
    return *v;
  }

  // An optional measured cell: empty, "-", "n/a" or OOM is none.
  std::optional<double> measured(Quantity q, double factor) const {
    if (c_.of(q) < 0) return std::nullopt;
    const std::string s = text(q);
    if (not_reported(s)) return std::nullopt;
    const auto v = parse_real(s);
    if (!v || *v < 0) fail(name(q) + ": " + quoted(s) + " is not a number (leave it empty when not measured)");
    return *v * factor;
  }

  const Columns& c_;
  const StudentDefaults& d_;
  const std::vector<std::string>& cells_;
  int line_;
};

}  // namespace

std::vector<std::string> student_column_names() {
  std::vector<std::string> out;
  for (const QuantityInfo& q : quantities()) {
    std::string list;
    for (const std::string& n : q.names) list += (list.empty() ? "" : ", ") + n;
    for (size_t k = 0; k < q.words.size(); ++k)
      list += (k == 0 ? "a name holding " : k + 1 == q.words.size() ? " or " : ", ") + q.words[k];
    std::string line = std::string(q.what) + ": " + list + q.help;
    if (*q.flag) line += std::string(" — or ") + q.flag + " for every row";
    out.push_back(line);
  }
  return out;
}

StudentTable read_student_table(const std::string& text, const StudentDefaults& defaults) {
  const std::vector<std::vector<std::string>> rows = split_table(text);
  size_t k = 0;
  while (k < rows.size() && (blank(rows[k]) || comment(rows[k]))) ++k;
  if (k == rows.size()) throw StudentTableError("no header: the file is empty");
  std::vector<std::string> header;
  for (const std::string& h : rows[k]) header.push_back(trimmed(h));
  if (header.size() == 1 && header.front().find(';') != std::string::npos)
    throw StudentTableError("line " + std::to_string(k + 1) +
                            ": the columns are separated by ';' (a spreadsheet's CSV in a comma-decimal locale): "
                            "save it with ',' between columns and '.' in numbers, or as tab-separated text");
  const Columns columns = match_columns(header);
  check_sources(columns, defaults);
  StudentTable out;
  out.notes = columns.notes;
  // Per time column, the lines whose cell wrote each unit: a column mixing
  // them ("18.77s" above "132.62ms") is said so, each cell read by its own.
  std::vector<std::vector<std::pair<std::string, std::vector<int>>>> cell_units(columns.times.size());
  for (++k; k < rows.size(); ++k) {
    const int line = static_cast<int>(k) + 1;
    if (blank(rows[k]) || comment(rows[k])) continue;
    if (rows[k].size() != header.size())
      throw StudentTableError("line " + std::to_string(line) + ": " + std::to_string(rows[k].size()) +
                              " fields, the header has " + std::to_string(header.size()));
    const RowReader reader(columns, defaults, rows[k], line);
    for (size_t t = 0; t < columns.times.size(); ++t) {
      const TimeColumn& tc = columns.times[t];
      const std::string cell = trimmed(rows[k][static_cast<size_t>(tc.at)]);
      const std::string where =
          "line " + std::to_string(line) + (columns.both_passes() ? ", " + quoted(tc.name) : std::string());
      if (says_oom(cell)) {
        ++out.left_out;
        out.notes.push_back(where + ": OOM, not checked");
        out.oom_rows.push_back(reader.read_shape(tc));
      } else if (no_time(cell)) {
        ++out.untimed;
        out.notes.push_back(where + ": no time (" + (cell.empty() ? "empty" : quoted(cell)) + "), not checked");
        out.untimed_rows.push_back(reader.read_shape(tc));
      } else {
        const auto [time_s, unit] = reader.time(tc);
        const std::string symbol = unit_symbol(unit ? *unit : *tc.unit);
        auto& seen = cell_units[t];
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& u) { return u.first == symbol; });
        if (it == seen.end()) it = seen.insert(seen.end(), {symbol, {}});
        it->second.push_back(line);
        out.rows.push_back(reader.read(tc, time_s));
      }
    }
  }
  for (size_t t = 0; t < columns.times.size(); ++t) {
    const TimeColumn& tc = columns.times[t];
    const auto& seen = cell_units[t];
    if (seen.size() < 2) continue;
    std::string parts;
    for (const auto& [symbol, lines] : seen) {
      std::string list;
      for (int l : lines) list += (list.empty() ? "" : ", ") + std::to_string(l);
      parts += (parts.empty() ? "" : "; ") + symbol + " on line" + (lines.size() > 1 ? "s " : " ") + list;
    }
    out.notes.push_back(quoted(tc.name) + " mixes units (" + parts + "): each cell read in its own" +
                        (tc.unit ? ", not the name's " + tc.unit->reads_as : std::string()) +
                        " — check that each is the unit you measured in");
  }
  const int none = out.left_out + out.untimed;
  if (out.rows.empty() && none > 0) {
    std::vector<int> lines;
    for (const auto* v : {&out.oom_rows, &out.untimed_rows})
      for (const StudentRow& r : *v) lines.push_back(r.line);
    const auto [lo, hi] = std::minmax_element(lines.begin(), lines.end());
    const std::string span = " (lines " + std::to_string(*lo) + "–" + std::to_string(*hi) + ")";
    if (out.untimed == 0)
      throw StudentTableError("no row to check: all " + std::to_string(out.left_out) +
                              " data row(s) say OOM, so none has a time" + span);
    throw StudentTableError("no row to check: none of the " + std::to_string(none) + " time(s) is measured (" +
                            std::to_string(out.left_out) + " OOM, " + std::to_string(out.untimed) + " empty)" + span);
  }
  if (out.rows.empty()) throw StudentTableError("no rows to check: the file has a header only");
  return out;
}

// ---- the check ---------------------------------------------------------------------

namespace {

std::string tensor_list(sim::Pass pass) {
  std::string s;
  for (sim::Tensor t : sim::pass_tensors(pass)) s += (s.empty() ? "" : ", ") + std::string(sim::to_string(t));
  return s;
}

std::string tflops_text(double tflops) { return sim::fixed(tflops, 1); }
std::string mib(double bytes) { return sim::fixed(bytes / 1048576.0, 0) + " MiB"; }
std::string seconds_as_ms(double s) { return sim::fixed(s * 1e3, 3) + " ms"; }

std::string rate_flag(const CheckedStudentRow& r) {
  return "reported " + tflops_text(*r.row.reported_tflops) + " TFLOP/s is " + sim::fixed(r.ratio, 2) + "× the " +
         tflops_text(r.recomputed_tflops) + " its time gives";
}

std::string roof_flag(const CheckedStudentRow& r, const StudentCheck& c) {
  const std::string times = " (" + seconds_as_ms(r.row.time_s) + " < bound " + seconds_as_ms(r.bound_s) + ")";
  if (!r.memory_bound)
    return "above the roof: " + tflops_text(r.recomputed_tflops) + " TFLOP/s over the " +
           std::string(sim::to_string(r.row.problem.dtype)) + " peak " + tflops_text(r.peak_tflops) + times;
  std::string s = "above the roof: " + tensor_list(r.row.pass) + " moved at " +
                  sim::fixed(r.compulsory_bytes / r.row.time_s / 1e9, 0) + " GB/s over HBM " +
                  sim::fixed(c.bandwidth / 1e9, 0) + " GB/s" + times;
  if (c.l2_bytes > 0 && r.compulsory_bytes <= static_cast<double>(c.l2_bytes))
    s += ", but they fit the " + sim::bytes_iec(static_cast<double>(c.l2_bytes)) +
         " L2: repeats without an L2 flush read them from there";
  return s;
}

std::string memory_flag(const CheckedStudentRow& r) {
  return "memory " + mib(*r.row.memory_bytes) + " below its " + tensor_list(r.row.pass) + " (" +
         mib(r.compulsory_bytes) + ")";
}

CheckedStudentRow check_row(const StudentRow& row, const sim::HardwareModel& hw, const StudentCheck& c) {
  CheckedStudentRow r;
  r.row = row;
  r.flops = static_cast<double>(convention_flops(row.problem, row.pass));
  r.recomputed_tflops = r.flops / row.time_s / 1e12;
  if (row.reported_tflops) r.ratio = *row.reported_tflops / r.recomputed_tflops;
  const double peak = highest_peak(hw, row.problem.dtype);
  r.peak_tflops = peak / 1e12;
  r.compulsory_bytes = static_cast<double>(sim::pass_tensor_bytes(row.problem, row.pass));
  r.ai = arithmetic_intensity(r.flops, r.compulsory_bytes);
  r.roof_tflops = attainable_flops(r.ai, peak, hw.hbm_bandwidth) / 1e12;
  r.bound_s = time_lower_bound_s(r.flops, r.compulsory_bytes, peak, hw.hbm_bandwidth);
  r.memory_bound = hw.hbm_bandwidth > 0 && r.compulsory_bytes / hw.hbm_bandwidth > (peak > 0 ? r.flops / peak : 0);

  r.rate_mismatch = row.reported_tflops && std::abs(r.ratio - 1) > c.tolerance;
  // The roofline's one rule for a point above a ceiling, on the time.
  r.above_roof = peak > 0 && hw.hbm_bandwidth > 0 && above_ceiling(r.bound_s / row.time_s, 1.0);
  r.memory_below_inputs = row.memory_bytes && *row.memory_bytes < r.compulsory_bytes;
  if (r.rate_mismatch) r.flags.push_back(rate_flag(r));
  if (r.above_roof) r.flags.push_back(roof_flag(r, c));
  if (r.memory_below_inputs) r.flags.push_back(memory_flag(r));
  return r;
}

}  // namespace

int StudentCheck::flagged() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return !r.consistent(); }));
}
int StudentCheck::rate_mismatches() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.rate_mismatch; }));
}
int StudentCheck::above_roof() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.above_roof; }));
}
int StudentCheck::memory_below_inputs() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.memory_below_inputs; }));
}
int StudentCheck::spread_over() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.spread_over; }));
}

StudentCheck check_student_table(const StudentTable& t, const sim::HardwareModel& hw, const StudentCheckOptions& options) {
  StudentCheck c;
  c.hardware = hw.name;
  c.hardware_name = hw.display_name.empty() ? hw.name : hw.display_name;
  c.bandwidth = hw.hbm_bandwidth;
  c.l2_bytes = hw.l2_bytes;
  c.tolerance = options.tolerance;
  c.spread = options.spread;
  c.notes = t.notes;
  c.left_out = t.left_out;
  c.oom_rows = t.oom_rows;
  c.untimed = t.untimed;
  c.untimed_rows = t.untimed_rows;
  for (const StudentRow& row : t.rows) {
    c.rows.push_back(check_row(row, hw, c));
    const sim::DType d = row.problem.dtype;
    if (!(highest_peak(hw, d) > 0)) {
      const std::string why = hw.name + " has no " + std::string(sim::to_string(d)) + " peak: its rows are not checked against the roof";
      if (std::find(c.notes.begin(), c.notes.end(), why) == c.notes.end()) c.notes.push_back(why);
    }
  }
  // One configuration timed more than once: the file's own repeats show how
  // far apart its runs are; beyond the spread, a single time of it means little.
  for (size_t k = 0; k < c.rows.size(); ++k) {
    const StudentRow& row = c.rows[k].row;
    auto same = [&](const RepeatedConfiguration& g) { return g.impl == row.impl && g.problem == row.problem && g.pass == row.pass; };
    auto it = std::find_if(c.repeats.begin(), c.repeats.end(), same);
    if (it == c.repeats.end()) {
      it = c.repeats.insert(c.repeats.end(), RepeatedConfiguration{row.impl, row.problem, row.pass, {}, row.time_s, row.time_s});
    }
    it->lines.push_back(row.line);
    it->min_s = std::min(it->min_s, row.time_s);
    it->max_s = std::max(it->max_s, row.time_s);
  }
  c.repeats.erase(std::remove_if(c.repeats.begin(), c.repeats.end(),
                                 [](const RepeatedConfiguration& g) { return g.lines.size() < 2; }),
                  c.repeats.end());
  for (const RepeatedConfiguration& g : c.repeats) {
    if (!(g.spread() > c.spread)) continue;
    for (CheckedStudentRow& r : c.rows)
      if (r.row.pass == g.pass && std::find(g.lines.begin(), g.lines.end(), r.row.line) != g.lines.end()) {
        r.spread_over = true;
        r.flags.push_back("one of " + std::to_string(g.lines.size()) + " times of its configuration, " +
                          sim::fixed(g.min_s * 1e3, 2) + "–" + sim::fixed(g.max_s * 1e3, 2) + " ms: spread " +
                          sim::fixed(g.spread() * 100, 0) + " % > " + sim::fixed(c.spread * 100, 0) + " %");
      }
  }
  return c;
}

// ---- printers -----------------------------------------------------------------------

namespace {

std::string percent(double fraction) { return sim::fixed(fraction * 100, fraction * 100 < 1 ? 1 : 0) + " %"; }

// "4·B·H·N²·d forward, 10·B·H·N²·d backward, halved when causal": the convention as its printer writes it.
std::string convention_text() {
  const sim::AttentionProblem full;  // non-causal
  return convention_formula(full, sim::PassSelection::fwd) + " forward, " +
         convention_formula(full, sim::PassSelection::bwd) + " backward, halved when causal";
}

std::string shape_of(const CheckedStudentRow& r) {
  return (r.row.impl.empty() ? "" : r.row.impl + " ") + sim::describe(r.row.problem);
}

std::string ratio_text(const CheckedStudentRow& r) { return r.row.reported_tflops ? sim::fixed(r.ratio, 2) : "-"; }

std::string verdict(const CheckedStudentRow& r) {
  if (r.consistent()) return "consistent";
  std::string s;
  for (const std::string& f : r.flags) s += (s.empty() ? "" : "; ") + f;
  return s;
}

// The table's lines with the verdict, left-aligned, after the last column.
std::string with_verdicts(const std::string& table, const std::vector<std::string>& verdicts) {
  std::vector<std::string> lines;
  for (size_t k = 0; k < table.size();) {
    const size_t e = table.find('\n', k);
    if (e == std::string::npos) {
      lines.push_back(table.substr(k));
      break;
    }
    lines.push_back(table.substr(k, e - k));
    k = e + 1;
  }
  size_t width = 0;
  for (const std::string& l : lines) {
    size_t n = 0;
    for (unsigned char ch : l) n += (ch & 0xC0) != 0x80 ? 1 : 0;
    width = std::max(width, n);
  }
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    size_t n = 0;
    for (unsigned char ch : lines[k]) n += (ch & 0xC0) != 0x80 ? 1 : 0;
    const std::string tail = k == 0 ? "verdict" : k == 1 ? std::string(7, '-') : verdicts[k - 2];
    const char fill = k == 1 ? '-' : ' ';
    out += lines[k] + std::string(width - n + 2, fill) + tail + "\n";
  }
  return out;
}

}  // namespace

std::string student_check_summary(const StudentCheck& c) {
  const int n = static_cast<int>(c.rows.size());
  std::string s = std::to_string(n) + (n == 1 ? " row: " : " rows: ") + std::to_string(n - c.flagged()) +
                  " consistent, " + std::to_string(c.flagged()) + " flagged (" + std::to_string(c.rate_mismatches()) +
                  " TFLOP/s off its own time by more than " + percent(c.tolerance) + ", " +
                  std::to_string(c.above_roof()) + " above the roof, " + std::to_string(c.memory_below_inputs()) +
                  " memory below the inputs, " + std::to_string(c.spread_over()) +
                  " timed again with a spread over " + percent(c.spread) + ")";
  if (c.left_out > 0) s += "; " + std::to_string(c.left_out) + " OOM row(s) left out";
  if (c.untimed > 0) s += "; " + std::to_string(c.untimed) + " row(s) without a time left out";
  return s;
}

std::string student_check_text(const StudentCheck& c, const std::string& origin) {
  std::string out = "flashlab check: " + std::to_string(c.rows.size()) + " row(s) of " + origin + " against " +
                    c.hardware + " (" + c.hardware_name + ", HBM " + sim::fixed(c.bandwidth / 1e9, 0) + " GB/s)\n";
  out += "FLOPs: the FlashAttention convention, " + convention_text() + "\n";
  out += "TFLOP/s recomputed from each row's time; a reported one more than " + percent(c.tolerance) +
         " off it is flagged\n";
  out += "roof: the dtype's peak, and HBM moving the compulsory bytes (" + tensor_list(sim::Pass::fwd) +
         " forward; " + tensor_list(sim::Pass::bwd) + " backward; each once)\n";
  out += "memory: flagged below the size of those tensors (inputs MiB)\n";
  out += "repeats: a configuration timed more than once is flagged when its times spread more than " +
         percent(c.spread) + " ((max − min) / min)\n";
  for (const std::string& n : c.notes) out += "note: " + n + "\n";
  out += "\n";
  TextTable t({"line  shape", "pass", "time ms", "TFLOP/s reported", "recomputed", "ratio", "roof", "memory MiB",
               "inputs MiB"});
  size_t line_width = std::string("line").size();
  for (const CheckedStudentRow& r : c.rows) line_width = std::max(line_width, std::to_string(r.row.line).size());
  std::vector<std::string> verdicts;
  for (const CheckedStudentRow& r : c.rows) {
    std::string line = std::to_string(r.row.line);
    line += std::string(line_width - line.size() + 2, ' ');
    t.add({line + shape_of(r), std::string(sim::to_string(r.row.pass)), sim::fixed(r.row.time_s * 1e3, 3),
           r.row.reported_tflops ? tflops_text(*r.row.reported_tflops) : "-", tflops_text(r.recomputed_tflops),
           ratio_text(r), sim::fixed(r.roof_tflops, 0),
           r.row.memory_bytes ? sim::fixed(*r.row.memory_bytes / 1048576.0, 0) : "-",
           sim::fixed(r.compulsory_bytes / 1048576.0, 0)});
    verdicts.push_back(verdict(r));
  }
  out += with_verdicts(t.str(), verdicts);
  if (!c.repeats.empty()) {
    out += "\nrepeated configurations (spread = (max − min) / min of their times; over " + percent(c.spread) +
           " is flagged):\n";
    for (const RepeatedConfiguration& g : c.repeats) {
      std::string lines;
      for (int l : g.lines) lines += (lines.empty() ? "" : ", ") + std::to_string(l);
      out += "  " + (g.impl.empty() ? "" : g.impl + " ") + sim::describe(g.problem) + " " +
             std::string(sim::to_string(g.pass)) + ": lines " + lines + ", " + sim::fixed(g.min_s * 1e3, 2) + "–" +
             sim::fixed(g.max_s * 1e3, 2) + " ms, spread " + percent(g.spread()) +
             (g.spread() > c.spread ? " — flagged" : "") + "\n";
    }
  }
  out += "\n" + student_check_summary(c) + "\n";
  return out;
}

std::string student_check_csv(const StudentCheck& c) {
  std::string out = csv_row({"line", "impl", "batch", "heads", "seq", "head_dim", "causal", "dtype", "pass", "status",
                             "time_s", "reported_tflops", "recomputed_tflops", "ratio", "convention_flops",
                             "compulsory_bytes", "arithmetic_intensity", "peak_tflops", "roof_tflops", "bound_s",
                             "memory_bytes", "rate_mismatch", "above_roof", "memory_below_inputs", "repeat_spread",
                             "verdict"});
  const auto opt = [](const std::optional<double>& v) { return v ? sim::shortest(*v) : std::string(); };
  const auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
  auto shape = [](const StudentRow& r) -> std::vector<std::string> {
    const sim::AttentionProblem& p = r.problem;
    return {std::to_string(r.line), r.impl, std::to_string(p.batch), std::to_string(p.heads), std::to_string(p.seq_q),
            std::to_string(p.head_dim), p.causal ? "true" : "false", std::string(sim::to_string(p.dtype)),
            std::string(sim::to_string(r.pass))};
  };
  auto spread_of = [&](const StudentRow& r) {
    for (const RepeatedConfiguration& g : c.repeats)
      if (g.pass == r.pass && std::find(g.lines.begin(), g.lines.end(), r.line) != g.lines.end())
        return sim::shortest(g.spread());
    return std::string();
  };
  // The file's order: checked rows and OOM rows by line.
  std::vector<std::pair<int, std::vector<std::string>>> lines;
  for (const CheckedStudentRow& r : c.rows) {
    std::vector<std::string> f = shape(r.row);
    for (std::string v : {std::string("ok"), sim::shortest(r.row.time_s), opt(r.row.reported_tflops),
                          sim::shortest(r.recomputed_tflops), r.row.reported_tflops ? sim::shortest(r.ratio) : "",
                          sim::shortest(r.flops), sim::shortest(r.compulsory_bytes), sim::shortest(r.ai),
                          sim::shortest(r.peak_tflops), sim::shortest(r.roof_tflops), sim::shortest(r.bound_s),
                          opt(r.row.memory_bytes), flag(r.rate_mismatch), flag(r.above_roof),
                          flag(r.memory_below_inputs), spread_of(r.row), verdict(r)})
      f.push_back(std::move(v));
    lines.emplace_back(r.row.line, std::move(f));
  }
  // An OOM row, or one without a time (a run that failed or was skipped): its
  // shape and the model's numbers of it; nothing measured, nothing checked.
  auto unchecked = [&](const StudentRow& r, const std::string& status, const std::string& verdict_text) {
    const double flops = static_cast<double>(convention_flops(r.problem, r.pass));
    const double bytes = static_cast<double>(sim::pass_tensor_bytes(r.problem, r.pass));
    std::vector<std::string> f = shape(r);
    for (std::string v : {status, std::string(), std::string(), std::string(), std::string(),
                          sim::shortest(flops), sim::shortest(bytes), sim::shortest(arithmetic_intensity(flops, bytes)),
                          std::string(), std::string(), std::string(), std::string(), std::string(), std::string(),
                          std::string(), std::string(), verdict_text})
      f.push_back(std::move(v));
    lines.emplace_back(r.line, std::move(f));
  };
  for (const StudentRow& r : c.oom_rows) unchecked(r, "OOM", "OOM: not checked");
  for (const StudentRow& r : c.untimed_rows) unchecked(r, "skipped", "no time: not checked");
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [line, f] : lines) out += csv_row(f);
  return out;
}

namespace {

// The roofline chart's x range and HBM slope (its first series) widened to
// take points from ai_lo to ai_hi.
void widen_roofline(ChartSpec& c, double ai_lo, double ai_hi, double bandwidth) {
  if (c.series.empty() || c.series.front().x.size() != 2 || !c.x.min || !c.x.max) return;
  if (ai_lo / 2 < *c.x.min) {
    c.x.min = ai_lo / 2;
    Series& slope = c.series.front();
    slope.x.front() = *c.x.min;
    slope.y.front() = *c.x.min * bandwidth;
  }
  if (ai_hi * 2 > *c.x.max) c.x.max = ai_hi * 2;
}

Series student_series(const std::string& name, Color color, MarkerShape marker) {
  Series s;
  s.name = name;
  s.style = SeriesStyle::points;
  s.marker = marker;
  s.color = color;
  return s;
}

}  // namespace

ChartSpec student_roofline_chart(const StudentCheck& c, const sim::HardwareModel& hw, const BenchResults* flashlab_runs) {
  ChartContext ctx;
  ctx.hw = hw;
  ctx.algorithms.clear();  // the student's points, not the model's
  if (!c.rows.empty()) ctx.problem = c.rows.front().row.problem;  // its dtype's roof drawn solid
  ChartSpec chart = roofline_chart(ctx, flashlab_runs);
  chart.id = "check-roofline";
  chart.title = "Your measurements on the roofline — " + c.hardware_name;
  chart.subtitle = std::to_string(c.rows.size()) + " row(s), " + std::to_string(c.flagged()) +
                   " flagged · FLOPs by the convention · AI over the compulsory bytes";
  Series ok = student_series("consistent rows", palette(2), MarkerShape::circle);
  Series bad = student_series("flagged rows", Color{213, 94, 0, 255}, MarkerShape::cross);
  bad.grouped_label = "lines";  // rows at one spot labelled together: "lines 3, 6"
  bad.label_every_point = true;   // each flagged row named, among FlashLab's runs too
  double lo = 0, hi = 0;
  for (const CheckedStudentRow& r : c.rows) {
    Series& s = r.consistent() ? ok : bad;
    s.x.push_back(r.ai);
    s.y.push_back(r.recomputed_tflops * 1e12);
    s.point_labels.push_back(r.consistent() ? "" : "line " + std::to_string(r.row.line));
    lo = lo > 0 ? std::min(lo, r.ai) : r.ai;
    hi = std::max(hi, r.ai);
  }
  for (Series* s : {&ok, &bad})
    if (!s->x.empty()) chart.series.push_back(std::move(*s));
  if (lo > 0) widen_roofline(chart, lo, hi, hw.hbm_bandwidth);
  // The compulsory bytes give the highest intensity any implementation reaches.
  chart.notes.push_back("your rows: convention FLOPs / your time, AI over the compulsory bytes (" +
                        tensor_list(sim::Pass::fwd) + " once), the highest intensity any implementation of the pass can have: a real kernel moves more bytes, so "
                        "its true point lies at or left of the one drawn");
  return chart;
}

}  // namespace flashlab::analysis
