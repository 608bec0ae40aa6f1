// The findings table: record with dedupe, read back, replace the input after minimising.
#include "results/findings.hpp"

#include <stdexcept>

#include "results/tuning_db.hpp"

namespace tunebed::results {
namespace {

// Inputs are stored as lowercase hex: arbitrary bytes survive every export and `query` format.
std::string to_hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw std::runtime_error("findings: stored input is not hex");
  };
  if (hex.size() % 2) throw std::runtime_error("findings: stored input has an odd number of hex digits");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); i++)
    out[i] = static_cast<char>((nibble(hex[2 * i]) << 4) | nibble(hex[2 * i + 1]));
  return out;
}

constexpr std::string_view kColumns =
    "id, target, kind, signature, input, detail, max_error, first_seen, last_seen, count, minimized";

Finding read_row(Statement& st) {
  Finding f;
  f.id = st.column_int(0);
  f.target = st.column_text(1);
  f.kind = st.column_text(2);
  f.signature = st.column_text(3);
  f.input = from_hex(st.column_text(4));
  f.detail = st.column_text(5);
  f.max_error = st.column_opt<double>(6);
  f.first_seen = st.column_text(7);
  f.last_seen = st.column_text(8);
  f.count = st.column_int(9);
  f.minimized = st.column_int(10) != 0;
  return f;
}

}  // namespace

std::string_view check_finding_kind(std::string_view kind) {
  for (std::string_view k : {"crash", "wrong", "timeout", "leak"})
    if (kind == k) return k;
  throw std::invalid_argument("unknown finding kind '" + std::string(kind) +
                              "' (crash, wrong, timeout or leak)");
}

Findings::Recorded Findings::record(const FindingReport& r) {
  check_finding_kind(r.kind);
  const std::string now = utc_now(), hex = to_hex(r.input);
  Transaction tx(db_);
  Statement find =
      db_.prepare("SELECT id, length(input) FROM findings WHERE target = ? AND kind = ? AND signature = ?");
  if (find.bind_all(r.target, r.kind, r.signature).step()) {
    const int64_t id = find.column_int(0);
    const bool smaller = static_cast<int64_t>(hex.size()) < find.column_int(1);
    db_.prepare(
           "UPDATE findings SET count = count + 1, last_seen = ?2,"
           " input = CASE WHEN ?3 THEN ?4 ELSE input END, detail = CASE WHEN ?3 THEN ?5 ELSE detail END,"
           " max_error = CASE WHEN ?3 THEN ?6 ELSE max_error END WHERE id = ?1")
        .bind_all(id, now, smaller ? 1 : 0, hex, r.detail, r.max_error)
        .run();
    tx.commit();
    return {id, false};
  }
  db_.prepare(
         "INSERT INTO findings (target, kind, signature, input, detail, max_error, first_seen, last_seen)"
         " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .bind_all(r.target, r.kind, r.signature, hex, r.detail, r.max_error, now, now)
      .run();
  const int64_t id = db_.last_insert_rowid();
  tx.commit();
  return {id, true};
}

std::optional<Finding> Findings::get(int64_t id) {
  Statement st = db_.prepare("SELECT " + std::string(kColumns) + " FROM findings WHERE id = ?");
  if (!st.bind_all(id).step()) return std::nullopt;
  return read_row(st);
}

std::vector<Finding> Findings::list() {
  Statement st = db_.prepare("SELECT " + std::string(kColumns) + " FROM findings ORDER BY id");
  std::vector<Finding> out;
  while (st.step()) out.push_back(read_row(st));
  return out;
}

void Findings::replace_input(int64_t id, const std::string& input, const std::string& detail) {
  Transaction tx(db_);
  db_.prepare("UPDATE findings SET input = ?, detail = ?, minimized = 1 WHERE id = ?")
      .bind_all(to_hex(input), detail, id)
      .run();
  if (db_.changes() == 0) throw std::invalid_argument("no finding " + std::to_string(id));
  tx.commit();
}

}  // namespace tunebed::results
