#include <cmath>
#include <cstdlib>
#include <limits>

#include "sim/support.hpp"

using namespace flashlab::sim;

TEST_CASE("sizes with suffixes", "[sim][format]") {
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("16K") == 16384);
  CHECK(parse_size("16k") == 16384);
  CHECK(parse_size("100KiB") == 102400);
  CHECK(parse_size("100KB") == 100000);
  CHECK(parse_size("1.5MiB") == 1572864);
  CHECK(parse_size("2G") == 2147483648LL);
  CHECK(parse_size(" 64 ") == 64);
  CHECK(parse_size("0") == 0);
  CHECK_FALSE(parse_size("abc").has_value());
  CHECK_FALSE(parse_size("-5").has_value());
  CHECK_FALSE(parse_size("1.5").has_value());
  CHECK_FALSE(parse_size("12Q").has_value());
  CHECK_FALSE(parse_size("").has_value());
  CHECK_FALSE(parse_size("1.2.3").has_value());
  CHECK_FALSE(parse_size("99999999999999999999").has_value());
  CHECK_FALSE(parse_size("9000000T").has_value());
}

TEST_CASE("whole numbers: the whole text or nothing", "[sim][format]") {
  CHECK(parse_whole("64") == 64);
  CHECK(parse_whole("-3") == -3);
  CHECK(parse_whole("+7") == 7);
  CHECK(parse_whole(" 12") == 12);  // leading white space, as std::stoll reads it
  CHECK(parse_whole("9223372036854775807") == std::numeric_limits<i64>::max());
  CHECK_FALSE(parse_whole("").has_value());
  CHECK_FALSE(parse_whole("64x").has_value());
  CHECK_FALSE(parse_whole("12 ").has_value());
  CHECK_FALSE(parse_whole("1.5").has_value());
  CHECK_FALSE(parse_whole("abc").has_value());
  CHECK_FALSE(parse_whole("9223372036854775808").has_value());  // out of range
}

TEST_CASE("numbers people read", "[sim][format]") {
  CHECK(group_digits(0) == "0");
  CHECK(group_digits(196608) == "196,608");
  CHECK(group_digits(-1234567) == "-1,234,567");
  CHECK(si(1.5e9) == "1.50G");
  CHECK(si(312e12) == "312T");
  CHECK(si(999) == "999");
  CHECK(si_unit(7.54e9, "B") == "7.54 GB");
  CHECK(si_unit(0, "B") == "0 B");
  CHECK(si_unit(512, "B") == "512 B");
  CHECK(bytes_iec(196608) == "192 KiB");
  CHECK(bytes_iec(1536) == "1.50 KiB");
}

TEST_CASE("durations in the unit that keeps them readable", "[sim][format]") {
  CHECK(duration(9000) == "2.5 h");
  CHECK(duration(300) == "5 min");
  CHECK(duration(119) == "119.0 s");
  CHECK(duration(2.5) == "2.50 s");
  CHECK(duration(0.0123) == "12.30 ms");
  CHECK(duration(0.001) == "1.00 ms");
  CHECK(duration(1.61e-6) == "1.6 µs");
  CHECK(duration(8.76e-7) == "876 ns");
  CHECK(duration(0) == "0 ns");
  CHECK(duration(std::numeric_limits<double>::infinity()) == "inf");
}

TEST_CASE("fixed decimals, as printf writes them", "[sim][format]") {
  CHECK(fixed(3.14159, 2) == "3.14");
  CHECK(fixed(1755.4, 0) == "1755");
  CHECK(fixed(2.5, 0) == "2");  // round half to even, as printf
  CHECK(fixed(-0.25, 1) == "-0.2");
}

TEST_CASE("the shortest decimal reads back to the same double", "[sim][format]") {
  CHECK(shortest(0.1) == "0.1");
  CHECK(shortest(2.0) == "2");
  CHECK(shortest(1e-300) == "1e-300");
  for (double v : {1.0 / 3.0, 2.0 / 3.0, 1e300 / 7.0, -123456.789e-7, 5.2e-9, 0.30000000000000004})
    CHECK(std::strtod(shortest(v).c_str(), nullptr) == v);
  CHECK(shortest(1.0 / 3.0).size() <= 17 + 2);  // "0." and at most 17 digits
  CHECK(shortest(std::nan("")) == "nan");
  CHECK(shortest(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(shortest(-std::numeric_limits<double>::infinity()) == "-inf");
}
