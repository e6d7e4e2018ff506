// A student's own measurements checked: the FlashAttention-2 lab's FlashAttention-2 tables
// (tests/data/flash2-lab-tables.csv) row by row against numbers worked out by
// hand, rows built to sit above the roof or below the inputs' memory, the
// labs' spellings of the columns, and one-line errors naming the row or column.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/student/student_check.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

using namespace flashlab;
using analysis::CheckedStudentRow;
using analysis::StudentCheck;

namespace {

std::string flash2_lab_text() {
  std::ifstream in(std::string(FLASHLAB_TEST_DATA) + "/flash2-lab-tables.csv");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const sim::HardwareModel& a100() {
  static const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  return hw;
}

StudentCheck check_text(const std::string& text, const analysis::StudentDefaults& d = {}, double tolerance = 0.10) {
  return analysis::check_student_table(analysis::read_student_table(text, d), a100(), {tolerance});
}

const CheckedStudentRow& at_line(const StudentCheck& c, int line) {
  const auto it = std::find_if(c.rows.begin(), c.rows.end(), [&](const auto& r) { return r.row.line == line; });
  REQUIRE(it != c.rows.end());
  return *it;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

// The message of the error reading `text` throws.
std::string error_of(const std::string& text, const analysis::StudentDefaults& d = {}) {
  try {
    (void)analysis::read_student_table(text, d);
  } catch (const analysis::StudentTableError& e) {
    return e.what();
  }
  return "(no error)";
}

// The lab's shape: B=32 H=32 N=1024 d=64, and one measured row after it.
const char* kHeader = "batch,seq,heads,head_dim,pass,time_ms,tflops,memory_mib\n";

}  // namespace

TEST_CASE("the FlashAttention-2 lab: the batch-16 row reports 29.8 TFLOP/s where its own time gives 22.3", "[analysis][check]") {
  const StudentCheck c = check_text(flash2_lab_text());
  REQUIRE(c.rows.size() == 14);
  const CheckedStudentRow& r = at_line(c, 2);
  CHECK(r.row.problem.batch == 16);
  CHECK(r.row.problem.head_dim == 64);  // emb_dim 2048 over 32 heads
  REQUIRE(r.row.reported_tflops);
  CHECK(*r.row.reported_tflops == Approx(29.8).margin(0.1));
  CHECK(r.recomputed_tflops == Approx(22.3).margin(0.1));  // 4·16·32·1024²·64 / 6.150 ms
  CHECK(r.ratio == Approx(1.332).margin(0.001));
  CHECK(r.rate_mismatch);
  CHECK_FALSE(r.above_roof);
  CHECK_FALSE(r.memory_below_inputs);
  REQUIRE(r.flags.size() == 1);
  CHECK(r.flags.front() == "reported 29.8 TFLOP/s is 1.33× the 22.3 its time gives");
}

TEST_CASE("the FlashAttention-2 lab: every row's recomputed TFLOP/s and verdict at a 10 % tolerance", "[analysis][check]") {
  struct Expected {
    int line;
    const char* row;
    double recomputed;  // 4·B·H·N²·d (halved when causal) / time, worked out by hand
    bool flagged;       // its TFLOP/s off its own time
  };
  // Timed again in another table: B=32 H=32 N=1024 d=64 on lines 3, 6, 10, 14
  // (6.95–9.38 ms, 35 %); 16 heads at emb 2048 on lines 9 and 12 (6.87–8.72 ms, 27 %).
  const std::vector<int> spread_lines{3, 6, 9, 10, 12, 14};
  const Expected rows[] = {
      {2, "batch 16", 22.347, true},     {3, "batch 32", 39.555, false},   {4, "batch 64", 39.791, false},
      {5, "seq 512", 22.552, true},      {6, "seq 1024", 32.478, false},   {7, "seq 2048", 41.955, false},
      {8, "heads 8", 35.360, false},     // 0.902: 9.8 % under, inside the tolerance
      {9, "heads 16", 31.509, false},    {10, "heads 32", 37.566, false},  {11, "emb 1024", 37.397, false},
      {12, "emb 2048", 40.019, false},   {13, "emb 4096", 36.848, true},   // 0.878
      {14, "non-causal", 29.308, true},  // 1.143
      {15, "causal", 31.865, false},     // half the FLOPs: 0.919
  };
  const StudentCheck c = check_text(flash2_lab_text());
  for (const Expected& e : rows) {
    INFO("line " << e.line << " (" << e.row << ")");
    const CheckedStudentRow& r = at_line(c, e.line);
    CHECK(r.recomputed_tflops == Approx(e.recomputed).margin(0.01));
    const bool spread = std::find(spread_lines.begin(), spread_lines.end(), e.line) != spread_lines.end();
    CHECK(r.rate_mismatch == e.flagged);
    CHECK(r.spread_over == spread);
    CHECK(r.consistent() == !(e.flagged || spread));
    CHECK_FALSE(r.above_roof);           // 42 TFLOP/s at most, under the A100's 312
    CHECK_FALSE(r.memory_below_inputs);  // 644 MiB and more, over 256 to 1024 MiB of Q, K, V, O
  }
  CHECK(c.flagged() == 9);
  CHECK(analysis::student_check_summary(c) ==
        "14 rows: 5 consistent, 9 flagged (4 TFLOP/s off its own time by more than 10 %, 0 above the roof, "
        "0 memory below the inputs, 6 timed again with a spread over 10 %)");
  REQUIRE(c.repeats.size() == 2);
  CHECK(c.repeats[0].lines == std::vector<int>{3, 6, 10, 14});
  CHECK(c.repeats[0].spread() == Approx((9.378869335 - 6.949217493) / 6.949217493));
  CHECK(c.repeats[1].lines == std::vector<int>{9, 12});
  // A wider tolerance lets the 33 % row alone through the gate.
  CHECK(check_text(flash2_lab_text(), {}, 0.25).rate_mismatches() == 1);
  // And a spread of 30 % lets the pair at 27 % pass.
  const StudentCheck wide = analysis::check_student_table(analysis::read_student_table(flash2_lab_text()), a100(),
                                                          {0.10, 0.30});
  CHECK(wide.spread_over() == 4);
}

TEST_CASE("the FlashAttention-2 lab: the shapes, the causal row and how the labs' columns are read", "[analysis][check]") {
  const StudentCheck c = check_text(flash2_lab_text());
  CHECK(at_line(c, 8).row.problem.head_dim == 256);   // emb_dim 2048 over 8 heads
  CHECK(at_line(c, 11).row.problem.head_dim == 64);   // 1024 over 16
  CHECK(at_line(c, 13).row.problem.head_dim == 256);  // 4096 over 16
  CHECK(at_line(c, 15).row.problem.causal);
  CHECK_FALSE(at_line(c, 14).row.problem.causal);
  CHECK(at_line(c, 15).flops == Approx(at_line(c, 14).flops / 2));
  // Q, K, V, O of B=32 H=32 N=1024 d=64 fp16: 4 × 128 MiB; the lab's MB is MiB.
  CHECK(at_line(c, 3).compulsory_bytes == 4.0 * 32 * 32 * 1024 * 64 * 2);
  REQUIRE(at_line(c, 3).row.memory_bytes);
  CHECK(*at_line(c, 3).row.memory_bytes == Approx(1288.000488 * 1048576));
  CHECK(at_line(c, 3).ai == Approx(512));  // 4·N²·d / (4·N·d·2 bytes) = N / 2
  CHECK(at_line(c, 3).roof_tflops == Approx(312));
  CHECK(has_note(c.notes, "'Total Flops (FLOPs/s)' read as TFLOP/s"));
  CHECK(has_note(c.notes, "'Peak Memory (MB)' read as MiB (2^20 bytes)"));
  CHECK(has_note(c.notes, "'Forward Time (s)' read in seconds"));
}

TEST_CASE("the labs' tab-separated table, pasted with the defaults given beside it", "[analysis][check]") {
  const std::string pasted =
      "batch_size\tForward Time (s)\tTotal Flops (FLOPs/s)\tPeak Memory (MB)\n"
      "16\t0.006150229772\t29.77291386\t644.0004883\n"
      "32\t0.006949217493\t36.62848594\t1288.000488\n";
  analysis::StudentDefaults d;
  d.seq = "1024";
  d.heads = "32";
  d.emb_dim = "2048";
  const StudentCheck c = check_text(pasted, d);
  REQUIRE(c.rows.size() == 2);
  CHECK(at_line(c, 2).recomputed_tflops == Approx(22.347).margin(0.01));
  CHECK(at_line(c, 2).rate_mismatch);
  CHECK(at_line(c, 3).consistent());
}

TEST_CASE("a peak memory below the pass's own tensors is flagged, forward and backward", "[analysis][check]") {
  // Q, K, V, O: 512 MiB. Backward: Q, K, V, O, dO, dQ, dK, dV: 1024 MiB.
  const StudentCheck c = check_text(std::string(kHeader) +
                                    "32,1024,32,64,fwd,8.0,,100\n"    // below the forward's 512 MiB
                                    "32,1024,32,64,fwd,8.0,,600\n"    // above it
                                    "32,1024,32,64,bwd,20.0,,768\n"   // above the forward's, below the backward's
                                    "32,1024,32,64,bwd,20.0,,1100\n");
  CHECK(at_line(c, 2).memory_below_inputs);
  CHECK(at_line(c, 2).flags.front() == "memory 100 MiB below its Q, K, V, O (512 MiB)");
  CHECK(at_line(c, 3).consistent());
  CHECK(at_line(c, 4).memory_below_inputs);
  CHECK(at_line(c, 4).flags.front() == "memory 768 MiB below its Q, K, V, O, dO, dQ, dK, dV (1024 MiB)");
  CHECK(at_line(c, 5).consistent());
  CHECK(c.memory_below_inputs() == 2);
}

TEST_CASE("a point above the roof is flagged: over the peak, or over the bandwidth", "[analysis][check]") {
  // B=32 H=32 N=1024 d=64: 0.2749 TFLOP in 0.5 ms is 549.8 TFLOP/s, over the A100's 312.
  // B=1024 H=32 N=64 d=64: AI 32 FLOP/B, under the ridge; 1 GiB of Q, K, V, O in
  // 0.4 ms is 2.68 TB/s, over 1.555 TB/s. B=16 H=16 N=128 d=64: AI 64, 16 MiB of
  // Q, K, V, O in 5 µs (bound 10.8 µs), inside the 40 MiB L2.
  const StudentCheck c = check_text(std::string(kHeader) +
                                    "32,1024,32,64,fwd,0.5,,\n"
                                    "1024,64,32,64,fwd,0.4,,\n"
                                    "16,128,16,64,fwd,0.005,,\n"
                                    "32,1024,32,64,fwd,0.87,,\n");
  const CheckedStudentRow& compute = at_line(c, 2);
  CHECK(compute.recomputed_tflops == Approx(549.8).margin(0.1));
  CHECK(compute.peak_tflops == Approx(312));
  CHECK(compute.bound_s == Approx(0.2749e12 / 312e12).epsilon(1e-3));
  CHECK(compute.above_roof);
  CHECK_FALSE(compute.memory_bound);
  CHECK(compute.flags.front() == "above the roof: 549.8 TFLOP/s over the fp16 peak 312.0 (0.500 ms < bound 0.881 ms)");

  const CheckedStudentRow& memory = at_line(c, 3);
  CHECK(memory.ai == Approx(32));
  CHECK(memory.memory_bound);
  CHECK(memory.roof_tflops == Approx(32 * 1.555).margin(0.01));
  CHECK(memory.above_roof);
  CHECK(memory.flags.front() == "above the roof: Q, K, V, O moved at 2684 GB/s over HBM 1555 GB/s (0.400 ms < bound "
                                "0.691 ms)");
  CHECK(at_line(c, 4).above_roof);
  CHECK_THAT(at_line(c, 4).flags.front(), Catch::Contains("they fit the 40 MiB L2"));
  // 0.87 ms against a bound of 0.881 ms: 1.3 % faster, inside the roofline's 2 % margin.
  CHECK_FALSE(at_line(c, 5).above_roof);
  CHECK(c.above_roof() == 3);
}

TEST_CASE("the convention of each pass: the backward is 2.5 × the forward", "[analysis][check]") {
  const StudentCheck c = check_text(std::string(kHeader) + "32,1024,32,64,forward,10,27.5,\n"
                                                           "32,1024,32,64,backward,25,27.5,\n");
  CHECK(at_line(c, 2).recomputed_tflops == Approx(27.49).margin(0.01));
  CHECK(at_line(c, 3).row.pass == sim::Pass::bwd);
  CHECK(at_line(c, 3).recomputed_tflops == Approx(27.49).margin(0.01));
  CHECK(at_line(c, 3).compulsory_bytes == 2 * at_line(c, 2).compulsory_bytes);
  CHECK(c.flagged() == 0);
}

TEST_CASE("other spellings: N, H, d, time_ms, TFLOP/s, GiB, an implementation, a backward time column", "[analysis][check]") {
  const StudentCheck c = check_text(
      "Implementation,N,H,d,B,Causal,Backward Time (ms),TFLOP/s,Peak Memory (GiB)\n"
      "flash2,1024,32,64,32,yes,12.5,11.0,1.5\n"
      "pytorch,1024,32,64,32,NO,50,5.5,OOM\n");
  const CheckedStudentRow& r = at_line(c, 2);
  CHECK(r.row.impl == "flash2");
  CHECK(r.row.pass == sim::Pass::bwd);  // the time column says backward
  CHECK(r.row.problem.causal);
  CHECK(r.row.time_s == Approx(0.0125));
  CHECK(r.recomputed_tflops == Approx(10 * 32 * 32 * 1024.0 * 1024 * 64 / 2 / 0.0125 / 1e12));
  CHECK(*r.row.memory_bytes == Approx(1.5 * 1073741824));
  CHECK_FALSE(at_line(c, 3).row.memory_bytes);  // OOM in a measured cell: not reported
  CHECK(has_note(c.notes, "'Peak Memory (GiB)' read as GiB"));
  CHECK(has_note(c.notes, "'TFLOP/s' read as TFLOP/s"));
}

TEST_CASE("an OOM row is left out of the check and said so, the columns not read are named", "[analysis][check]") {
  const StudentCheck c = check_text("table,batch,seq,heads,head_dim,time_ms\n"
                                    "b,32,1024,32,64,8.0\n"
                                    "b,64,16384,32,64,OOM\n");
  CHECK(c.rows.size() == 1);
  CHECK(c.left_out == 1);
  CHECK(has_note(c.notes, "line 3: OOM, not checked"));
  CHECK(has_note(c.notes, "not read: 'table'"));
  CHECK_THAT(analysis::student_check_summary(c), Catch::EndsWith("; 1 OOM row(s) left out"));
}

namespace {
// The shape of the student report's LLaMA-2-7B rows (seeds/004): batch 1, 32
// heads of 128, which its table does not say.
analysis::StudentDefaults llama_7b_shape() {
  analysis::StudentDefaults shape;
  shape.batch = "1";
  shape.heads = "32";
  shape.head_dim = "128";
  return shape;
}
}  // namespace

// The training-efficiency table of a student report (seeds/004): a forward, a
// backward and a communication time per model and sequence length.
TEST_CASE("a forward and a backward time column give a row per pass, a communication time is never a pass's", "[analysis][check]") {
  const analysis::StudentDefaults shape = llama_7b_shape();
  const StudentCheck c = check_text("Model,seq_len,Forward Pass (s),Backward Pass (s),Communication Time (s)\n"
                                    "Llama-2-7B,256,18.77,132.55,18.78\n"
                                    "Llama-2-7B,512,0.13262,0.53826,0.06842\n",
                                    shape);
  REQUIRE(c.rows.size() == 4);
  CHECK(c.rows[0].row.line == 2);
  CHECK(c.rows[0].row.pass == sim::Pass::fwd);
  CHECK(c.rows[0].row.time_s == Approx(18.77));
  CHECK(c.rows[1].row.line == 2);
  CHECK(c.rows[1].row.pass == sim::Pass::bwd);
  CHECK(c.rows[1].row.time_s == Approx(132.55));
  CHECK(c.rows[2].row.problem.seq_q == 512);
  CHECK(c.rows[3].row.time_s == Approx(0.53826));  // not the 0.06842 of the communication column
  for (const CheckedStudentRow& r : c.rows) CHECK(r.row.time_s != Approx(18.78));
  CHECK(has_note(c.notes, "'Forward Pass (s)' read in seconds"));
  CHECK(has_note(c.notes, "'Backward Pass (s)' read in seconds"));
  CHECK(has_note(c.notes, "not read: 'Communication Time (s)' (a time of something other than an attention pass)"));
  CHECK(c.repeats.empty());  // a line's forward and backward are not repeats of one configuration
}

TEST_CASE("a time pasted with its unit in the cell: each cell read in its own, a column mixing units said so", "[analysis][check]") {
  const analysis::StudentDefaults shape = llama_7b_shape();
  const StudentCheck c = check_text("Model\tseq_len\tForward Pass\tBackward Pass\tCommunication Time\n"
                                    "Llama-2-7B\t256\t18.77s\t132.55s\t18.78s\n"
                                    "Llama-2-7B\t512\t132.62ms\t538.26ms\t68.42ms\n"
                                    "Llama-2-7B\t1024\t58.97 s\t182110 us\t133.28s\n",
                                    shape);
  REQUIRE(c.rows.size() == 6);
  CHECK(c.rows[0].row.time_s == Approx(18.77));
  CHECK(c.rows[2].row.time_s == Approx(0.13262));
  CHECK(c.rows[3].row.time_s == Approx(0.53826));
  CHECK(c.rows[4].row.time_s == Approx(58.97));
  CHECK(c.rows[5].row.time_s == Approx(0.18211));
  CHECK(has_note(c.notes, "'Forward Pass' read by the unit in each cell (s, ms or us)"));
  CHECK(has_note(c.notes, "'Forward Pass' mixes units (s on lines 2, 4; ms on line 3): each cell read in its own"));
  CHECK(has_note(c.notes, "'Backward Pass' mixes units (s on line 2; ms on line 3; us on line 4)"));
  // A cell's own unit over the name's, and said so.
  const StudentCheck named = check_text("seq_len,Forward Time (s)\n256,18.77\n512,132.62ms\n", shape);
  CHECK(named.rows[1].row.time_s == Approx(0.13262));
  CHECK(has_note(named.notes, "'Forward Time (s)' mixes units (s on line 2; ms on line 3): each cell read in its own, "
                              "not the name's seconds"));
}

TEST_CASE("a row with no time (a run that failed or was skipped) is left out and said so, the file still checked", "[analysis][check]") {
  const StudentCheck c = check_text("impl,batch,seq,heads,head_dim,time_ms\n"
                                    "fa2,32,1024,32,64,8.0\n"
                                    "fa2,32,1024,64,32,\n"
                                    "fa2,32,2048,32,64,n/a\n");
  CHECK(c.rows.size() == 1);
  CHECK(c.untimed == 2);
  CHECK(has_note(c.notes, "line 3: no time (empty), not checked"));
  CHECK(has_note(c.notes, "line 4: no time ('n/a'), not checked"));
  CHECK_THAT(analysis::student_check_summary(c), Catch::EndsWith("; 2 row(s) without a time left out"));
  const auto rows = analysis::csv_parse(analysis::student_check_csv(c));
  REQUIRE(rows.size() == 4);
  const auto& h = rows.front();
  const auto col = [&](const std::string& name) { return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
  CHECK(rows[2][col("line")] == "3");
  CHECK(rows[2][col("status")] == "skipped");
  CHECK(rows[2][col("time_s")].empty());
  CHECK(rows[2][col("verdict")] == "no time: not checked");
  // Beside both passes, one time empty: that pass's row only.
  const StudentCheck fb = check_text("batch,seq,heads,head_dim,Forward Time (ms),Backward Time (ms),Peak Memory (MB)\n"
                                     "16,512,8,64,0.371,,300\n");
  REQUIRE(fb.rows.size() == 1);
  CHECK(fb.rows[0].row.pass == sim::Pass::fwd);
  CHECK_FALSE(fb.rows[0].row.memory_bytes);  // one memory beside two passes belongs to neither
  CHECK(has_note(fb.notes, "line 2, 'Backward Time (ms)': no time (empty), not checked"));
  CHECK(has_note(fb.notes, "not read: 'Peak Memory (MB)' (the file times both passes"));
}

TEST_CASE("the time column named by --time is read where its name says something else", "[analysis][check]") {
  const std::string text = "batch,seq,heads,head_dim,Total Time (ms),Latency (ms)\n8,1024,16,64,0.25,9\n";
  analysis::StudentDefaults d;
  d.time_column = " total time (ms) ";
  const StudentCheck c = check_text(text, d);
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].row.time_s == Approx(0.25e-3));
  CHECK(has_note(c.notes, "'Total Time (ms)' read in milliseconds"));
  CHECK(has_note(c.notes, "not read: 'Latency (ms)' (--time names 'Total Time (ms)' as the time)"));
  // Without it, 'Latency (ms)' is the time and 'Total Time (ms)' a time of something else.
  const StudentCheck plain = check_text(text);
  CHECK(plain.rows[0].row.time_s == Approx(9e-3));

  d.time_column = "wall";
  CHECK(error_of(text, d) ==
        "--time: no column 'wall' (the columns: 'batch', 'seq', 'heads', 'head_dim', 'Total Time (ms)', "
        "'Latency (ms)')");
  d.time_column = "heads";
  CHECK(error_of(text, d) == "--time: column 'heads' gives the heads, not a time");
}

TEST_CASE("a column or row that cannot be read is one line naming it", "[analysis][check]") {
  analysis::StudentDefaults batch_flag, shape_flags, backward_flag;
  batch_flag.batch = "8";
  shape_flags.heads = "3";
  shape_flags.emb_dim = "2048";
  backward_flag.pass = "backward";
  struct Bad {
    std::string text;
    analysis::StudentDefaults defaults;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"batch,seq,heads,head_dim,time_ms\nsixteen,1024,32,64,8\n", {},
       "line 2, column 'batch': 'sixteen' is not a whole number (examples: 1024, 16K, 100KiB)"},
      {"batch,seq,heads,emb_dim,time_ms\n32,1024,3,2048,8\n", {},
       "line 2: embedding dim 2048 is not a multiple of the 3 heads (d = emb_dim / heads)"},
      {"batch,seq,heads,head_dim,time\n32,1024,32,64,8\n", {},
       "line 2, column 'time': '8' has no unit, and the column's name gives none: write it in the cell (8ms) or in "
       "the name ('time (ms)')"},
      {"batch,seq,heads,head_dim,Forward Pass\n32,1024,32,64,8 min\n", {},
       "line 2, column 'Forward Pass': '8 min' is not a positive time (a number and its unit, as 18.77s or 132.62ms; "
       "OOM, or empty for a run without one)"},
      {"batch,seq,heads,head_dim,Communication Time (s)\n32,1024,32,64,8\n", {},
       "no time of an attention pass: 'Communication Time (s)' times something else; name the pass's time like "
       "'Forward Time (s)' or time_ms, or give --time 'Communication Time (s)' if it is the attention pass's"},
      {"batch,seq,heads,head_dim,pass,Forward Time (s),Backward Time (s)\n32,1024,32,64,fwd,1,2\n", {},
       "column 'pass': the file times both passes, in 'Forward Time (s)' and 'Backward Time (s)'"},
      {"batch,seq,heads,head_dim,time_ms,Latency (ms)\n32,1024,32,64,1,2\n", {},
       "columns 'time_ms' and 'Latency (ms)' both give the time (keep one, or name each pass: 'Forward Time (s)', "
       "'Backward Time (s)')"},
      {"batch,seq,heads,head_dim,time_ms\n32,1024,32,64,\n32,2048,32,64,OOM\n", {},
       "no row to check: none of the 2 time(s) is measured (1 OOM, 1 empty) (lines 2–3)"},
      {"batch,heads,head_dim,time_ms\n32,32,64,8\n", {},
       "no sequence length: a column (seq, seq_len, seqlen, seq_length, sequence_length, sequence_len, n) or --seq"},
      {"batch,seq,heads,head_dim,time_ms\n32,1024,32,64,8\n", batch_flag,
       "--batch: the file gives the batch in column 'batch'; give one or the other"},
      {"batch,seq,heads,head_dim,causal,time_ms\n32,1024,32,64,maybe,8\n", {},
       "line 2, column 'causal': 'maybe' is not true or false (true, false, 1, 0, yes, no)"},
      {"batch,seq,heads,head_dim,time_ms\n32,1024,32,64\n", {}, "line 2: 4 fields, the header has 5"},
      {"batch,seq,heads,head_dim,time_ms\n32,1024,32,64,fast\n", {},
       "line 2, column 'time_ms': 'fast' is not a positive time (a number; OOM, or empty for a run without one)"},
      {"batch,seq,heads,head_dim,time_ms,tflops\n32,1024,32,64,8,lots\n", {},
       "line 2, column 'tflops': 'lots' is not a number (leave it empty when not measured)"},
      {"batch,seq,heads,head_dim,memory\n32,1024,32,64,8\n", {},
       "column 'memory': no unit in its name (MB, MiB, GB, GiB or bytes)"},
      {"batch,seq,heads,head_dim,time_ms\n", {}, "no rows to check: the file has a header only"},
      {"batch,seq,time_ms\n32,1024,8\n", shape_flags, "--emb-dim 2048 is not a multiple of --heads 3 (d = emb_dim / heads)"},
      {"batch,seq,heads,head_dim,Forward Time (s)\n32,1024,32,64,1\n", backward_flag,
       "--pass: the time column 'Forward Time (s)' names the forward pass"},
      {"batch,seq,heads,time_ms\n32,1024,32,8\n", {},
       "no head dim: a column (head_dim, headdim, d, d_head, dim_head, head_size), an embedding dim (emb_dim, "
       "embedding_dim, embed_dim, emb, d_model, hidden_size, hidden_dim), --head-dim or --emb-dim"},
  };
  for (const Bad& b : cases) {
    INFO(b.text);
    const std::string m = error_of(b.text, b.defaults);
    CHECK(m == b.message);
    CHECK(m.find('\n') == std::string::npos);
  }
}

TEST_CASE("check.csv: the header first, one row per input row, the recomputed numbers and the flags", "[analysis][check]") {
  const StudentCheck c = check_text(flash2_lab_text());
  const auto rows = analysis::csv_parse(analysis::student_check_csv(c));
  REQUIRE(rows.size() == 15);
  const std::vector<std::string>& h = rows.front();
  CHECK(h.front() == "line");
  const auto col = [&](const std::string& name) {
    const auto it = std::find(h.begin(), h.end(), name);
    REQUIRE(it != h.end());
    return static_cast<size_t>(it - h.begin());
  };
  for (const auto& r : rows) CHECK(r.size() == h.size());
  CHECK(rows[1][col("line")] == "2");
  CHECK(std::stod(rows[1][col("recomputed_tflops")]) == Approx(22.347).margin(0.01));
  CHECK(std::stod(rows[1][col("reported_tflops")]) == Approx(29.773).margin(0.01));
  CHECK(rows[1][col("rate_mismatch")] == "1");
  CHECK(rows[2][col("rate_mismatch")] == "0");
  CHECK(rows[3][col("verdict")] == "consistent");
  CHECK(rows[3][col("status")] == "ok");
  CHECK(rows[3][col("repeat_spread")].empty());  // line 4 is timed once
  CHECK(std::stod(rows[2][col("repeat_spread")]) == Approx(0.3497).margin(0.001));
  CHECK(rows[1][col("head_dim")] == "64");
  CHECK(rows[14][col("causal")] == "true");
}

TEST_CASE("the roofline chart: the rows at their intensity, consistent and flagged apart", "[analysis][check][charts]") {
  const StudentCheck c = check_text(flash2_lab_text());
  const analysis::ChartSpec chart = analysis::student_roofline_chart(c, a100());
  CHECK(chart.id == "check-roofline");
  const auto series = [&](const std::string& name) {
    const auto it = std::find_if(chart.series.begin(), chart.series.end(), [&](const auto& s) { return s.name == name; });
    REQUIRE(it != chart.series.end());
    return *it;
  };
  const analysis::Series ok = series("consistent rows"), flagged = series("flagged rows");
  CHECK(ok.x.size() == 5);
  CHECK(flagged.x.size() == 9);
  CHECK(flagged.x.front() == Approx(512));            // line 2: N / 2
  CHECK(flagged.y.front() == Approx(22.347e12).epsilon(1e-3));
  CHECK(flagged.point_labels.front() == "line 2");
  const double hi = *std::max_element(ok.x.begin(), ok.x.end());
  CHECK(hi == Approx(1024));  // N = 2048
  REQUIRE(chart.x.max);
  CHECK(*chart.x.max >= hi);
  CHECK_FALSE(std::any_of(chart.notes.begin(), chart.notes.end(),
                          [](const std::string& n) { return n.rfind("model points", 0) == 0; }));
}
