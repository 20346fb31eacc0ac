// Output files: doubles in shortest round-trip form, never NaN or inf, exact
// twins, and RFC 4180 quoting.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>

#include "sim/output.hpp"

namespace rnicsim::sim {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path temp_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("output_test." + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d;
}

TEST(FormatDouble, ShortestTextThatReadsBackExactly) {
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(5.0), "5.0");
  EXPECT_EQ(format_double(-0.0), "-0.0");
  EXPECT_EQ(format_double(1e-5), "1e-05");
  EXPECT_EQ(format_double(1e16), "1e+16");
  EXPECT_EQ(format_double(0.00586911234567), "0.00586911234567");
  // nlohmann's own serializer writes 355.84181967340197: a digit more than needed.
  EXPECT_EQ(format_double(355.841819673402), "355.841819673402");
  EXPECT_NE(nlohmann::json(355.841819673402).dump(), "355.841819673402");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double v = std::uniform_real_distribution<double>(-1e6, 1e6)(rng) * std::pow(10.0, i % 40 - 20);
    EXPECT_EQ(std::strtod(format_double(v).c_str(), nullptr), v);
    EXPECT_EQ(std::strtod(format_double(v, DoubleForm::Hex).c_str(), nullptr), v);
  }
}

TEST(FormatDouble, NotFiniteIsNoNumber) {
  for (double v : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    EXPECT_EQ(format_double(v), "");
    EXPECT_EQ(format_double(v, DoubleForm::Hex), "");
  }
}

TEST(WriteJson, NumbersExactNaNAsNullStringsEscaped) {
  Json j = output_document("test");
  j["ratio"] = 355.841819673402;
  j["whole"] = 3.0;
  j["big"] = uint64_t{18446744073709551615u};
  j["nan"] = std::nan("");
  j["inf"] = HUGE_VAL;
  j["name"] = "a,\"b\"\n";
  j["list"] = {1, 2.5, "x"};
  j["empty"] = Json::object();
  std::ostringstream out;
  write_json(out, j);
  EXPECT_EQ(out.str(),
            "{\n  \"schema\": \"test\",\n  \"schema_version\": 1,\n  \"ratio\": 355.841819673402,\n"
            "  \"whole\": 3.0,\n  \"big\": 18446744073709551615,\n  \"nan\": null,\n  \"inf\": null,\n"
            "  \"name\": \"a,\\\"b\\\"\\n\",\n  \"list\": [1, 2.5, \"x\"],\n  \"empty\": {}\n}\n");
  EXPECT_EQ(Json::parse(out.str())["ratio"].get<double>(), 355.841819673402);
  std::ostringstream hex;
  write_json(hex, j, DoubleForm::Hex);
  EXPECT_NE(hex.str().find("\"whole\": \"0x1.8p+1\""), std::string::npos) << hex.str();
  EXPECT_NE(hex.str().find("\"nan\": null"), std::string::npos);
  EXPECT_NE(hex.str().find("\"big\": 18446744073709551615"), std::string::npos);
}

TEST(WriteJson, BadUtf8IsReplacedNotThrown) {
  std::ostringstream out;
  write_json(out, Json{{"name", std::string("a\xff")}});
  EXPECT_NE(out.str().find("a\xef\xbf\xbd"), std::string::npos);
}

TEST(Csv, Rfc4180Quoting) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("write,stream"), "\"write,stream\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, FileAndExactTwin) {
  const auto dir = temp_dir();
  {
    CsvWriter csv(dir / "t.csv", true);
    csv.text("name").text("x").text("n").end_row();
    csv.text("a,b").number(0.1 + 0.2).number(uint64_t{42}).end_row();
    csv.text("c").number(std::nan("")).empty().end_row();
  }
  EXPECT_EQ(read_all(dir / "t.csv"), "name,x,n\n\"a,b\",0.30000000000000004,42\nc,,\n");
  EXPECT_EQ(read_all(dir / "t.csv.exact"), "name,x,n\n\"a,b\",0x1.3333333333334p-2,42\nc,,\n");
  write_json_file(dir / "t.json", Json{{"x", 0.5}}, false);
  EXPECT_EQ(read_all(dir / "t.json"), "{\n  \"x\": 0.5\n}\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.json.exact"));
  EXPECT_THROW(CsvWriter(dir / "missing" / "t.csv", false), std::runtime_error);
  std::filesystem::remove_all(dir);
}

// A cell made once and put in many rows writes what number() writes, in the
// file and its twin: the time series write their columns that way.
TEST(Csv, ACellWritesWhatItsNumberWrites) {
  const auto dir = temp_dir();
  const double doubles[] = {0.1 + 0.2, -0.0, 0.0, 1e300, std::nan(""), 42.0};
  {
    CsvWriter by_number(dir / "n.csv", true), by_cell(dir / "c.csv", true);
    for (double v : doubles) {
      by_number.number(v).number(uint64_t{7}).number(int64_t{-3}).end_row();
      const CsvWriter::Cell c = by_cell.cell(v);
      by_cell.put(c).put(by_cell.cell(uint64_t{7})).put(by_cell.cell(int64_t{-3})).end_row();
      by_cell.put(c).end_row();  // again, unchanged
      by_number.number(v).end_row();
    }
  }
  EXPECT_EQ(read_all(dir / "c.csv"), read_all(dir / "n.csv"));
  EXPECT_EQ(read_all(dir / "c.csv.exact"), read_all(dir / "n.csv.exact"));
  EXPECT_NE(read_all(dir / "c.csv").find("\n-0.0,7,-3\n-0.0\n0.0,7,-3\n"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnicsim::sim
