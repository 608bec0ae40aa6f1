// Two tuning processes, each tuning its own real kernel (core/opt + codegen + clang) through
// tune(), into one tuning database at the same time: SQLite's WAL and the writer's batched
// transactions must keep every row of both runs, once, and the file sound.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "core/opt/cost.hpp"
#include "search/kernel_target.hpp"
#include "search/tune.hpp"
#include "tests/opt/kernels.hpp"
#include "tests/temp_dir.hpp"

namespace tunebed::search {
namespace {

struct Outcome {
  int64_t run_id = 0, measured = 0;
};

// What one tuning process does once released: tune KERNEL with its own pool and connection and
// write "run_id measured" to OUT. At its first candidate it meets the other process (it writes to
// ARRIVED and waits to read from OTHER_ARRIVED), so both runs are under way at once however the
// scheduler orders them: the writes really are concurrent.
[[noreturn]] void tuning_process(const std::string& kernel, const std::string& db_path,
                                 const std::filesystem::path& out, int release_fd, int arrived, int other_arrived) {
  int exit_code = 1;
  try {
    KernelTarget target(test::named(kernel), kernel, "cpu");
    WorkerPool pool({.workers = 1});
    auto db = results::TuningDb::open(db_path, results::TuningDb::Mode::existing);
    auto beam = make_beam({.width = 2});
    TuneOptions o;
    o.budget.candidates = 8;
    o.timing = {.warmup = 1, .runs = 3, .early_stop_s = std::nullopt, .timeout_s = 5};
    o.decision = {.min_rounds = 3, .max_rounds = 3};
    bool met = false;
    o.on_event = [&](const TuneEvent& e) {
      if (e.kind != TuneEvent::Kind::candidate || met) return;
      char c = 'a';
      if (::write(arrived, &c, 1) != 1 || ::read(other_arrived, &c, 1) != 1) ::_exit(4);
      met = true;
    };
    char go = 0;
    if (::read(release_fd, &go, 1) != 1) ::_exit(3);  // both start together
    TuneResult r = tune(target.target(), *beam, pool, db, o);
    std::ofstream(out) << r.run_id << " " << r.measured << "\n";
    exit_code = 0;
  } catch (const std::exception& e) {
    std::ofstream(out) << "error: " << e.what() << "\n";
  }
  ::_exit(exit_code);
}

TEST(ConcurrentTune, TwoProcessesTuningDifferentKernelsIntoOneDatabaseLoseNoRow) {
  const tunebed::testing::TempDir scratch("tunebed-concurrent-tune");  // removed however the test ends
  const std::filesystem::path dir = scratch.path();
  ::setenv("TUNEBED_CACHE_DIR", (dir / "cache").c_str(), 1);  // every candidate really compiles
  const std::string db_path = (dir / "tuning.db").string();
  results::TuningDb::open(db_path, results::TuningDb::Mode::create);  // the schema, before the forks

  const std::vector<std::string> kernels = {"matmul_64", "max_256x7"};
  int release[2], arrived[2][2];
  ASSERT_EQ(::pipe(release), 0);
  ASSERT_EQ(::pipe(arrived[0]), 0);
  ASSERT_EQ(::pipe(arrived[1]), 0);
  std::vector<pid_t> children;
  for (size_t i = 0; i < kernels.size(); i++) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(release[1]);
      ::close(arrived[i][0]), ::close(arrived[1 - i][1]);  // so a dead peer reads as EOF, not a hang
      tuning_process(kernels[i], db_path, dir / ("out" + std::to_string(i)), release[0], arrived[i][1],
                     arrived[1 - i][0]);
    }
    children.push_back(pid);
  }
  ::close(release[0]);
  for (auto& p : arrived) ::close(p[0]), ::close(p[1]);
  ASSERT_EQ(::write(release[1], "gg", 2), 2);
  ::close(release[1]);

  std::vector<Outcome> outcomes;
  for (size_t i = 0; i < children.size(); i++) {
    int status = 0;
    ::waitpid(children[i], &status, 0);
    std::ifstream in(dir / ("out" + std::to_string(i)));
    std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << kernels[i] << ": " << line;
    Outcome o;
    std::istringstream(line) >> o.run_id >> o.measured;
    outcomes.push_back(o);
  }

  auto db = results::TuningDb::open(db_path, results::TuningDb::Mode::existing);
  EXPECT_TRUE(db.integrity_check().empty());
  ASSERT_EQ(db.runs().size(), 2u);
  const results::Run a = db.run(outcomes[0].run_id), b = db.run(outcomes[1].run_id);
  EXPECT_NE(a.id, b.id);
  // They met during their runs, so the runs overlap in time.
  EXPECT_LE(a.started_at, b.ended_at);
  EXPECT_LE(b.started_at, a.ended_at);
  for (const Outcome& o : outcomes) {
    EXPECT_EQ(db.run(o.run_id).status, results::RunStatus::completed);
    std::vector<results::CommittedCandidate> committed = db.candidates_of_run(o.run_id);
    EXPECT_GE(o.measured, 4) << "the search hardly ran";
    // The root (the reference) and the search's candidates: each measured one committed, once.
    EXPECT_EQ(static_cast<int64_t>(committed.size()), o.measured);
    std::set<std::string> opts;
    for (const results::CommittedCandidate& c : committed) EXPECT_TRUE(opts.insert(c.opts).second) << c.opts;
    std::set<int64_t> kernel_ids;
    for (const results::CommittedCandidate& c : committed) kernel_ids.insert(c.kernel_id);
    EXPECT_EQ(kernel_ids.size(), 1u);
  }
  EXPECT_EQ(results::raw_connection(db).query_int("SELECT count(*) FROM candidates"),
            outcomes[0].measured + outcomes[1].measured);

  // Both winners, with the GFLOP/s their kernels' costs give.
  std::vector<results::BestRow> best = db.best();
  ASSERT_EQ(best.size(), 2u);
  for (const results::BestRow& row : best) {
    const int64_t flops = kernel_cost(test::named(row.kernel_source)).flops;
    ASSERT_TRUE(row.gflops.has_value()) << row.kernel_source;
    EXPECT_NEAR(*row.gflops, flops / row.median_us / 1e3, 1e-6 * *row.gflops) << row.kernel_source;
  }
}

}  // namespace
}  // namespace tunebed::search
