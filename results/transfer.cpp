// Moving rows between tuning databases: export to JSON lines, import from them, and merge.
//
// Import and merge are one operation fed from two sources: rows arrive table by table, parents
// first, each with the id it had in its source, and RowImporter inserts those not yet present
// (by natural key: fingerprint, hash, run uuid, run + seq), remembering the local id of every
// source id so that a child's references can be rewritten. The schema's triggers then rebuild
// `best` and `quarantine` from the imported candidates exactly as they were built at the source,
// so neither table needs to travel.
#include <filesystem>
#include <istream>
#include <map>
#include <ostream>
#include <set>

#include "results/json_lines.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::results {
namespace {

struct Reference {
  std::string_view column, table;
};

struct TableSpec {
  std::string_view name;
  std::vector<std::string_view> key;  // the natural key: identity across databases
  std::vector<Reference> references;  // columns holding another table's local id
  std::string_view order_by;          // a stable export order
  bool has_id = true;                 // quarantine is keyed by its natural key alone
};

// In dependency order.
const std::vector<TableSpec>& transferred_tables() {
  static const std::vector<TableSpec> tables = {
      {"devices", {"name", "arch", "driver", "compiler", "compiler_version"}, {}, "id"},
      {"kernels", {"hash"}, {}, "id"},
      {"runs", {"uuid"}, {}, "id"},
      {"candidates",
       {"run_id", "seq"},
       {{"run_id", "runs"}, {"kernel_id", "kernels"}, {"device_id", "devices"}},
       "id"},
      {"quarantine",
       {"kernel_id", "device_id", "opts"},
       {{"kernel_id", "kernels"}, {"device_id", "devices"}, {"candidate_id", "candidates"}},
       "kernel_id, device_id, opts",
       false},
  };
  return tables;
}

const TableSpec& spec_of(std::string_view table) {
  for (const TableSpec& t : transferred_tables()) {
    if (t.name == table) return t;
  }
  std::string names;
  for (const TableSpec& t : transferred_tables()) names += (names.empty() ? "" : ", ") + std::string(t.name);
  throw DbError("unknown table '" + std::string(table) + "' (expected one of " + names + ")");
}

template <class Row>  // JsonRow or const JsonRow
auto* find(Row& row, std::string_view column) {
  using Ptr = decltype(&row.front().second);
  for (auto& [name, value] : row) {
    if (name == column) return Ptr(&value);
  }
  return Ptr(nullptr);
}

// Calls VISIT(table, row) for every row of every transferred table of DB, in export order.
template <class Visit>
void for_each_row(Db& db, Visit&& visit) {
  for (const TableSpec& t : transferred_tables()) {
    Statement st =
        db.prepare("SELECT * FROM " + std::string(t.name) + " ORDER BY " + std::string(t.order_by));
    while (st.step()) {
      JsonRow row;
      for (int i = 0; i < st.column_count(); ++i) row.emplace_back(st.column_name(i), st.column_value(i));
      visit(t, std::move(row));
    }
  }
}

class RowImporter {
 public:
  explicit RowImporter(Db& db) : db_(db) {}

  // Rows that follow come from SOURCE: its ids are its own, and its runs are marked as from it.
  void start_source(std::string source) {
    provenance_ = std::move(source);
    ids_.clear();
  }

  void add(const TableSpec& t, JsonRow row) {
    std::optional<int64_t> source_id;
    if (Value* id = find(row, "id")) {
      if (!std::holds_alternative<int64_t>(*id))
        throw DbError(std::string(t.name) + " row has a non-integer id");
      source_id = std::get<int64_t>(*id);
      std::erase_if(row, [](const auto& kv) { return kv.first == "id"; });
    }
    for (const Reference& ref : t.references) {
      Value* v = find(row, ref.column);
      if (!v || std::holds_alternative<std::monostate>(*v)) continue;
      *v = local_id(ref, *v);
    }
    if (t.name == "runs") mark_provenance(row);
    check_columns(t, row);

    std::optional<int64_t> existing = lookup(t, row);
    if (existing && t.name == "runs") finish_if_running(*existing, row);
    if (!existing) insert(t, row);
    count(existing ? skipped_ : added_, t.name);
    if (source_id) ids_[std::string(t.name)][*source_id] = existing ? *existing : db_.last_insert_rowid();
  }

  TransferStats stats() const {
    using Counts = std::vector<std::pair<std::string, int64_t>>;
    return {Counts(added_.begin(), added_.end()), Counts(skipped_.begin(), skipped_.end())};
  }

 private:
  int64_t local_id(const Reference& ref, const Value& v) {
    const auto& ids = ids_[std::string(ref.table)];
    auto it = std::holds_alternative<int64_t>(v) ? ids.find(std::get<int64_t>(v)) : ids.end();
    if (it == ids.end()) {
      throw DbError(std::string(ref.column) + " refers to a " + std::string(ref.table) +
                    " row that did not come before it");
    }
    return it->second;
  }

  void check_columns(const TableSpec& t, const JsonRow& row) {
    auto& known = columns_[std::string(t.name)];
    if (known.empty()) {
      Statement info = db_.prepare("SELECT name FROM pragma_table_info(?)");
      info.bind_all(t.name);
      while (info.step()) known.insert(info.column_text(0));
    }
    for (const auto& [column, value] : row) {
      if (!known.contains(column))
        throw DbError("table " + std::string(t.name) + " has no column '" + column + "'");
    }
    for (std::string_view k : t.key) {
      if (!find(row, k)) {
        throw DbError(std::string(t.name) + " row lacks its key column '" + std::string(k) + "'");
      }
    }
  }

  // The local row with the same natural key, if any: its id (0 for tables without ids).
  std::optional<int64_t> lookup(const TableSpec& t, const JsonRow& row) {
    std::string sql =
        std::string("SELECT ") + (t.has_id ? "id" : "0") + " FROM " + std::string(t.name) + " WHERE ";
    for (size_t i = 0; i < t.key.size(); ++i) sql += (i ? " AND " : "") + std::string(t.key[i]) + " = ?";
    Statement& st = cached(sql);
    st.reset();
    for (size_t i = 0; i < t.key.size(); ++i) st.bind(static_cast<int>(i + 1), *find(row, t.key[i]));
    std::optional<int64_t> id;
    if (st.step()) id = st.column_int(0);
    st.reset();
    return id;
  }

  void insert(const TableSpec& t, const JsonRow& row) {
    std::string columns, params;
    for (const auto& [column, value] : row) {
      columns += (columns.empty() ? "" : ", ") + column;
      params += params.empty() ? "?" : ", ?";
    }
    Statement& st =
        cached("INSERT INTO " + std::string(t.name) + " (" + columns + ") VALUES (" + params + ")");
    st.reset();
    for (size_t i = 0; i < row.size(); ++i) st.bind(static_cast<int>(i + 1), row[i].second);
    st.run();
  }

  // A run keeps the file it first came from; one recorded at the source names the source.
  void mark_provenance(JsonRow& row) {
    Value* from = find(row, "imported_from");
    if (!from) from = &row.emplace_back("imported_from", std::monostate{}).second;
    if (std::holds_alternative<std::monostate>(*from)) *from = provenance_;
  }

  // A run copied while it was still running may have finished at its source since: adopt the end.
  void finish_if_running(int64_t local, const JsonRow& row) {
    const Value* status = find(row, "status");
    const Value* ended = find(row, "ended_at");
    if (!status || !ended) return;
    Statement& st = cached("UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND status = 'running'");
    st.bind_all(*status, *ended, local).run();
  }

  Statement& cached(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) it = statements_.emplace(sql, db_.prepare(sql)).first;
    return it->second;
  }

  static void count(std::map<std::string, int64_t>& counts, std::string_view table) {
    ++counts[std::string(table)];
  }

  Db& db_;
  std::string provenance_;
  std::map<std::string, std::map<int64_t, int64_t>> ids_;  // table -> source id -> local id
  std::map<std::string, std::set<std::string>> columns_;
  std::map<std::string, Statement> statements_;
  std::map<std::string, int64_t> added_, skipped_;
};

}  // namespace

void TuningDb::export_jsonl(std::ostream& out) {
  // One read transaction, so the export is a consistent snapshot even while others write.
  db_.exec("BEGIN");
  try {
    for_each_row(db_, [&](const TableSpec& t, JsonRow row) {
      row.insert(row.begin(), {"table", std::string(t.name)});
      out << to_json(row) << '\n';
    });
  } catch (...) {
    db_.exec("ROLLBACK");
    throw;
  }
  db_.exec("COMMIT");
}

TransferStats TuningDb::import_jsonl(std::istream& in, const std::string& source) {
  Transaction tx(db_);
  RowImporter importer(db_);
  importer.start_source(source);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      JsonRow row = parse_json_object(line);
      Value* table = find(row, "table");
      if (!table || !std::holds_alternative<std::string>(*table)) throw DbError("no \"table\" field");
      const TableSpec& spec = spec_of(std::get<std::string>(*table));
      std::erase_if(row, [](const auto& kv) { return kv.first == "table"; });
      importer.add(spec, std::move(row));
    } catch (const std::exception& e) {
      throw DbError(source + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  tx.commit();
  return importer.stats();
}

TransferStats merge(const std::string& out, const std::vector<std::string>& inputs) {
  TuningDb target = TuningDb::open(out, TuningDb::Mode::create);
  RowImporter importer(raw_connection(target));
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(input, out, ec)) throw DbError("cannot merge " + input + " into itself");
    TuningDb source = TuningDb::open_read_only(input);
    Transaction tx(raw_connection(target));
    importer.start_source(std::filesystem::absolute(input).string());
    raw_connection(source).exec("BEGIN");  // a consistent snapshot of the input
    for_each_row(raw_connection(source), [&](const TableSpec& t, JsonRow row) { importer.add(t, std::move(row)); });
    raw_connection(source).exec("COMMIT");
    tx.commit();
  }
  return importer.stats();
}

}  // namespace tunebed::results
