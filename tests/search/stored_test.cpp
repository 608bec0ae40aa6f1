// A database's measurements as the offline search reads them (search/stored.hpp).
#include "search/stored.hpp"

#include <gtest/gtest.h>

#include "core/ir/text.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "results/candidate_writer.hpp"
#include "search/tune.hpp"
#include "tests/temp_dir.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::search {
namespace {

struct Measured {
  std::string opts;
  std::optional<double> median_us;  // none: it failed
  std::string source_hash = {};     // none: it never rendered
};

class StoredTest : public ::testing::Test {
 protected:
  // One run of the matmul kernel that measured CANDIDATES, on DEVICE (this machine's by default).
  void store_run(results::TuningDb& db, const std::vector<Measured>& candidates,
                 const results::Device& on = fingerprint_of("cpu")) {
    const int64_t device = db.upsert_device(on);
    const int64_t kernel = db.upsert_kernel({.hash = kernel_hash(ast_), .ast = print_uop(ast_), .source = "test"});
    const results::Run run = db.begin_run({.strategy = "beam",
                                           .action_space_version = action_space_version({}),
                                           .tunebed_version = std::string(build::kVersion),
                                           .git_rev = std::string(build::kGitRev)});
    results::CandidateWriter w(db, run.id);
    for (const Measured& m : candidates)
      w.add({.kernel_id = kernel,
             .device_id = device,
             .opts = m.opts,
             .source_hash = m.source_hash,
             .samples_us = m.median_us ? std::vector<double>{*m.median_us} : std::vector<double>{},
             .median_us = m.median_us,
             .status = m.median_us ? results::CandidateStatus::ok : results::CandidateStatus::crash});
    w.close();
    db.finish_run(run.id, results::RunStatus::completed);
  }

  const tunebed::testing::TempDir dir_{"tunebed-stored"};
  const UOp ast_ = create_schedule({make_workload("matmul:M=16,N=16,K=16").output.uop()}).items.at(0).ast;
};

// A state measured in several runs costs the median of its medians, not the luckiest one; a state
// that failed in one run and ran in another costs what it ran in; the training set's winner is
// the one the database serves.
TEST_F(StoredTest, AStateMeasuredInSeveralRunsCostsTheMedianOfItsRuns) {
  results::TuningDb db = results::TuningDb::open((dir_.path() / "t.db").string(), results::TuningDb::Mode::create);
  store_run(db, {{"", 5.0}, {"UPCAST:0:4", 1.0}, {"UNROLL:0:4", std::nullopt}});
  store_run(db, {{"UPCAST:0:4", 2.0}, {"UNROLL:0:4", 3.0}});
  store_run(db, {{"UPCAST:0:4", 10.0}, {"THREAD:0:2", std::nullopt}});
  const std::vector<StoredKernel> kernels = stored_kernels(db);
  ASSERT_EQ(kernels.size(), 1u);
  const StoredCosts& c = kernels[0].costs;
  EXPECT_DOUBLE_EQ(c.at(""), 5e-6);
  EXPECT_DOUBLE_EQ(c.at("UPCAST:0:4"), 2e-6);
  EXPECT_DOUBLE_EQ(c.at("UNROLL:0:4"), 3e-6);
  EXPECT_EQ(c.at("THREAD:0:2"), INFINITY);
  const TrainingSet data = training_set(kernels, kernels[0].fingerprint);
  EXPECT_EQ(data.rows(), 3u);
  EXPECT_EQ(data.winners(), (std::vector<std::string>{"UPCAST:0:4"}));
}

// Opts that render the same source are one kernel: their runs pool, so each name costs the median
// of them all, and a name that crashed once costs what its twin ran in.
TEST_F(StoredTest, OptsThatMakeTheSameSourcePoolTheirRuns) {
  results::TuningDb db = results::TuningDb::open((dir_.path() / "t.db").string(), results::TuningDb::Mode::create);
  store_run(db, {{"", 5.0, "root"}, {"UPCAST:0:4,UNROLL:0:4", 1.0, "twin"}, {"UPCAST:0:4", 4.0, "other"}});
  store_run(db, {{"UNROLL:0:4,UPCAST:0:4", 3.0, "twin"}, {"UPCAST:0:4", 2.0, "other"}});
  store_run(db, {{"UNROLL:0:4,UPCAST:0:4", 10.0, "twin"}, {"UNROLL:0:4", std::nullopt, "unrolled"}});
  const StoredCosts c = stored_kernels(db).at(0).costs;
  EXPECT_DOUBLE_EQ(c.at("UPCAST:0:4,UNROLL:0:4"), 3e-6);  // median of 1, 3 and 10
  EXPECT_DOUBLE_EQ(c.at("UNROLL:0:4,UPCAST:0:4"), 3e-6);
  EXPECT_DOUBLE_EQ(c.at("UPCAST:0:4"), 3e-6);  // its own runs only: 4 and 2
  EXPECT_DOUBLE_EQ(c.at(""), 5e-6);
  EXPECT_EQ(c.at("UNROLL:0:4"), INFINITY);
}

// Two machines' devices may share a name ("cpu", merged databases): each keeps its own costs.
TEST_F(StoredTest, DevicesOfOneNameKeepTheirOwnMeasurements) {
  results::TuningDb db = results::TuningDb::open((dir_.path() / "t.db").string(), results::TuningDb::Mode::create);
  results::Device other = fingerprint_of("cpu");
  other.arch = "another machine";
  store_run(db, {{"", 5.0}, {"UPCAST:0:4", 1.0}});
  store_run(db, {{"", 50.0}, {"UPCAST:0:4", 10.0}}, other);
  const std::vector<StoredKernel> kernels = stored_kernels(db);
  ASSERT_EQ(kernels.size(), 2u);
  for (const StoredKernel& k : kernels)
    EXPECT_DOUBLE_EQ(k.costs.at("UPCAST:0:4"), k.fingerprint.arch == "another machine" ? 10e-6 : 1e-6);
  // The cost model learns this machine's times only, though both devices are named cpu.
  const TrainingSet here = training_set(kernels, fingerprint_of("cpu"));
  EXPECT_EQ(here.rows(), 2u);
  EXPECT_EQ(here.kernels(), 1u);
  EXPECT_EQ(training_set(kernels, other).rows(), 2u);
  other.arch = "a third machine";
  EXPECT_EQ(training_set(kernels, other).rows(), 0u);
}

}  // namespace
}  // namespace tunebed::search
