// KernelSpace over core/opt: the actions of a real kernel, the caps, the version string, and a
// strategy walking it with a modelled cost (no code generation involved).
#include "search/kernel_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "tests/opt/kernels.hpp"

namespace tunebed::search {
namespace {

int64_t upcast_elements(const Kernel& k) {
  int64_t up = 1;
  for (int a : k.axes_of({AxisType::UPCAST, AxisType::UNROLL})) up *= k.full_shape()[a].to_int();
  return up;
}

TEST(KernelSpace, ListsLegalActionsAndNamesStatesByTheirOpts) {
  KernelSpace space(Kernel(test::named("matmul_512"), Renderer::cpu(4)));
  std::vector<int> root = space.actions({});
  ASSERT_GE(root.size(), 5u);
  EXPECT_TRUE(std::ranges::is_sorted(root));
  std::set<OptOps> ops;
  for (int a : root) {
    Path p{a};
    ops.insert(space.opts(p)[0].op);
    EXPECT_EQ(space.kind(a), optops_name(space.opts(p)[0].op));  // an action's kind is its OptOp
    EXPECT_EQ(space.parse(space.key(p)), p) << space.key(p);
    EXPECT_EQ(space.kernel(p).applied_opts(), space.opts(p));
  }
  EXPECT_TRUE(ops.contains(OptOps::UPCAST));
  EXPECT_TRUE(ops.contains(OptOps::THREAD));  // the CPU renderer has cores to thread over
  EXPECT_EQ(space.key({}), "");
  EXPECT_EQ(space.parse("LOCAL:0:7"), std::nullopt);   // not one of the actions
  EXPECT_EQ(space.parse("UPCAST:9:4"), std::nullopt);  // not legal on this kernel
}

TEST(KernelSpace, OptionsNarrowTheActionsAndChangeTheVersion) {
  Kernel k(test::named("matmul_512"), Renderer::cpu(4));
  KernelSpace all(k), upcast_only(k, {.ops = {OptOps::UPCAST, OptOps::UNROLL}, .max_upcast = 16});
  EXPECT_LT(upcast_only.actions({}).size(), all.actions({}).size());
  Path deep;
  for (int step = 0; step < 3; step++) {
    std::vector<int> next = upcast_only.actions(deep);
    if (next.empty()) break;
    for (int a : next) {
      Path p = deep;
      p.push_back(a);
      OptOps op = upcast_only.opts(p).back().op;
      EXPECT_TRUE(op == OptOps::UPCAST || op == OptOps::UNROLL);
      EXPECT_LE(upcast_elements(upcast_only.kernel(p)), 16);
    }
    deep.push_back(next.back());
  }
  EXPECT_NE(all.version(), upcast_only.version());
  EXPECT_EQ(all.version(), action_space_version({}));
  EXPECT_EQ(all.version().rfind("actions-", 0), 0u);
  EXPECT_THROW(action_space_version({.max_upcast = 512}), std::invalid_argument);
}

// parse answers only states of the space: opts legal on the kernel but past a cap are not in it
// (the model strategy transplanted such winners of other kernels, outside the space it searched).
TEST(KernelSpace, ParsesOnlyTheStatesItsActionsReach) {
  KernelSpace capped(Kernel(test::named("matmul_512"), Renderer::cpu(4)), {.max_upcast = 16});
  const std::optional<Path> sixteen = capped.parse("UPCAST:0:4,UPCAST:1:4");
  ASSERT_TRUE(sixteen.has_value());
  EXPECT_EQ(upcast_elements(capped.kernel(*sixteen)), 16);
  EXPECT_EQ(capped.parse("UPCAST:0:4,UPCAST:1:4,UNROLL:0:4"), std::nullopt);  // 64 upcast elements
  const std::optional<Path> uncapped =
      KernelSpace(Kernel(test::named("matmul_512"), Renderer::cpu(4))).parse("UPCAST:0:4,UPCAST:1:4,UNROLL:0:4");
  EXPECT_TRUE(uncapped.has_value());
}

// A stand-in for measurement: more upcast elements are faster, up to 16.
struct UpcastModel : CostFunction {
  KernelSpace& space;
  explicit UpcastModel(KernelSpace& s) : space(s) {}
  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double>) override {
    std::vector<double> out;
    for (const Path& p : batch)
      out.push_back(1.0 / static_cast<double>(std::min<int64_t>(upcast_elements(space.kernel(p)), 16)));
    return out;
  }
};

TEST(KernelSpace, BeamWalksARealKernelToTheModelledOptimum) {
  KernelSpace space(Kernel(test::named("matmul_512"), Renderer::cpu(4)),
                    {.ops = {OptOps::UPCAST, OptOps::UNROLL}});
  UpcastModel cost(space);
  auto beam = make_beam({.width = 2});
  SearchResult r = run_search(*beam, space, cost, {.candidates = 200});
  ASSERT_TRUE(r.best.has_value());
  EXPECT_DOUBLE_EQ(r.best->cost, 1.0 / 16);
  EXPECT_FALSE(r.best->key.empty());
  EXPECT_EQ(space.parse(r.best->key), r.best->path);
}

// A state's identity is the kernel it builds: opts in another order that build one loop nest
// share it, and which axis an opt takes makes another kernel even where the features cannot
// tell (THREAD after a tensor core, on an axis or the other).
TEST(KernelSpace, AStatesIdentityIsTheKernelItBuilds) {
  KernelSpace space(Kernel(test::named("matmul_512"), Renderer::cpu(4)));
  const auto path = [&](const std::string& opts) {
    const std::optional<Path> p = space.parse(opts);
    EXPECT_TRUE(p.has_value()) << opts;
    return p.value_or(Path{});
  };
  const Path up_unroll = path("UPCAST:1:4,UNROLL:0:4"), unroll_up = path("UNROLL:0:4,UPCAST:1:4");
  EXPECT_NE(space.key(up_unroll), space.key(unroll_up));
  EXPECT_EQ(space.identity(up_unroll), space.identity(unroll_up));
  const Path thread_n = path("TC:0:(-1,0,1),THREAD:1:2"), thread_m = path("TC:0:(-1,0,1),THREAD:0:2");
  EXPECT_EQ(space.features(thread_n), space.features(thread_m));
  EXPECT_NE(space.identity(thread_n), space.identity(thread_m));
  EXPECT_NE(space.identity({}), space.identity(path("UPCAST:1:4")));
  EXPECT_NE(space.identity(path("UPCAST:1:4")), space.identity(path("UNROLL:0:4")));
}

}  // namespace
}  // namespace tunebed::search
