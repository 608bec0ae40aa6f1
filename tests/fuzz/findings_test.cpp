// The findings table: a new key adds a row, the same key counts on it and keeps the smaller input,
// inputs of any bytes come back as stored, and minimising replaces the input.
#include "results/findings.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "results/tuning_db.hpp"

namespace tunebed::results {
namespace {

class FindingsTest : public ::testing::Test {
 protected:
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("tunebed-findings-" + std::to_string(getpid()) + "-" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
  TuningDb db_ = (std::filesystem::remove(path_), TuningDb::open(path_.string(), TuningDb::Mode::create));
  Findings findings_{results::raw_connection(db_)};
  ~FindingsTest() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
};

FindingReport report(const std::string& signature, const std::string& input) {
  return {"kernel", "wrong", signature, input, "detail of " + input, 0.25};
}

TEST_F(FindingsTest, ANewKeyAddsARowAndTheSameKeyCountsOnIt) {
  const auto a = findings_.record(report("compiled kernel differs", "longer input"));
  const auto b = findings_.record(report("compiled kernel differs", "longest input of all"));
  const auto c = findings_.record(report("scheduled program differs", "x"));
  EXPECT_TRUE(a.is_new);
  EXPECT_FALSE(b.is_new);
  EXPECT_EQ(b.id, a.id);
  EXPECT_TRUE(c.is_new);
  EXPECT_NE(c.id, a.id);
  const std::vector<Finding> all = findings_.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].count, 2);
  EXPECT_EQ(all[0].input, "longer input");  // the smaller of the two stays
  EXPECT_EQ(all[1].count, 1);
  EXPECT_EQ(all[0].max_error, 0.25);
}

TEST_F(FindingsTest, ASmallerInputReplacesTheStoredOneWithItsDetail) {
  findings_.record(report("sig", "a long reproducer"));
  const auto r = findings_.record(report("sig", "short"));
  const Finding f = *findings_.get(r.id);
  EXPECT_EQ(f.input, "short");
  EXPECT_EQ(f.detail, "detail of short");
}

TEST_F(FindingsTest, KindIsPartOfTheKey) {
  findings_.record({"opts", "crash", "sig", "a", "", std::nullopt});
  findings_.record({"opts", "timeout", "sig", "a", "", std::nullopt});
  findings_.record({"kernel", "crash", "sig", "a", "", std::nullopt});
  EXPECT_EQ(findings_.list().size(), 3u);
}

TEST_F(FindingsTest, AnUnknownKindIsRefusedByName) {
  try {
    findings_.record({"opts", "oops", "sig", "a", "", std::nullopt});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'oops'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(findings_.list().empty());
}

TEST_F(FindingsTest, ReplaceInputMarksTheFindingMinimized) {
  const auto r = findings_.record(report("sig", "abcdef"));
  findings_.replace_input(r.id, "ab", "smaller");
  const Finding f = *findings_.get(r.id);
  EXPECT_EQ(f.input, "ab");
  EXPECT_EQ(f.detail, "smaller");
  EXPECT_TRUE(f.minimized);
  EXPECT_THROW(findings_.replace_input(r.id + 100, "x", ""), std::invalid_argument);
  EXPECT_FALSE(findings_.get(r.id + 100));
}

RC_GTEST_PROP(FindingsProperty, AnyBytesComeBackAsStored, (const std::string& input)) {
  const auto path =
      std::filesystem::temp_directory_path() / ("tunebed-findings-prop-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  {
    TuningDb db = TuningDb::open(path.string(), TuningDb::Mode::create);
    Findings f(results::raw_connection(db));
    const auto r = f.record({"rewrite", "crash", "sig", input, "", std::nullopt});
    RC_ASSERT(f.get(r.id)->input == input);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace tunebed::results
