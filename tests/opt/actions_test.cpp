// Random legal opt sequences: legal when re-applied, the same for the same seed.
#include "core/opt/actions.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "tests/opt/kernels.hpp"

namespace tunebed {
namespace {

// The named kernels and every dataset kernel that is one (a few reduce an axis before a loop).
std::vector<UOp> sample_kernels() {
  std::vector<UOp> ks;
  for (const auto& [name, ast] : test::named_kernels()) ks.push_back(ast);
  for (const auto& [line, ast] : test::dataset_kernels()) {
    try {
      Kernel k(ast, Renderer::cpu(1));
      ks.push_back(ast);
    } catch (const std::invalid_argument&) {
    }
  }
  return ks;
}

const std::vector<Renderer>& renderers() {
  static const std::vector<Renderer> rs = {Renderer::cpu(8), Renderer::opencl(), Renderer::cuda(80)};
  return rs;
}

RC_GTEST_PROP(RandomOpts, ReapplyingARandomSequenceInOrderSucceeds, ()) {
  static const auto& kernels = *new std::vector<UOp>(sample_kernels());  // never destroyed: see kernels.hpp
  const UOp& ast = *rc::gen::elementOf(kernels);
  const Renderer& r = *rc::gen::elementOf(renderers());
  uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  Kernel k(ast, r);
  std::vector<Opt> opts = random_opts(k, seed);
  Kernel again(ast, r);
  again.apply_opts(opts);  // throws KernelOptError if any is illegal
  RC_ASSERT(again.applied_opts() == opts);
  RC_ASSERT(random_opts(k, seed) == opts);
}

// Any Opt at all, on any kernel, is applied or refused with a KernelOptError: never another
// exception, never a crash (bad --opts from a user must end as a legality message). why_illegal,
// asked before, gives the same verdict and the same message: its shared-memory bound is predicted
// from the axis sizes, and apply_opt throws a logic_error if the kernel it made is over it.
RC_GTEST_PROP(ApplyOpt, ArbitraryOptsAreAppliedOrRefusedWithAKernelOptErrorAsWhyIllegalSays, ()) {
  static const auto& kernels = *new std::vector<UOp>(sample_kernels());  // never destroyed: see kernels.hpp
  Kernel k(*rc::gen::elementOf(kernels), *rc::gen::elementOf(renderers()));
  auto opts = *rc::gen::container<std::vector<Opt>>(rc::gen::exec([] {
    auto op = static_cast<OptOps>(*rc::gen::inRange(0, 10));
    std::optional<int> axis;
    if (*rc::gen::inRange(0, 8) != 0) axis = *rc::gen::inRange(-2, 10);
    std::variant<std::monostate, int, TCArg> arg;
    int kind = *rc::gen::inRange(0, 8);
    if (kind == 0)
      arg = TCArg{*rc::gen::inRange(-2, 7), *rc::gen::inRange(-1, 4), *rc::gen::inRange(-1, 4)};
    else if (kind != 1)
      arg = *rc::gen::elementOf(std::vector<int>{-3, 0, 1, 2, 3, 4, 7, 8, 16, 29, 32, 64, 256, 1 << 30});
    return Opt{op, axis, arg};
  }));
  int applied = 0;
  for (const Opt& o : opts) {
    const std::optional<std::string> why = k.why_illegal(o);
    try {
      k.apply_opt(o);
      applied++;
      RC_ASSERT(!why.has_value());
    } catch (const KernelOptError& e) {
      RC_ASSERT(why == std::string(e.what()));
    }
  }
  RC_ASSERT(static_cast<int>(k.applied_opts().size()) == applied);
  RC_ASSERT(kernel_info_of(k.get_optimized_ast()).has_value());
}

TEST(RandomOpts, DifferentSeedsExploreDifferentSequences) {
  Kernel k(test::named("matmul_64"), Renderer::opencl());
  std::vector<std::vector<Opt>> seen;
  for (uint64_t seed = 0; seed < 20; seed++) {
    std::vector<Opt> opts = random_opts(k, seed);
    if (std::ranges::find(seen, opts) == seen.end()) seen.push_back(opts);
  }
  EXPECT_GE(seen.size(), 10u);
}

TEST(KernelActions, AllAreLegalAndWithinTheBeamLimits) {
  Kernel k(test::named("matmul_512"), Renderer::opencl());
  auto actions = kernel_actions(k);
  EXPECT_GT(actions.size(), 20u);
  for (const auto& [opt, k2] : actions) {
    SCOPED_TRACE(to_string(opt));
    Kernel again = k;
    again.apply_opt(opt);
    EXPECT_EQ(again.sts(), k2.sts());
    int64_t up = 1;
    for (int a : k2.axes_of({AxisType::UPCAST, AxisType::UNROLL})) up *= k2.full_shape()[a].to_int();
    EXPECT_LE(up, 256);
  }
}

TEST(KernelActions, WholeAxisAmountsAppearOnceAsZero) {
  // max_256x7's reduce axis is 7: UNROLL:0:7 is the same kernel as UNROLL:0:0, listed first.
  Kernel k(test::named("max_256x7"), Renderer::cpu(1));
  std::vector<std::string> unrolls;
  for (const auto& [opt, k2] : kernel_actions(k))
    if (opt.op == OptOps::UNROLL) unrolls.push_back(to_string(opt));
  EXPECT_EQ(unrolls, (std::vector<std::string>{"UNROLL:0:0"}));
}

}  // namespace
}  // namespace tunebed
