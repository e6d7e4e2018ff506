#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "flashlab/analysis.hpp"

using namespace flashlab;

TEST_CASE("sim JSON holds the documented fields", "[analysis][report]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  sim::AttentionProblem p;
  p.causal = true;
  const sim::SimResult r = sim::simulate(sim::Algorithm::fa2, p, hw);
  const auto j = analysis::sim_json(r, hw);
  CHECK(j["algorithm"] == "fa2");
  CHECK(j["problem"]["seq_q"] == 1024);
  for (const char* k : {"Br", "Bc", "Tr", "Tc", "visited_blocks", "masked_blocks"}) CHECK(j["tiles"].contains(k));
  CHECK(j["hbm"]["read_bytes"] == r.total.level(sim::Level::HBM).read_bytes);
  CHECK(j["hbm"]["write_bytes"] == r.total.level(sim::Level::HBM).write_bytes);
  for (const char* k : {"read_bytes", "write_bytes", "peak_bytes"}) CHECK(j["sram"].contains(k));
  CHECK(j["flops"]["matmul"] == r.total.matmul_flops);
  CHECK(j["flops"]["convention"] == analysis::convention_flops(p));
  CHECK(j["arithmetic_intensity"].get<double>() > 0);
  CHECK(j["problems"].is_array());
  CHECK(j["tiles"]["masked_blocks"] == r.masked_blocks);
}

TEST_CASE("result CSV: one header, rows of the same width, RFC 4180 quoting", "[analysis][report]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  sim::AttentionProblem p;
  p.seq_q = 1000;  // partial tiles: the problems column holds a note with a comma-free sentence
  const auto rows = analysis::run_sweep(p, hw, analysis::parse_sweep("seq=1000,2000"), sim::all_algorithms(), {});
  std::string csv = analysis::csv_row(analysis::result_csv_header());
  for (const auto& r : rows)
    csv += analysis::csv_row(analysis::result_csv_fields(r.result, r.roof, "seq", r.value, r.theta_standard, r.theta_flash));
  const auto parsed = analysis::csv_parse(csv);
  REQUIRE(parsed.size() == rows.size() + 1);
  for (const auto& row : parsed) CHECK(row.size() == analysis::result_csv_header().size());
  CHECK(parsed[1][2] == "standard");
  CHECK(parsed[1][analysis::result_csv_header().size() - 2] == "1");
}

TEST_CASE("CSV quoting round-trips awkward fields", "[analysis][csv]") {
  const std::vector<std::string> fields{"plain", "with,comma", "with \"quotes\"", "two\nlines", ""};
  const auto back = analysis::csv_parse(analysis::csv_row(fields) + analysis::csv_row({"x"}));
  REQUIRE(back.size() == 2);
  CHECK(back[0] == fields);
  CHECK(back[1] == std::vector<std::string>{"x"});
}

TEST_CASE("text tables align columns", "[analysis][report]") {
  analysis::TextTable t({"name", "value"});
  t.add({"a", "1"});
  t.add({"longer", "12345"});
  CHECK(t.str() == "name    value\n-------------\na           1\nlonger  12345\n");
}

TEST_CASE("atomic writes leave no partial file behind", "[analysis][csv]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "flashlab-atomic-test";
  fs::create_directories(dir);
  const std::string path = (dir / "out.csv").string();
  analysis::write_file_atomic(path, "a,b\n");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "a,b");
  CHECK_THROWS_WITH(analysis::write_file_atomic((dir / "missing" / "x.csv").string(), "x"),
                    Catch::Contains("does not exist"));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);
  fs::remove_all(dir);
}

