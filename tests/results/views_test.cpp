// The views are a contract documented in results/README.md: their columns are the README's, the
// README's example queries run, and the rows mean what the README says. Also the query API that
// reads them (best, failures, convergence, compare, diff).
#include <cmath>
#include <regex>

#include "support.hpp"

namespace tunebed::results::testing {
namespace {

std::string readme() {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  std::filesystem::path dir = root
                                  ? std::filesystem::path(root)
                                  : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  std::string text = read_bytes((dir / "results/README.md").string());
  EXPECT_FALSE(text.empty()) << "results/README.md not found under " << dir;
  return text;
}

// The column names listed in the README's table under "### VIEW".
std::vector<std::string> documented_columns(const std::string& doc, const std::string& view) {
  size_t start = doc.find("### " + view + "\n");
  size_t end = doc.find("\n#", start + 1);
  std::string section = doc.substr(start, end - start);
  std::vector<std::string> names;
  std::regex row(R"(\n\| `([a-z_]+)` \|)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), stop; it != stop; ++it)
    names.push_back((*it)[1]);
  return names;
}

class ViewsTest : public DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    db_.emplace(TuningDb::open(file("t.db"), TuningDb::Mode::create));
    device_ = db_->upsert_device(cpu());
    kernel_ = db_->upsert_kernel(kernel("matmul"));
    run_ = db_->begin_run(spec());
    // Measured at start + 1 s, + 2 s, ...: a run whose search improves, stumbles and improves.
    results::raw_connection(*db_)
        .prepare("UPDATE runs SET started_at = '2026-01-01T00:00:00.000Z' WHERE id = ?")
        .bind_all(run_.id)
        .run();
    CandidateWriter w(*db_, run_.id);
    std::vector<Candidate> trace = {
        ok(kernel_, device_, "a", 50),
        ok(kernel_, device_, "b", 40),
        failed(kernel_, device_, "c", CandidateStatus::wrong, 5),
        failed(kernel_, device_, "d", CandidateStatus::crash),
        ok(kernel_, device_, "e", 45),
        ok(kernel_, device_, "f", 25),
    };
    for (size_t i = 0; i < trace.size(); ++i) {
      trace[i].created_at = "2026-01-01T00:00:0" + std::to_string(i + 1) + ".500Z";
      w.add(trace[i]);
    }
  }
  std::optional<TuningDb> db_;
  int64_t device_ = 0, kernel_ = 0;
  results::Run run_;
};

TEST_F(ViewsTest, ViewColumnsAreTheReadmeContract) {
  std::string doc = readme();
  for (const std::string view : {"v_best", "v_failures", "v_convergence"}) {
    Statement info = results::raw_connection(*db_).prepare("SELECT name FROM pragma_table_info(?)");
    info.bind_all(view);
    std::vector<std::string> actual;
    while (info.step()) actual.push_back(info.column_text(0));
    EXPECT_FALSE(actual.empty()) << view;
    EXPECT_EQ(actual, documented_columns(doc, view)) << view;
  }
}

TEST_F(ViewsTest, ReadmeExampleQueriesRun) {
  std::string doc = readme();
  std::regex block("```sql\n([^`]*)```");
  int blocks = 0;
  for (std::sregex_iterator it(doc.begin(), doc.end(), block), stop; it != stop; ++it, ++blocks) {
    EXPECT_NO_THROW(results::raw_connection(*db_).exec((*it)[1].str())) << (*it)[1].str();
  }
  EXPECT_GT(blocks, 0);
}

TEST_F(ViewsTest, BestIsTheFastestOkCandidateWithItsThroughput) {
  std::vector<BestRow> best = db_->best();
  ASSERT_EQ(best.size(), 1u);
  const BestRow& b = best[0];
  EXPECT_EQ(b.opts, "f");
  EXPECT_EQ(b.median_us, 25);
  Kernel k = kernel("matmul");
  EXPECT_DOUBLE_EQ(*b.gflops, k.flops / 25e-6 / 1e9);
  EXPECT_DOUBLE_EQ(*b.gbytes_per_s, k.bytes / 25e-6 / 1e9);
  EXPECT_EQ(b.kernel_hash, k.hash);
  EXPECT_EQ(b.kernel_source, k.source);
  EXPECT_EQ(b.device, "cpu0");
  EXPECT_EQ(b.compiler_version, "16.0.6");
  EXPECT_EQ(b.run_uuid, run_.uuid);
  EXPECT_TRUE(db_->best({.kernel = "h-mat"}).size() == 1);
  EXPECT_TRUE(db_->best({.kernel = "h-conv"}).empty());
  EXPECT_TRUE(db_->best({.device_id = device_ + 1}).empty());
  EXPECT_TRUE(db_->best({.workload = "workload:matmul"}).size() == 1);
  EXPECT_TRUE(db_->best({.workload = "workload:conv"}).empty());
}

TEST_F(ViewsTest, FailuresAreTheNonOkCandidatesWithTheirQuarantine) {
  std::vector<FailureRow> f = db_->failures();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].opts, "c");
  EXPECT_EQ(f[0].status, CandidateStatus::wrong);
  EXPECT_EQ(f[0].max_error, 0.5);
  EXPECT_FALSE(f[0].quarantined);
  EXPECT_EQ(f[1].opts, "d");
  EXPECT_EQ(f[1].status, CandidateStatus::crash);
  EXPECT_EQ(f[1].error, "failed: crash");
  EXPECT_TRUE(f[1].quarantined);
  EXPECT_EQ(f[1].seq, 4);
}

TEST_F(ViewsTest, ConvergenceTracksTheBestSoFarAndElapsedTime) {
  std::vector<ConvergencePoint> points = db_->convergence(run_.id);
  ASSERT_EQ(points.size(), 6u);
  const std::vector<double> best_so_far = {50, 40, 40, 40, 40, 25};
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].candidate_index, static_cast<int64_t>(i + 1));
    EXPECT_EQ(points[i].best_so_far_us, best_so_far[i]) << i;
    EXPECT_NEAR(points[i].elapsed_s, i + 1.5, 1e-3) << i;
  }
  EXPECT_FALSE(points[3].median_us) << "the crash has no time";
  // A second kernel in the same run has its own sequence of candidate indices.
  int64_t conv = db_->upsert_kernel(kernel("conv"));
  {
    CandidateWriter w(*db_, run_.id);
    w.add(ok(conv, device_, "z", 99));
  }
  std::vector<ConvergencePoint> more = db_->convergence(run_.id);
  ASSERT_EQ(more.size(), 7u);
  EXPECT_EQ(more[0].kernel_hash, "h-conv");
  EXPECT_EQ(more[0].candidate_index, 1);
  EXPECT_EQ(more[0].seq, 7);
}

TEST_F(ViewsTest, CompareAndDiffPairWinnersByKernel) {
  int64_t gpu = db_->upsert_device(cpu("gpu0"));
  int64_t conv = db_->upsert_kernel(kernel("conv"));
  {
    CandidateWriter w(*db_, run_.id);
    w.add(ok(kernel_, gpu, "g", 5));
    w.add(ok(conv, device_, "c", 80));
  }
  std::vector<Comparison> cmp = db_->compare(device_, gpu);
  ASSERT_EQ(cmp.size(), 2u);
  EXPECT_EQ(cmp[0].kernel_hash, "h-conv");
  EXPECT_TRUE(cmp[0].a && !cmp[0].b);
  EXPECT_FALSE(cmp[0].speedup());
  EXPECT_EQ(cmp[1].a->opts, "f");
  EXPECT_EQ(cmp[1].b->opts, "g");
  EXPECT_DOUBLE_EQ(*cmp[1].speedup(), 25.0 / 5.0);

  TuningDb other = TuningDb::open(file("other.db"), TuningDb::Mode::create);
  {
    int64_t d = other.upsert_device(cpu()), k = other.upsert_kernel(kernel("matmul"));
    results::Run r = other.begin_run(spec());
    CandidateWriter w(other, r.id);
    w.add(ok(k, d, "other", 50));
  }
  std::vector<Comparison> d = db_->diff(other);
  ASSERT_EQ(d.size(), 3u);  // conv on cpu0, matmul on cpu0, matmul on gpu0
  EXPECT_EQ(d[1].kernel_hash, "h-matmul");
  EXPECT_EQ(d[1].device, "cpu0");
  EXPECT_EQ(d[1].a->opts, "f");
  EXPECT_EQ(d[1].b->opts, "other");
  EXPECT_DOUBLE_EQ(*d[1].speedup(), 0.5);
  EXPECT_FALSE(d[2].b) << "the other database never tuned matmul on gpu0";
}

TEST_F(ViewsTest, HistoryListsEveryCandidateWithItsSamples) {
  std::vector<CandidateRow> h = db_->history(kernel_);
  ASSERT_EQ(h.size(), 6u);
  EXPECT_EQ(h[0].opts, "a");
  EXPECT_EQ(h[0].samples_us, ok(kernel_, device_, "a", 50).samples_us);
  EXPECT_EQ(h[0].compile_ms, 12.5);
  EXPECT_EQ(h[3].status, CandidateStatus::crash);
  EXPECT_TRUE(h[3].samples_us.empty());
}

}  // namespace
}  // namespace tunebed::results::testing
