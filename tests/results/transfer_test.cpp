// Moving results between databases: merge without duplicates and with provenance, prune to the
// top K, and the JSON-lines export/import round trip.
#include <cmath>
#include <limits>
#include <sstream>

#include "support.hpp"

namespace tunebed::results::testing {
namespace {

class TransferTest : public DbTest {
 protected:
  // Adds candidates with the given medians (NaN: a wrong answer) to RUN.
  static void add(TuningDb& db, int64_t run, int64_t k, int64_t d, const std::string& prefix,
                  const std::vector<double>& medians) {
    CandidateWriter w(db, run);
    for (size_t i = 0; i < medians.size(); ++i) {
      std::string opts = prefix + std::to_string(i);
      if (std::isnan(medians[i]))
        w.add(failed(k, d, opts, CandidateStatus::wrong));
      else
        w.add(ok(k, d, opts, medians[i]));
    }
  }
  static int64_t duplicates(TuningDb& db) {
    return count(db,
                 "SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT r.uuid, c.seq FROM candidates c "
                 "JOIN runs r ON r.id = c.run_id)) FROM candidates");
  }
};

TEST_F(TransferTest, MergeOfOverlappingDatabasesHasNoDuplicatesAndKeepsProvenance) {
  std::string a_path = file("a.db"), b_path = file("b.db"), out = file("out.db");
  std::string run_a;
  {
    TuningDb a = TuningDb::open(a_path, TuningDb::Mode::create);
    int64_t d = a.upsert_device(cpu()), k1 = a.upsert_kernel(kernel("k1")),
            k2 = a.upsert_kernel(kernel("k2"));
    RunSpec s = spec();
    s.host = "node-a";
    results::Run r = a.begin_run(s);
    run_a = r.uuid;
    add(a, r.id, k1, d, "a", {50, 40, NAN, 45});
    add(a, r.id, k2, d, "a", {90});
  }
  std::filesystem::copy_file(a_path, b_path);  // b starts as a copy of a, then both go on
  {
    TuningDb a = TuningDb::open(a_path, TuningDb::Mode::existing);
    add(a, a.resolve_run(run_a), a.resolve_kernel("h-k1"), a.resolve_device("cpu0"), "late", {30});
    a.finish_run(a.resolve_run(run_a), RunStatus::completed);
  }
  {
    TuningDb b = TuningDb::open(b_path, TuningDb::Mode::create);
    int64_t d = b.upsert_device(cpu()), k3 = b.upsert_kernel(kernel("k3"));
    RunSpec s = spec();
    s.host = "node-b";
    results::Run r = b.begin_run(s);
    add(b, r.id, b.resolve_kernel("h-k2"), d, "b", {70, 80});
    add(b, r.id, k3, d, "b", {5});
  }

  TransferStats first = merge(out, {a_path, b_path});
  EXPECT_EQ(first.added_to("candidates"), 6 + 3);
  EXPECT_EQ(first.skipped_in("candidates"), 5) << "b's copy of a's first five candidates";
  TuningDb m = TuningDb::open(out, TuningDb::Mode::existing);
  EXPECT_EQ(count(m, "SELECT count(*) FROM devices"), 1);
  EXPECT_EQ(count(m, "SELECT count(*) FROM kernels"), 3);
  EXPECT_EQ(count(m, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(count(m, "SELECT count(*) FROM candidates"), 9);
  EXPECT_EQ(duplicates(m), 0);
  EXPECT_TRUE(m.integrity_check().empty());

  std::vector<results::Run> runs = m.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].uuid, run_a);
  EXPECT_EQ(runs[0].host, "node-a");
  EXPECT_EQ(runs[0].imported_from, std::filesystem::absolute(a_path).string());
  EXPECT_EQ(runs[0].status, RunStatus::completed);
  EXPECT_EQ(runs[1].host, "node-b");
  EXPECT_EQ(runs[1].imported_from, std::filesystem::absolute(b_path).string());

  std::vector<BestRow> best = m.best();
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].opts, "late0");  // k1: 30 beats a's 40
  EXPECT_EQ(best[1].opts, "b0");     // k2: b's 70 beats a's 90
  EXPECT_EQ(best[2].opts, "b0");     // k3

  TransferStats again = merge(out, {a_path, b_path});
  EXPECT_EQ(again.added_to("candidates"), 0);
  EXPECT_EQ(again.added_to("runs"), 0);
  EXPECT_EQ(count(m, "SELECT count(*) FROM candidates"), 9);
  // In the other order, b's stale copy of run a comes first and a's later state completes it.
  merge(file("reversed.db"), {b_path, a_path});
  TuningDb r = TuningDb::open(file("reversed.db"), TuningDb::Mode::existing);
  EXPECT_EQ(count(r, "SELECT count(*) FROM candidates"), 9);
  EXPECT_EQ(r.run(r.resolve_run(run_a)).status, RunStatus::completed);
  EXPECT_EQ(r.best().at(0).opts, "late0");
}

TEST_F(TransferTest, MergeRefusesItselfAndMissingInputs) {
  { TuningDb::open(file("a.db"), TuningDb::Mode::create); }
  EXPECT_THROW(merge(file("a.db"), {file("a.db")}), DbError);
  EXPECT_THROW(merge(file("out.db"), {file("missing.db")}), DbError);
}

TEST_F(TransferTest, PruneKeepsTheTopKOfFinishedRunsAndEveryWinner) {
  TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
  int64_t d = db.upsert_device(cpu()), k = db.upsert_kernel(kernel("k"));
  results::Run finished = db.begin_run(spec());
  add(db, finished.id, k, d, "f", {60, 20, NAN, 50, 10, 40, 30});
  {
    CandidateWriter w(db, finished.id);
    w.add(failed(k, d, "segv", CandidateStatus::crash));
  }
  db.finish_run(finished.id, RunStatus::completed);
  results::Run other_asv = db.begin_run(spec("as2"));
  add(db, other_asv.id, k, d, "x", {99});  // the slowest, but the winner under as2
  db.finish_run(other_asv.id, RunStatus::completed);
  results::Run running = db.begin_run(spec());
  add(db, running.id, k, d, "r", {70, 80});

  EXPECT_THROW(db.prune(0), DbError);
  EXPECT_EQ(db.prune(3), 5);  // f0, f2 (wrong), f3, f5 and segv; r0 and r1 stay with their run
  Statement kept = results::raw_connection(db).prepare("SELECT opts FROM candidates ORDER BY id");
  std::vector<std::string> opts;
  while (kept.step()) opts.push_back(kept.column_text(0));
  EXPECT_EQ(opts, (std::vector<std::string>{"f1", "f4", "f6", "x0", "r0", "r1"}));
  EXPECT_TRUE(db.is_quarantined(k, d, "segv")) << "quarantine outlives the pruned candidate";
  EXPECT_EQ(db.cached_best(k, d, "as1")->opts, "f4");
  EXPECT_EQ(db.cached_best(k, d, "as2")->opts, "x0");
  EXPECT_TRUE(db.integrity_check().empty());
}

// What tune() decided travels with the candidates: the declared winner (not the lowest median the
// trigger would pick), its confidence, the kernel's check and a demotion. Of two databases' winners
// the one declared last is served, and a candidate either database demoted never is.
TEST_F(TransferTest, MergeAndImportKeepTheDeclaredWinnersTheirConfidenceChecksAndDemotions) {
  const std::string a_path = file("a.db"), b_path = file("b.db");
  {
    TuningDb a = TuningDb::open(a_path, TuningDb::Mode::create);
    const int64_t d = a.upsert_device(cpu()), k = a.upsert_kernel(kernel("k")), j = a.upsert_kernel(kernel("j"));
    const results::Run r = a.begin_run(spec());
    add(a, r.id, k, d, "a", {50, 40});  // a1 has the lower median; the test kept a0
    add(a, r.id, j, d, "j", {9, 8});
    a.declare_winner(r.id, 1, {}, Confidence{.challenger_opts = "a1", .kept_incumbent = true, .p_value = 0.3, .rounds = 10});
    a.declare_winner(r.id, 4, {}, std::nullopt);  // j1
    a.record_check({.kernel_id = k, .device_id = d, .oracle = "ast-interpreter+eigen", .status = "ok"});
    a.finish_run(r.id, RunStatus::completed);
    ASSERT_EQ(a.cached_best(k, d, "as1")->opts, "a0");
  }
  {
    TuningDb b = TuningDb::open(b_path, TuningDb::Mode::create);
    const int64_t d = b.upsert_device(cpu()), k = b.upsert_kernel(kernel("k")), j = b.upsert_kernel(kernel("j"));
    const results::Run r = b.begin_run(spec());  // later than a's run
    add(b, r.id, k, d, "b", {60});
    add(b, r.id, j, d, "bj", {7});
    b.declare_winner(r.id, 1, {}, std::nullopt);  // b0, declared last for k
    b.declare_winner(r.id, 2, {}, std::nullopt);  // bj0 for j, then found wrong on re-verification
    b.demote(count(b, "SELECT id FROM candidates WHERE opts = 'bj0'"), "re-verification: wrong");
    b.finish_run(r.id, RunStatus::completed);
  }
  const auto served = [](TuningDb& db, const std::string& hash) {
    const std::optional<BestEntry> e = db.cached_best(db.resolve_kernel(hash), db.resolve_device("cpu0"), "as1");
    return e ? e->opts : "(none)";
  };

  merge(file("a_only.db"), {a_path});
  TuningDb only = TuningDb::open(file("a_only.db"), TuningDb::Mode::existing);
  EXPECT_EQ(served(only, "h-k"), "a0");  // the trigger alone would serve a1
  EXPECT_EQ(count(only, "SELECT count(*) FROM winner_confidence"), 1);
  EXPECT_EQ(count(only, "SELECT count(*) FROM kernel_checks WHERE oracle = 'ast-interpreter+eigen'"), 1);

  merge(file("both.db"), {a_path, b_path});
  TuningDb both = TuningDb::open(file("both.db"), TuningDb::Mode::existing);
  EXPECT_EQ(served(both, "h-k"), "b0");  // declared last, though its median is the highest
  EXPECT_EQ(served(both, "h-j"), "j1");  // bj0 was demoted in b: a's winner stands
  EXPECT_EQ(count(both, "SELECT count(*) FROM demotions"), 1);
  EXPECT_TRUE(both.integrity_check().empty());

  // The JSON-lines route is the same importer.
  std::ostringstream out;
  TuningDb::open(file("both.db"), TuningDb::Mode::existing).export_jsonl(out);
  TuningDb copy = TuningDb::open(file("copy.db"), TuningDb::Mode::create);
  std::istringstream in(out.str());
  copy.import_jsonl(in, "both.jsonl");
  EXPECT_EQ(served(copy, "h-k"), "b0");
  EXPECT_EQ(served(copy, "h-j"), "j1");
  EXPECT_EQ(count(copy, "SELECT count(*) FROM winner_confidence"), 1);
}

TEST_F(TransferTest, ExportThenImportReproducesTheDatabase) {
  std::string exported;
  {
    TuningDb db = TuningDb::open(file("src.db"), TuningDb::Mode::create);
    Device d = cpu();
    d.driver = "quote \" backslash \\ tab \t newline \n unicode µ∑ ☃";
    int64_t dev = db.upsert_device(d), k = db.upsert_kernel(kernel("k"));
    results::Run r = db.begin_run(spec());
    CandidateWriter w(db, r.id, {.batch_rows = 1});
    w.add(ok(k, dev, "UPCAST(0,4)", 12.25));
    Candidate wrong = failed(k, dev, "LOCAL(1,8)", CandidateStatus::wrong, 1.0 / 3.0);
    wrong.max_error = std::numeric_limits<double>::infinity();
    w.add(wrong);
    w.add(failed(k, dev, "segv", CandidateStatus::crash));
    w.close();
    db.quarantine(k, dev, "manual", "flaky");
    db.finish_run(r.id, RunStatus::completed);
    std::ostringstream out;
    db.export_jsonl(out);
    exported = out.str();
  }
  TuningDb copy = TuningDb::open(file("copy.db"), TuningDb::Mode::create);
  std::istringstream in(exported);
  TransferStats stats = copy.import_jsonl(in, "export.jsonl");
  EXPECT_EQ(stats.added_to("candidates"), 3);
  EXPECT_EQ(stats.added_to("quarantine"), 1)
      << "the crash is re-quarantined by the trigger, not imported twice";
  EXPECT_EQ(stats.skipped_in("quarantine"), 1);

  // The copy's runs name their source, which the original's did not; otherwise identical.
  results::raw_connection(copy).exec("UPDATE runs SET imported_from = NULL");
  std::ostringstream again;
  copy.export_jsonl(again);
  EXPECT_EQ(again.str(), exported);
  EXPECT_EQ(copy.cached_best(1, 1, "as1")->opts, "UPCAST(0,4)");

  std::istringstream twice(exported);
  EXPECT_EQ(copy.import_jsonl(twice, "export.jsonl").added_to("candidates"), 0);
}

TEST_F(TransferTest, ImportErrorsNameTheLineAndImportNothing) {
  TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
  auto import_error = [&](const std::string& text) -> std::string {
    std::istringstream in(text);
    try {
      db.import_jsonl(in, "in.jsonl");
    } catch (const DbError& e) {
      return e.what();
    }
    return "no error";
  };
  std::string device =
      R"({"table":"devices","id":1,"name":"n","arch":"a","driver":"d","compiler":"c","compiler_version":"1"})";
  EXPECT_EQ(import_error(device + "\n{\"table\":\"devices\",\"id\":2,\"name\":\"x\x01\"}"),
            "in.jsonl:2: column 36: control character inside a string");
  EXPECT_EQ(
      import_error(device + "\n\n{\"table\":\"gadgets\"}"),
      "in.jsonl:3: unknown table 'gadgets' (expected one of devices, kernels, runs, candidates, quarantine, "
      "kernel_checks, demotions, winner_confidence, best)");
  EXPECT_EQ(import_error(R"({"table":"devices","id":1,"name":"n","colour":"red"})"),
            "in.jsonl:1: table devices has no column 'colour'");
  EXPECT_EQ(import_error(R"({"table":"quarantine","kernel_id":4,"device_id":1,"opts":"o"})"),
            "in.jsonl:1: kernel_id refers to a kernels row that did not come before it");
  EXPECT_EQ(count(db, "SELECT count(*) FROM devices"), 0) << "a failed import leaves nothing behind";
}

}  // namespace
}  // namespace tunebed::results::testing
