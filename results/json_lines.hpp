// The small subset of JSON that tunebed's database rows need, written and read without a
// library: flat objects whose values are strings, numbers, true/false or null (one per line in
// export files), and arrays of numbers (timing samples).
//
// Numbers round-trip exactly: a double is written in its shortest form that reads back to the
// same bits, and an integer stays an integer. JSON has no infinities, so +-inf are written as
// 1e999 / -1e999, which every JSON reader parses back as +-inf; NaN is written as null.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/sqlite.hpp"

namespace tunebed::results {

// A flat JSON object, keys in their written order.
using JsonRow = std::vector<std::pair<std::string, Value>>;

std::string to_json(const JsonRow& row);
// Parses one flat object; true/false read as 1/0. Throws std::invalid_argument naming the column
// (1-based) and what was expected there.
JsonRow parse_json_object(std::string_view text);

std::string json_number(double v);
std::string json_numbers(const std::vector<double>& values);    // "[1.5,2,3.25]"
std::vector<double> parse_json_numbers(std::string_view text);  // null reads as NaN

}  // namespace tunebed::results
