// A thin RAII layer over the sqlite3 C API: a connection (Db), a prepared statement (Statement)
// and a write transaction (Transaction). It adds nothing SQLite does not do; it only makes every
// failure an exception that carries SQLite's own message and the SQL that failed, and makes
// handles impossible to leak.
//
//   Db db = Db::open(path, SQLITE_OPEN_READWRITE);
//   Transaction tx(db);
//   Statement st = db.prepare("INSERT INTO kernels(hash, ast) VALUES(?, ?)");
//   st.bind_all(hash, ast).run();
//   tx.commit();
//
// Bound values and columns use SQLite's own storage classes: NULL, INTEGER, REAL and TEXT.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

struct sqlite3;
struct sqlite3_stmt;

namespace tunebed::results {

// One SQLite value: NULL, INTEGER, REAL or TEXT (tunebed stores no BLOBs).
using Value = std::variant<std::monostate, int64_t, double, std::string>;

// A failed SQLite call: SQLite's message, its result code and the SQL being run (if any).
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message, const std::string& sql);
  int code;
  std::string message;  // SQLite's message alone, without the SQL
};

class Statement;

class Db {
 public:
  // Opens PATH with sqlite3_open_v2 FLAGS (SQLITE_OPEN_*); URI filenames are always enabled.
  static Db open(const std::string& path, int flags);
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs a script of one or more statements that return no rows.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  // The first column of the first row of a query, as text ("" when no row or NULL).
  std::string query_text(std::string_view sql);
  int64_t query_int(std::string_view sql);

  int64_t last_insert_rowid() const;
  int64_t changes() const;
  bool in_transaction() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Db& db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite. Optional values bind NULL when empty.
  Statement& bind(int index, std::nullopt_t);
  Statement& bind(int index, double v);
  Statement& bind(int index, std::string_view v);
  Statement& bind(int index, const Value& v);
  template <class I>
  requires std::is_integral_v<I> Statement& bind(int index, I v) {
    return bind_int64(index, static_cast<int64_t>(v));
  }
  Statement& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
  Statement& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  template <class T>
  Statement& bind(int index, const std::optional<T>& v) {
    return v ? bind(index, *v) : bind(index, std::nullopt);
  }
  // Binds its arguments to parameters 1, 2, ... after resetting the statement.
  template <class... A>
  Statement& bind_all(const A&... args) {
    reset();
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }
  int parameter_index(const char* name) const;  // ":name" -> index, 0 when absent

  // Advances to the next row: true when a row is ready, false when the statement is done.
  bool step();
  // Steps to completion, for statements that return no rows; resets the statement first.
  void run();
  void reset();

  int column_count() const;
  std::string column_name(int i) const;
  bool is_null(int i) const;
  int64_t column_int(int i) const;
  double column_double(int i) const;
  std::string column_text(int i) const;
  Value column_value(int i) const;
  template <class T>
  std::optional<T> column_opt(int i) const;

 private:
  Statement& bind_int64(int index, int64_t v);
  [[noreturn]] void fail(int rc) const;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool fresh_ = true;  // no step since the last reset
};

template <>
inline std::optional<int64_t> Statement::column_opt(int i) const {
  return is_null(i) ? std::nullopt : std::optional(column_int(i));
}
template <>
inline std::optional<double> Statement::column_opt(int i) const {
  return is_null(i) ? std::nullopt : std::optional(column_double(i));
}
template <>
inline std::optional<std::string> Statement::column_opt(int i) const {
  return is_null(i) ? std::nullopt : std::optional(column_text(i));
}

// A write transaction. BEGIN IMMEDIATE takes the write lock up front, so a second process waits
// in busy_timeout for its turn instead of failing with SQLITE_BUSY halfway through (a deferred
// transaction that later upgrades to a writer cannot wait). Rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(Db& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool open_ = true;
};

}  // namespace tunebed::results
