// Query results in three formats: an aligned table for people, CSV (RFC 4180) for spreadsheets
// and JSON (an array of objects, one per row) for scripts and notebooks. Rows come out in the
// order they were added; every query that fills a Table orders its rows deterministically.
//
// Cells are SQLite values (NULL, integer, real, text). CSV and JSON carry them exactly (reals in
// their shortest round-trip form); the table rounds reals to two decimals, shows NULL as "-",
// and shortens hashes and uuids to 12 characters and long text to its column's limit unless
// verbose, so that a row fits a terminal.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "results/sqlite.hpp"

namespace tunebed::cli {

enum class Format { table, csv, json };
enum class Verbosity { quiet, normal, verbose };

// "table", "csv" or "json"; anything else is a UsageError that lists the three.
Format parse_format(std::string_view name);

using Cell = results::Value;

struct Column {
  std::string name;
  std::size_t max_width = 0;  // table only: longer text is cut unless verbose; 0: no limit
  bool ellipsis = true;       // mark a cut with "..." (ids are cut silently, as git does)
};

// A hash or uuid column: 12 characters identify a kernel or run among thousands.
Column id_column(std::string name);

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows = {};

  // Throws std::logic_error unless ROW has one cell per column.
  void add_row(std::vector<Cell> row);
};

// Writes TABLE to OUT. Quiet drops the table's header line (CSV and JSON keep their keys).
void write_table(const Table& table, Format format, Verbosity verbosity, std::ostream& out);

}  // namespace tunebed::cli
