// Moving rows between tuning databases: export to JSON lines, import from them, and merge.
//
// Import and merge are one operation fed from two sources: rows arrive table by table, parents
// first, each with the id it had in its source, and RowImporter inserts those not yet present
// (by natural key: fingerprint, hash, run uuid, run + seq), remembering the local id of every
// source id so that a child's references can be rewritten. The schema's trigger rebuilds
// `quarantine` from the imported candidates as it was built at the source. The checks, the
// demotions and the winners' confidence travel as rows (the first copy of a key stays).
//
// `best` travels too: tune() declares a winner by a test on interleaved re-timings
// (search/decide.hpp), not by the lowest median, which is all the candidates' trigger knows. Each
// (kernel, device, action space) keeps, of the winners declared for it in the destination and in
// every source, the one declared last (its run ended last), as a retune replaces a stored winner;
// a demoted candidate is never served, whichever database demoted it.
#include <algorithm>
#include <filesystem>
#include <istream>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

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
      {"kernel_checks",
       {"kernel_id", "device_id"},
       {{"kernel_id", "kernels"}, {"device_id", "devices"}},
       "kernel_id, device_id",
       false},
      {"demotions", {"candidate_id"}, {{"candidate_id", "candidates"}}, "candidate_id", false},
      {"winner_confidence", {"candidate_id"}, {{"candidate_id", "candidates"}}, "candidate_id", false},
      {"best",
       {"kernel_id", "device_id", "action_space_version"},
       {{"kernel_id", "kernels"}, {"device_id", "devices"}, {"candidate_id", "candidates"}},
       "kernel_id, device_id, action_space_version",
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
  // Starts from the destination's declared winners.
  explicit RowImporter(Db& db) : db_(db) {
    Statement st = db_.prepare("SELECT kernel_id, device_id, action_space_version, candidate_id FROM best");
    while (st.step())
      declared_[{st.column_int(0), st.column_int(1), st.column_text(2)}].push_back(st.column_int(3));
  }

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
    if (t.name == "best") return declare(row);

    std::optional<int64_t> existing = lookup(t, row);
    if (existing && t.name == "runs") finish_if_running(*existing, row);
    if (!existing) insert(t, row);
    count(existing ? skipped_ : added_, t.name);
    if (source_id) ids_[std::string(t.name)][*source_id] = existing ? *existing : db_.last_insert_rowid();
  }

  // Once a source's rows are in: each key's winner is the last declared that no database demoted;
  // a key all of whose winners were demoted, and any row the trigger pointed at a demoted
  // candidate, serves none.
  void finish() {
    for (const auto& [key, candidates] : declared_) {
      const auto& [kernel, device, version] = key;
      std::string ids;
      for (int64_t c : candidates) ids += (ids.empty() ? "" : ", ") + std::to_string(c);
      Statement latest = db_.prepare(
          "SELECT c.id FROM candidates c JOIN runs r ON r.id = c.run_id WHERE c.id IN (" + ids +
          ") AND c.id NOT IN (SELECT candidate_id FROM demotions) "
          "ORDER BY coalesce(r.ended_at, r.started_at) DESC, c.created_at DESC, c.id DESC LIMIT 1");
      if (latest.step()) {
        cached("INSERT INTO best (kernel_id, device_id, action_space_version, candidate_id) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (kernel_id, device_id, action_space_version) DO UPDATE SET candidate_id = "
               "excluded.candidate_id")
            .bind_all(kernel, device, version, latest.column_int(0))
            .run();
      } else {
        cached("DELETE FROM best WHERE kernel_id = ? AND device_id = ? AND action_space_version = ?")
            .bind_all(kernel, device, version)
            .run();
      }
    }
    db_.exec("DELETE FROM best WHERE candidate_id IN (SELECT candidate_id FROM demotions)");
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

  // A source's declared winner: one more for its key (finish() chooses).
  void declare(const JsonRow& row) {
    const auto value = [&](std::string_view column) { return *find(row, column); };
    const Value candidate = value("candidate_id"), kernel = value("kernel_id"), device = value("device_id"),
                version = value("action_space_version");
    if (!std::holds_alternative<int64_t>(candidate) || !std::holds_alternative<int64_t>(kernel) ||
        !std::holds_alternative<int64_t>(device) || !std::holds_alternative<std::string>(version))
      throw DbError("best row with a missing or mistyped column");
    std::vector<int64_t>& ids =
        declared_[{std::get<int64_t>(kernel), std::get<int64_t>(device), std::get<std::string>(version)}];
    const bool known = std::ranges::find(ids, std::get<int64_t>(candidate)) != ids.end();
    if (!known) ids.push_back(std::get<int64_t>(candidate));
    count(known ? skipped_ : added_, "best");
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
  // (kernel, device, action space) -> every candidate declared its winner, locally or by a source
  std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<int64_t>> declared_;
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
  importer.finish();
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
    importer.finish();
    tx.commit();
  }
  return importer.stats();
}

}  // namespace tunebed::results
