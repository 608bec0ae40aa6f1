// Tuned results in use (search/tuned_opts.hpp): a kernel's stored winner is found by the tuner's
// keys and applied; every other case runs the default opts and says why; the compiled backend
// behind Tensor::realize takes the same lookup when TUNEBED_TUNED_DB is set.
#include "search/tuned_opts.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/ir/text.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "results/candidate_writer.hpp"
#include "search/tune.hpp"
#include "tests/engine/oracles.hpp"
#include "tests/temp_dir.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::search {
namespace {

// The one kernel of a workload.
UOp kernel_of(const Workload& w) {
  const Schedule s = create_schedule({w.output.uop()});
  EXPECT_EQ(s.items.size(), 1u);
  return s.items.at(0).ast;
}

class TunedOptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = (tmp_.path() / "t.db").string();
    device_ = open_device("cpu");
  }
  void TearDown() override { ::unsetenv(kTunedDbVariable); }

  // Stores OPTS as the winner for AST on this machine's CPU, found under action space VERSION.
  void store_winner(const UOp& ast, const std::string& opts, const std::string& version) {
    results::TuningDb db = results::TuningDb::open(db_path_, results::TuningDb::Mode::create);
    const int64_t device = db.upsert_device(fingerprint_of(*device_));
    const int64_t kernel = db.upsert_kernel({.hash = kernel_hash(ast), .ast = print_uop(ast), .source = "test"});
    const results::Run run = db.begin_run({.strategy = "beam",
                                           .action_space_version = version,
                                           .tunebed_version = std::string(build::kVersion),
                                           .git_rev = std::string(build::kGitRev)});
    results::CandidateWriter w(db, run.id);
    w.add({.kernel_id = kernel,
           .device_id = device,
           .opts = opts,
           .samples_us = {12.5},
           .median_us = 12.5,
           .status = results::CandidateStatus::ok});
    w.close();
    db.finish_run(run.id, results::RunStatus::completed);
  }

  TunedChoice choose(const UOp& ast) {
    TunedOpts tuned(db_path_, *device_, KernelCompiler(device_).renderer());
    return tuned.choose(ast);
  }

  const tunebed::testing::TempDir tmp_{"tunebed-tuned"};
  std::string db_path_;
  std::shared_ptr<Device> device_;
  const UOp matmul_ = kernel_of(make_workload("matmul:M=16,N=16,K=16"));
  const UOp sum_ = kernel_of(make_workload("sum:M=16,N=8,axis=rows"));
};

TEST_F(TunedOptsTest, TheStoredWinnerIsAppliedAndOtherKernelsRunTheDefault) {
  store_winner(matmul_, "UPCAST:0:4,UNROLL:0:4", action_space_version({}));
  const TunedChoice tuned = choose(matmul_);
  EXPECT_TRUE(tuned.tuned);
  EXPECT_EQ(tuned.opts.mode, KernelOpts::Mode::given);
  EXPECT_EQ(to_string(tuned.opts.opts), "UPCAST:0:4,UNROLL:0:4");
  EXPECT_NE(tuned.why.find("12.5 us when tuned"), std::string::npos) << tuned.why;
  // KernelInfo is not part of the key: tune() strips it, so the lookup does too.
  EXPECT_TRUE(choose(matmul_.with_arg(Arg(std::string("info")))).tuned);

  const TunedChoice other = choose(sum_);
  EXPECT_FALSE(other.tuned);
  EXPECT_EQ(other.opts.mode, KernelOpts::Mode::default_opts);
  EXPECT_EQ(other.why, "not tuned on this device");
}

TEST_F(TunedOptsTest, AWinnerFromAnotherActionSpaceIsStaleAndNotServed) {
  store_winner(matmul_, "UPCAST:0:4", "actions-0000000000000000");
  const TunedChoice c = choose(matmul_);
  EXPECT_FALSE(c.tuned);
  EXPECT_EQ(c.opts.mode, KernelOpts::Mode::default_opts);
  EXPECT_EQ(c.why, "stale: tuned under action space actions-0000000000000000, this tunebed searches " +
                       action_space_version({}));
}

TEST_F(TunedOptsTest, StoredOptsThatAreNotLegalHereFallBackAndSayWhichRule) {
  store_winner(matmul_, "UPCAST:0:3", action_space_version({}));
  const TunedChoice c = choose(matmul_);
  EXPECT_FALSE(c.tuned);
  EXPECT_EQ(c.why.rfind("the stored opts \"UPCAST:0:3\" are not legal here: UPCAST:0:3: ", 0), 0u) << c.why;
}

TEST_F(TunedOptsTest, ANonDatabaseIsRefusedWithItsPath) {
  std::ofstream(db_path_) << "not a database";
  EXPECT_THROW(choose(matmul_), results::DbError);
  ::setenv(kTunedDbVariable, db_path_.c_str(), 1);
  try {
    make_compiled_backend(device_);
    FAIL() << "a backend over a file that is not a tuning database";
  } catch (const results::DbError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("TUNEBED_TUNED_DB: ", 0), 0u) << e.what();
  }
}

TEST_F(TunedOptsTest, TheCompiledBackendRealizesWithTheStoredWinnerWhenTheVariableIsSet) {
  store_winner(matmul_, "UPCAST:0:4,UNROLL:0:4", action_space_version({}));
  const Workload w = make_workload("matmul:M=16,N=16,K=16");

  std::shared_ptr<CompiledBackend> plain = make_compiled_backend(device_);  // variable unset
  plain->realize({w.output.uop()}, w.output.buffers());
  EXPECT_NE(to_string(plain->last_kernels().at(0).applied_opts), "UPCAST:0:4,UNROLL:0:4");

  ::setenv(kTunedDbVariable, db_path_.c_str(), 1);
  std::vector<TunedChoice> choices;
  std::shared_ptr<CompiledBackend> tuned =
      make_compiled_backend(device_, [&](const TunedChoice& c) { choices.push_back(c); });
  const std::shared_ptr<Backend> previous = set_backend(tuned);
  Tensor out = w.output;
  const HostBuffer got = out.data();  // Tensor::realize, through the installed backend
  set_backend(previous);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_TRUE(choices[0].tuned);
  EXPECT_EQ(to_string(tuned->last_kernels().at(0).applied_opts), "UPCAST:0:4,UNROLL:0:4");
  EXPECT_EQ(testing::disagreement(got, w.output.uop(), w.output.buffers()), "");
}

}  // namespace
}  // namespace tunebed::search
