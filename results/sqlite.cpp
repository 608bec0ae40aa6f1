#include "results/sqlite.hpp"

#include <sqlite3.h>

#include <utility>

namespace tunebed::results {

SqliteError::SqliteError(int code, const std::string& message, const std::string& sql)
    : std::runtime_error(sql.empty() ? message : message + " [SQL: " + sql + "]"),
      code(code),
      message(message) {}

// ---------------------------------------------------------------------------------------------
// Db

Db Db::open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw SqliteError(rc, "cannot open " + path + ": " + msg, "");
  }
  sqlite3_extended_result_codes(db, 1);
  return Db(db, path);
}

Db::Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

// close_v2 defers the close until the last statement is finalized, so destruction order between
// a Db and its Statements does not matter.
Db::~Db() { sqlite3_close_v2(db_); }

void Db::exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(rc, msg, text);
  }
}

Statement Db::prepare(std::string_view sql) { return Statement(*this, sql); }

std::string Db::query_text(std::string_view sql) {
  Statement st = prepare(sql);
  return st.step() && !st.is_null(0) ? st.column_text(0) : "";
}

int64_t Db::query_int(std::string_view sql) {
  Statement st = prepare(sql);
  return st.step() ? st.column_int(0) : 0;
}

int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int64_t Db::changes() const { return sqlite3_changes64(db_); }
bool Db::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

// ---------------------------------------------------------------------------------------------
// Statement

Statement::Statement(Db& db, std::string_view sql) : db_(db.handle()) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, &tail);
  if (rc != SQLITE_OK) throw SqliteError(rc, sqlite3_errmsg(db_), std::string(sql));
  if (tail && std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    sqlite3_finalize(stmt_);
    throw SqliteError(SQLITE_MISUSE, "more than one statement given to prepare", std::string(sql));
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), fresh_(other.fresh_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    fresh_ = other.fresh_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::fail(int rc) const {
  throw SqliteError(rc, sqlite3_errmsg(db_), stmt_ ? sqlite3_sql(stmt_) : "");
}

Statement& Statement::bind(int index, std::nullopt_t) {
  if (int rc = sqlite3_bind_null(stmt_, index); rc != SQLITE_OK) fail(rc);
  return *this;
}

Statement& Statement::bind_int64(int index, int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, index, v); rc != SQLITE_OK) fail(rc);
  return *this;
}

Statement& Statement::bind(int index, double v) {
  if (int rc = sqlite3_bind_double(stmt_, index, v); rc != SQLITE_OK) fail(rc);
  return *this;
}

Statement& Statement::bind(int index, std::string_view v) {
  int rc = sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(rc);
  return *this;
}

Statement& Statement::bind(int index, const Value& v) {
  return std::visit(
      [&](const auto& x) -> Statement& {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return bind(index, std::nullopt);
        } else {
          return bind(index, x);
        }
      },
      v);
}

int Statement::parameter_index(const char* name) const { return sqlite3_bind_parameter_index(stmt_, name); }

bool Statement::step() {
  fresh_ = false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // step() reports the failure; reset() would report it again, so clear it without checking.
  std::string msg = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  throw SqliteError(rc, msg, sqlite3_sql(stmt_));
}

void Statement::run() {
  if (!fresh_) {
    sqlite3_reset(stmt_);
    fresh_ = true;
  }
  while (step()) {
  }
}

// Keeps the bindings: bind_all rebinds every parameter anyway.
void Statement::reset() {
  sqlite3_reset(stmt_);
  fresh_ = true;
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int i) const { return sqlite3_column_name(stmt_, i); }
bool Statement::is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
int64_t Statement::column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Statement::column_double(int i) const { return sqlite3_column_double(stmt_, i); }

std::string Statement::column_text(int i) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return text ? std::string(text, sqlite3_column_bytes(stmt_, i)) : std::string();
}

Value Statement::column_value(int i) const {
  switch (sqlite3_column_type(stmt_, i)) {
    case SQLITE_INTEGER:
      return column_int(i);
    case SQLITE_FLOAT:
      return column_double(i);
    case SQLITE_NULL:
      return std::monostate{};
    default:
      return column_text(i);
  }
}

// ---------------------------------------------------------------------------------------------
// Transaction

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  // A failed statement may already have rolled the transaction back (SQLITE_FULL, SQLITE_IOERR).
  if (open_ && db_.in_transaction()) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace tunebed::results
