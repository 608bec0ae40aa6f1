// The JSON subset of export files: every flat row and every array of numbers round-trips exactly,
// and malformed text is an error that says where.
#include "results/json_lines.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>

namespace tunebed::results {
namespace {

RC_GTEST_PROP(JsonLines, any_flat_row_round_trips_exactly, (std::string text, int64_t integer, double real)) {
  RC_PRE(!std::isnan(real));  // NaN is written as null, by design
  JsonRow row = {
      {"text", text}, {"integer", integer}, {"real", real}, {"null", std::monostate{}}, {text, text}};
  RC_PRE(text != "text" && text != "integer" && text != "real" && text != "null");
  JsonRow back = parse_json_object(to_json(row));
  RC_ASSERT(back.size() == row.size());
  for (size_t i = 0; i < row.size(); ++i) {
    RC_ASSERT(back[i].first == row[i].first);
    // An integral double may come back as an integer: the same number, as SQLite's REAL
    // columns store it.
    if (std::holds_alternative<double>(row[i].second) && std::holds_alternative<int64_t>(back[i].second)) {
      RC_ASSERT(static_cast<double>(std::get<int64_t>(back[i].second)) == std::get<double>(row[i].second));
    } else {
      RC_ASSERT(back[i].second == row[i].second);
    }
  }
}

RC_GTEST_PROP(JsonLines, arrays_of_finite_numbers_round_trip_bit_for_bit, (std::vector<double> values)) {
  for (double v : values) RC_PRE(std::isfinite(v));
  RC_ASSERT(parse_json_numbers(json_numbers(values)) == values);
}

TEST(JsonLines, InfinitiesAndNanHaveAJsonSpelling) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(json_numbers({inf, -inf, std::nan(""), 1.5}), "[1e999,-1e999,null,1.5]");
  std::vector<double> back = parse_json_numbers("[1e999,-1e999,null,1.5]");
  EXPECT_EQ(back[0], inf);
  EXPECT_EQ(back[1], -inf);
  EXPECT_TRUE(std::isnan(back[2]));
}

TEST(JsonLines, EscapesAndUnicodeEscapesDecode) {
  JsonRow row = parse_json_object(R"({"s":"a\"b\\c\/d\n\t\u00b5\ud83d\ude00"})");
  EXPECT_EQ(std::get<std::string>(row[0].second), "a\"b\\c/d\n\tµ😀");
  EXPECT_EQ(to_json({{"c", std::string("\x01\n")}}), R"({"c":"\u0001\n"})");
}

TEST(JsonLines, MalformedTextNamesTheColumn) {
  auto error = [](std::string_view text) -> std::string {
    try {
      parse_json_object(text);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error(R"({"a":1,})"), "column 8: expected '\"'");
  EXPECT_EQ(error(R"({"a":tru})"), "column 6: expected a string, number, true, false or null, not 't'");
  EXPECT_EQ(error(R"({"a":1} x)"), "column 9: unexpected text after the object");
  EXPECT_EQ(error(R"({"a":1,"a":2})"), "column 8: duplicate key \"a\"");
  EXPECT_EQ(error(R"({"a":1.2.3})"), "column 6: malformed number '1.2.3'");
  EXPECT_EQ(error(R"({"a":"\q"})"), "column 8: unknown escape '\\q'");
  EXPECT_EQ(error(R"({"a":[1]})"), "column 6: expected a string, number, true, false or null, not '['");
}

}  // namespace
}  // namespace tunebed::results
