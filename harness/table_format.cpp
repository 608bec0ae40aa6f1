#include "harness/table_format.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <variant>

#include "harness/cli.hpp"
#include "results/json_lines.hpp"

namespace tunebed::cli {
namespace {

constexpr std::size_t kIdWidth = 12;

bool is_number(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

// The exact text of a cell, as CSV writes it: NULL is an empty field.
std::string exact_text(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return results::json_number(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

// Counts UTF-8 code points, so that non-ASCII text (opts never have any, errors might) aligns.
std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string table_text(const Cell& cell, const Column& column, Verbosity verbosity) {
  if (std::holds_alternative<std::monostate>(cell)) return "-";
  if (const auto* d = std::get_if<double>(&cell)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", *d);
    return buf;
  }
  std::string text = exact_text(cell);
  // One line per row: a multi-line compiler error shows its first line.
  if (auto nl = text.find('\n'); nl != std::string::npos) text = text.substr(0, nl) + " ...";
  if (verbosity != Verbosity::verbose && column.max_width > 3 && display_width(text) > column.max_width) {
    std::size_t keep = column.ellipsis ? column.max_width - 3 : column.max_width;
    std::size_t cut = 0;
    for (std::size_t points = 0; cut < text.size(); ++cut) {
      if ((text[cut] & 0xC0) != 0x80 && points++ == keep) break;
    }
    text = text.substr(0, cut) + (column.ellipsis ? "..." : "");
  }
  return text;
}

void write_aligned(const Table& table, Verbosity verbosity, std::ostream& out) {
  const std::size_t n = table.columns.size();
  std::vector<std::vector<std::string>> texts;
  std::vector<std::size_t> widths(n, 0);
  // A column of numbers (NULLs aside) is right-aligned, its "-" and header too.
  std::vector<bool> numeric(n, false), text(n, false);
  if (verbosity != Verbosity::quiet) {
    for (std::size_t c = 0; c < n; ++c) widths[c] = display_width(table.columns[c].name);
  }
  for (const auto& row : table.rows) {
    auto& line = texts.emplace_back();
    for (std::size_t c = 0; c < n; ++c) {
      line.push_back(table_text(row[c], table.columns[c], verbosity));
      widths[c] = std::max(widths[c], display_width(line.back()));
      if (is_number(row[c])) numeric[c] = true;
      if (std::holds_alternative<std::string>(row[c])) text[c] = true;
    }
  }
  for (std::size_t c = 0; c < n; ++c) numeric[c] = numeric[c] && !text[c];
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < n; ++c) {
      std::string pad(widths[c] - display_width(cells[c]), ' ');
      line += numeric[c] ? pad + cells[c] : cells[c] + pad;
      if (c + 1 < n) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  if (verbosity != Verbosity::quiet) {
    std::vector<std::string> header;
    for (const auto& column : table.columns) header.push_back(column.name);
    emit(header);
  }
  for (const auto& line : texts) emit(line);
}

// RFC 4180: a field holding a comma, a quote or a line break is quoted, quotes doubled; CRLF ends
// each record. Opts strings hold commas, so this matters for the most common column.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void write_csv(const Table& table, std::ostream& out) {
  auto emit = [&](const std::vector<std::string>& fields) {
    for (std::size_t c = 0; c < fields.size(); ++c) out << (c ? "," : "") << csv_field(fields[c]);
    out << "\r\n";
  };
  std::vector<std::string> header;
  for (const auto& column : table.columns) header.push_back(column.name);
  emit(header);
  for (const auto& row : table.rows) {
    std::vector<std::string> fields;
    for (const auto& cell : row) fields.push_back(exact_text(cell));
    emit(fields);
  }
}

void write_json(const Table& table, std::ostream& out) {
  if (table.rows.empty()) {
    out << "[]\n";
    return;
  }
  out << "[\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    results::JsonRow object;
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      object.emplace_back(table.columns[c].name, table.rows[r][c]);
    out << "  " << results::to_json(object) << (r + 1 < table.rows.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

}  // namespace

Format parse_format(std::string_view name) {
  if (name == "table") return Format::table;
  if (name == "csv") return Format::csv;
  if (name == "json") return Format::json;
  throw UsageError("unknown format '" + std::string(name) + "' (expected table, csv or json)");
}

Column id_column(std::string name) { return {std::move(name), kIdWidth, false}; }

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size()) {
    throw std::logic_error("table row has " + std::to_string(row.size()) + " cells for " +
                           std::to_string(columns.size()) + " columns");
  }
  rows.push_back(std::move(row));
}

void write_table(const Table& table, Format format, Verbosity verbosity, std::ostream& out) {
  switch (format) {
    case Format::table:
      write_aligned(table, verbosity, out);
      break;
    case Format::csv:
      write_csv(table, out);
      break;
    case Format::json:
      write_json(table, out);
      break;
  }
}

}  // namespace tunebed::cli
