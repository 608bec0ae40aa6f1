// Tensor::realize through the compiled backend (schedule -> opt -> codegen -> clang -> run)
// computes what the reference interpreter computes.
#include <gtest/gtest.h>

#include "core/engine/check.hpp"
#include "core/engine/compiled_backend.hpp"
#include "core/reference/reference.hpp"
#include "core/tensor/random_program.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/engine/oracles.hpp"

namespace tunebed {
namespace {

// Installs a compiled backend for one test and puts the previous backend back afterwards.
class CompiledRealize : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = std::make_shared<CompiledBackend>(open_device("cpu"));
    previous_ = set_backend(backend_);
  }
  void TearDown() override { set_backend(previous_); }

  // "" when realizing `t` on the compiled backend gives the oracles' answer.
  std::string mismatch(const Tensor& t) {
    Tensor copy = t;
    return testing::disagreement(copy.data(), t.uop(), t.buffers());
  }

  std::shared_ptr<CompiledBackend> backend_;
  std::shared_ptr<Backend> previous_;
};

TEST_F(CompiledRealize, WorkloadsMatchTheReference) {
  for (const char* spec :
       {"matmul:M=7,N=5,K=13", "softmax:M=3,N=11", "layernorm:M=5,N=6", "sum:M=9,N=7,axis=rows",
        "conv2d:C=2,H=5,W=5,K=3", "transpose:M=5,N=3", "matmul:M=6,N=4,K=8,dtype=int32"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(mismatch(make_workload(spec).output), "");
    EXPECT_FALSE(backend_->last_kernels().empty());
  }
}

TEST_F(CompiledRealize, RandomProgramsMatchTheReference) {
  for (uint64_t seed = 0; seed < 12; seed++) {
    SplitMixSource source(seed);
    const RandomProgram p = random_program(source, {.max_depth = 4, .max_rank = 3, .max_dim = 5});
    SCOPED_TRACE("random program seed " + std::to_string(seed));
    EXPECT_EQ(mismatch(p.output), "");
  }
}

TEST_F(CompiledRealize, AssignWritesIntoTheTargetBuffer) {
  Tensor a = Tensor::from_values({1, 2, 3, 4, 5}, {5});
  const Tensor b = Tensor::from_values({10, 20, 30, 40, 50}, {5});
  a.assign(a + b * 2).realize();
  const HostBuffer got = a.data();
  for (int64_t i = 0; i < 5; i++) EXPECT_EQ(got.get_float(i), (i + 1) * 21.0) << i;
}

TEST_F(CompiledRealize, HandCodedOptsAreAppliedToABigEnoughKernel) {
  // A 64x64 matmul is worth upcasting: the heuristics must leave their mark on the kernel.
  EXPECT_EQ(mismatch(make_workload("matmul:M=64,N=64,K=64").output), "");
  ASSERT_EQ(backend_->last_kernels().size(), 1u);
  EXPECT_FALSE(backend_->last_kernels()[0].applied_opts.empty());
}

TEST(CompiledBackendPolicy, EachKernelGetsThePolicysOpts) {
  std::vector<int> seen;
  auto backend = std::make_shared<CompiledBackend>(open_device("cpu"), [&](int index, const UOp&) {
    seen.push_back(index);
    return KernelOpts::none();
  });
  const Workload w = make_workload("softmax:M=4,N=5");
  const std::vector<HostBuffer> out = backend->realize({w.output.uop()}, w.output.buffers());
  ASSERT_GT(backend->last_kernels().size(), 1u);
  for (size_t i = 0; i < seen.size(); i++) EXPECT_EQ(seen[i], static_cast<int>(i));
  EXPECT_EQ(seen.size(), backend->last_kernels().size());
  for (const CompiledKernel& k : backend->last_kernels()) EXPECT_TRUE(k.applied_opts.empty()) << k.name;
  EXPECT_EQ(testing::disagreement(out.at(0), w.output.uop(), w.output.buffers()), "");
}

}  // namespace
}  // namespace tunebed
