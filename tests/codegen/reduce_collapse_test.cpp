// reduce_collapse (core/codegen/reduce_collapse.cpp): tinygrad's arange and one-hot indexing sums
// compile to closed forms, with no loop over the reduced axis, and still compute what the AST
// interpreter computes; sums without a closed form keep their loop.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <fstream>
#include <random>

#include "core/codegen/passes.hpp"
#include "core/codegen/program_vm.hpp"
#include "core/imports/tinygrad_ast.hpp"
#include "core/opt/actions.hpp"
#include "core/opt/kernel.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/symbolic/eval.hpp"
#include "core/tensor/tensor.hpp"
#include "tests/codegen/bounded_property.hpp"
#include "tests/codegen/kernel_check.hpp"
#include "tests/codegen/kernels.hpp"
#include "tests/codegen/workload_kernels.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

// tests/data/collapse-kernels.txt, unoptimized: the dataset's arange, embedding and embedding
// backward at full size, then the embedding at a size the interpreter can check.
std::vector<UOp> collapse_kernels() {
  std::ifstream f(std::string(std::getenv("TUNEBED_SOURCE_DIR") ? std::getenv("TUNEBED_SOURCE_DIR") : ".") +
                  "/tests/data/collapse-kernels.txt");
  std::vector<UOp> out;
  for (std::string line; std::getline(f, line);)
    out.push_back(testing::no_opts(imports::parse_kernel_text(line).ast));
  if (out.size() != 4) throw std::runtime_error("tests/data/collapse-kernels.txt: expected 4 kernels");
  return out;
}

UOp only_kernel(const Tensor& t) {
  std::vector<UOp> asts;
  for (const ScheduleItem& item : create_schedule({t.uop()}).items)
    if (!item.is_copy()) asts.push_back(item.ast.with_arg(Arg(None{})));
  if (asts.size() != 1) throw std::logic_error("expected one kernel");
  return testing::no_opts(asts[0]);
}

int64_t loops(const UOp& ast) {
  int64_t n = 0;
  for (const UOp& u : full_rewrite(ast, Renderer::cpu(1))) n += u.op() == Ops::RANGE;
  return n;
}

// The loop iterations the compiled kernel runs: the product of its RANGE sizes.
double iterations(const UOp& ast) {
  double n = 1;
  for (const UOp& u : full_rewrite(ast, Renderer::cpu(1)))
    if (u.op() == Ops::RANGE) n *= static_cast<double>(u.src(0).vmax());
  return n;
}

// "" when the compiled kernel (run by the program VM) computes what the AST interpreter does.
std::string disagreement(const UOp& ast) {
  const std::vector<HostBuffer> inputs = testing::random_buffers(ast, 7);
  std::vector<HostBuffer> got = inputs;
  std::vector<HostBuffer*> got_ptrs;
  for (HostBuffer& b : got) got_ptrs.push_back(&b);
  run_program(full_rewrite(ast, Renderer::cpu(1)), got_ptrs);
  return testing::wrong_output(ast, inputs, got);
}

TEST(ReduceCollapse, AnArangeIsOneLoopOverItsOutput) {
  for (int64_t n : {7, 1000}) {
    const UOp ast = only_kernel(Tensor::arange(n));
    EXPECT_EQ(loops(ast), 1) << "arange(" << n << ")";
    EXPECT_EQ(disagreement(ast), "") << "arange(" << n << ")";
  }
  const UOp stepped = only_kernel(Tensor::arange(10, -7, -3));
  EXPECT_EQ(loops(stepped), 1);
  EXPECT_EQ(disagreement(stepped), "");
}

TEST(ReduceCollapse, TheDatasetsArangeAndEmbeddingHaveNoLoopOverTheReducedAxes) {
  const std::vector<UOp> k = collapse_kernels();
  EXPECT_EQ(iterations(k[0]), 1179648.0);             // was 1179648^2
  EXPECT_EQ(iterations(k[1]), 4.0 * 512 * 128);       // was 4*512*128*30522^2
  EXPECT_EQ(iterations(k[2]), 30522.0 * 128 * 2048);  // the two-axis sum stays: tinygrad's too
  EXPECT_EQ(iterations(k[3]), 2.0 * 3 * 4);
}

// Dataset line 1689's embedding lookup (tests/data/collapse-kernels.txt) for a batch of b x s, d
// features and a vocabulary of v: out[i, j, k] = w[idx[i, j], k], as tinygrad writes it, a sum
// over the vocabulary of (arange == idx) * w, the arange itself a sum.
std::string embedding_text(int64_t b, int64_t s, int64_t d, int64_t v) {
  auto str = [](int64_t x) { return std::to_string(x); };
  const std::string full = str(b) + "," + str(s) + "," + str(d) + "," + str(v);
  auto view = [](const std::string& shape, const std::string& strides) {
    return "ShapeTracker(views=(View(shape=(" + shape + "),strides=(" + strides +
           "),offset=0,mask=None,contiguous=False),))";
  };
  auto cnst = [](const std::string& dtype, const std::string& value, const std::string& st) {
    return "UOp(Ops.CONST,dtypes." + dtype + ",arg=" + value + ",src=(UOp(Ops.VIEW,dtypes.void,arg=" + st +
           ",src=()),))";
  };
  auto load = [](const std::string& dtype, int64_t size, int arg, const std::string& st) {
    const std::string ptr = "dtypes." + dtype + ".ptr(" + std::to_string(size) + ")";
    return "UOp(Ops.LOAD,dtypes." + dtype + ",arg=None,src=(UOp(Ops.VIEW," + ptr + ",arg=" + st +
           ",src=(UOp(Ops.DEFINE_GLOBAL," + ptr + ",arg=" + std::to_string(arg) + ",src=()),)),))";
  };
  const std::string arange_valid =
      "UOp(Ops.VALID,dtypes.bool,arg=None,src=(UOp(Ops.VIEW,dtypes.void,arg=ShapeTracker(views=(View(shape="
      "(" +
      str(v + 1) + "," + str(2 * v - 1) + "),strides=(0,0),offset=0,mask=((0," + str(v + 1) + "),(" +
      str(v - 1) + "," + str(2 * v - 1) + ")),contiguous=False),View(shape=(" + full + "," + str(v) +
      "),strides=(0,0,0,1," + str(2 * v) + "),offset=0,mask=None,contiguous=False))),src=()),))";
  const std::string zero_strides = view(full + "," + str(v), "0,0,0,0,0"),
                    per_v = view(full + ",1", "0,0,0,0,0");
  const std::string arange =
      "UOp(Ops.ADD,dtypes.int,arg=None,src=(UOp(Ops.REDUCE_AXIS,dtypes.int,arg=(Ops.ADD,(4,)),"
      "src=(UOp(Ops.WHERE,dtypes.int,arg=None,src=(" +
      arange_valid + "," + cnst("int", "1", zero_strides) + "," + cnst("int", "0", zero_strides) + ")),))," +
      cnst("int", "-1", per_v) + "))";
  const std::string idx = load("int", b * s, 1, view(full + ",1", str(s) + ",1,0,0,0"));
  const std::string hit = "UOp(Ops.CMPNE,dtypes.bool,arg=None,src=(UOp(Ops.CMPNE,dtypes.bool,arg=None,src=(" +
                          arange + "," + idx + "))," + cnst("bool", "True", per_v) + "))";
  const std::string w = load("float", v * d, 2, view(full + ",1", "0,0,1," + str(d) + ",0"));
  const std::string out_st = "ShapeTracker(views=(View(shape=(" + str(b) + "," + str(s) + "," + str(d) +
                             ",1,1),strides=(" + str(s * d) + "," + str(d) +
                             ",1,0,0),offset=0,mask=None,contiguous=True),))";
  const std::string out_ptr = "dtypes.float.ptr(" + str(b * s * d) + ")";
  return "UOp(Ops.SINK,dtypes.void,arg=None,src=(UOp(Ops.STORE,dtypes.void,arg=None,src=(UOp(Ops.VIEW," +
         out_ptr + ",arg=" + out_st + ",src=(UOp(Ops.DEFINE_GLOBAL," + out_ptr +
         ",arg=0,src=()),)),UOp(Ops.REDUCE_AXIS,"
         "dtypes.float,arg=(Ops.ADD,(3,)),src=(UOp(Ops.MUL,dtypes.float,arg=None,src=(UOp(Ops.CAST,dtypes."
         "float,"
         "arg=None,src=(" +
         hit + ",))," + w + ")),)),)),))";
}

TEST(ReduceCollapse, TheEmbeddingTextIsTheDatasetsLine) {
  const std::vector<UOp> k = collapse_kernels();
  EXPECT_EQ(testing::no_opts(imports::parse_kernel_text(embedding_text(4, 512, 128, 30522)).ast), k[1]);
  EXPECT_EQ(testing::no_opts(imports::parse_kernel_text(embedding_text(2, 3, 4, 10)).ast), k[3]);
}

// Under random legal opts: the program VM agrees with the interpreter, and the unoptimized
// programs have no loop over the vocabulary or the arange.
TEST(ReduceCollapse, ArangesAndEmbeddingsUnderRandomOptsComputeWhatTheInterpreterDoes) {
  testing::check_bounded_property(60, [] {
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    UOp ast;
    if (*rc::gen::arbitrary<bool>()) {
      const auto start = *rc::gen::inRange<int64_t>(-20, 20), stop = *rc::gen::inRange<int64_t>(-20, 20);
      const auto step = *rc::gen::element<int64_t>(-3, -1, 1, 2, 5);
      RC_PRE((stop - start) * step > 0);
      ast = only_kernel(Tensor::arange(start, stop, step));
    } else {
      // Sizes of 2 and more: the text's views are canonical only without size-1 axes.
      const auto b = *rc::gen::inRange<int64_t>(2, 4), s = *rc::gen::inRange<int64_t>(2, 5);
      const auto d = *rc::gen::inRange<int64_t>(2, 9), v = *rc::gen::inRange<int64_t>(2, 20);
      ast = testing::no_opts(imports::parse_kernel_text(embedding_text(b, s, d, v)).ast);
      RC_ASSERT(loops(ast) <= 3);
    }
    RC_ASSERT(disagreement(ast) == "");
    Kernel k(ast, Renderer::cpu(2));
    k.apply_opts(random_opts(k, seed, 4));
    RC_ASSERT(disagreement(k.get_optimized_ast()) == "");
  });
}

TEST(ReduceCollapse, AnEmbeddingLookupComputesWhatTheInterpreterDoes) {
  // Inputs are nonzero in [-8, 8]: some indices are negative, and a lookup outside [0, 10) is 0.
  EXPECT_EQ(disagreement(collapse_kernels()[3]), "");
}

// out[i] = sum over r of a[i + r - 11] where i + r >= 11: tinygrad's cumsum of 12 floats (a padded
// view read through a reshape).
constexpr const char* kPrefixSum =
    "UOp(Ops.SINK,dtypes.void,arg=None,src=(UOp(Ops.STORE,dtypes.void,arg=None,src=(UOp(Ops.VIEW,"
    "dtypes.float.ptr(12),arg=ShapeTracker(views=(View(shape=(12,1),strides=(1,0),offset=0,mask=None,"
    "contiguous=True),)),src=(UOp(Ops.DEFINE_GLOBAL,dtypes.float.ptr(12),arg=0,src=()),)),UOp(Ops.REDUCE_"
    "AXIS,"
    "dtypes.float,arg=(Ops.ADD,(1,)),src=(UOp(Ops.LOAD,dtypes.float,arg=None,src=(UOp(Ops.VIEW,"
    "dtypes.float.ptr(12),arg=ShapeTracker(views=(View(shape=(13,23),strides=(0,1),offset=-11,"
    "mask=((0,13),(11,23)),contiguous=False),View(shape=(12,12),strides=(1,24),offset=0,mask=None,"
    "contiguous=False))),src=(UOp(Ops.DEFINE_GLOBAL,dtypes.float.ptr(12),arg=1,src=()),)),)),)),)),))";

// A gate i == r folds together with the sum around it: the sum over r of (i == r ? a[r] : 0) is
// a[i]. A load gated by i == r is not such a sum's term by itself, and each rule is an equality on
// its own: none moves the gate's r into the index, which would leave a load without r for the
// sum to multiply by n.
TEST(ReduceCollapse, AOneHotGateFoldsWithItsSumOnly) {
  const UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(16), {}, Arg(1));
  const UOp r = UOp::make(Ops::RANGE, dtypes::index, {UOp::index(16)}, Arg(int64_t{7}));
  const UOp idx = UOp::variable("i", 0, 20);
  auto sum = [&](const UOp& x) { return UOp::make(Ops::REDUCE, dtypes::float32, {x, r}, Arg(Ops::ADD)); };
  const UOp load_r = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, buf.dtype(), {buf, r})});
  const UOp one_hot = sum(idx.eq(r).where(load_r, UOp::const_float(dtypes::float32, 0)));
  const UOp folded = codegen_detail::reduce_collapse(one_hot);
  ASSERT_TRUE(folded);
  ASSERT_EQ(folded.op(), Ops::LOAD);
  EXPECT_EQ(folded.src(0).src(1), idx);  // a[i], gated by 0 <= i < 16
  EXPECT_EQ(folded.src(0).src().size(), 3u);

  const UOp gated =
      UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, buf.dtype(), {buf, r, idx.eq(r)})});
  EXPECT_FALSE(codegen_detail::reduce_collapse(sum(gated)));
}

// Each fold is an equality: for every value of the variables, the closed form equals the loop it
// replaces, summed by brute force (the symbolic evaluator, no codegen). A cast of r to uint32 is
// compared as unsigned, which UOp::min's negation does not order: that sum keeps its loop (folded,
// it gave 0 where the loop sums 6, for uint32(r) < 0u ? 0 : 1).
// A sum over an axis its summand does not read is the summand times the axis's size, plus +0.0:
// the loop starts at +0.0, so summing -0.0 gives +0.0, where 3 * -0.0 is -0.0 and 1 / that is
// -inf (fuzz_rewrite's finding, fuzz/corpus/rewrite/regress-sum-of-negative-zeros).
TEST(ReduceCollapse, ASumOfNegativeZerosIsPositiveZero) {
  HostBuffer out(dtypes::float32, 4), negative(dtypes::float32, 4);
  for (int64_t k = 0; k < 4; k++) negative.set_float(k, -1.0 - static_cast<double>(k));
  const Tensor b = Tensor::from_host(negative, {4});
  // The MUL keeps the scheduler's stride-0 rule off the reduce, so codegen's loop is left to fold.
  const UOp ast = only_kernel((b.reshape({4, 1}).expand({4, 3}) * 0.0).sum({1}).reciprocal());
  EXPECT_EQ(loops(ast), 1);  // the reduce's loop is gone
  run_program(full_rewrite(ast, Renderer::cpu(1)), {&out, &negative});
  for (int64_t k = 0; k < 4; k++) EXPECT_EQ(out.get_float(k), INFINITY) << "element " << k;
}

TEST(ReduceCollapse, EveryFoldEqualsTheLoopItReplaces) {
  const int64_t n = 6;
  const UOp r = UOp::make(Ops::RANGE, dtypes::index, {UOp::index(n)}, Arg(int64_t{9}));
  const UOp c = UOp::variable("c", 0, 20), i = UOp::variable("i", -4, 0);
  const std::vector<std::pair<std::string, UOp>> gates = {
      {"r + i < c", (r + i).lt(c)},
      {"r*3 + i < c", (r * 3 + i).lt(c)},
      {"int64(r) < int64(c - 7)", r.cast(dtypes::int64).lt((c - 7).cast(dtypes::int64))},
      {"uint32(r) < uint32(c - 7)", r.cast(dtypes::uint32).lt((c - 7).cast(dtypes::uint32))},
  };
  int folds = 0;
  for (const auto& [text, gate] : gates) {
    for (auto [yes, no] : {std::pair<int64_t, int64_t>{0, 1}, {1, 0}, {0, 5}, {7, 0}}) {
      const UOp value = gate.where(UOp::const_int(dtypes::int32, yes), UOp::const_int(dtypes::int32, no));
      const UOp folded =
          codegen_detail::reduce_collapse(UOp::make(Ops::REDUCE, dtypes::int32, {value, r}, Arg(Ops::ADD)));
      if (!folded) continue;
      folds++;
      // The value of an expression at c = cv, i = iv (it may read only one of them).
      auto at = [](const UOp& e, int64_t cv, int64_t iv) {
        const Evaluator ev(e);
        std::vector<int64_t> values;
        for (const std::string& name : ev.var_names()) values.push_back(name == "c" ? cv : iv);
        return ev.eval(values).i;
      };
      for (int64_t cv = 0; cv <= 20; cv++)
        for (int64_t iv = -4; iv <= 0; iv++) {
          int64_t loop = 0;
          for (int64_t k = 0; k < n; k++)
            loop += at(codegen_detail::substitute(value, {{r, UOp::index(k)}}), cv, iv);
          ASSERT_EQ(at(folded, cv, iv), loop)
              << text << " ? " << yes << " : " << no << ", c=" << cv << " i=" << iv;
        }
    }
  }
  EXPECT_EQ(folds, 12);  // the three signed gates, each way
}

TEST(ReduceCollapse, SumsWithoutAClosedFormKeepTheirLoop) {
  // A sum of loads over r, and a prefix sum (a gated load of r, the gate r <= i): no rule
  // removes r, and what the rules did on the way is thrown away.
  EXPECT_EQ(loops(testing::no_opts(testing::sum_rows(8, 16))), 2);
  const UOp prefix = testing::no_opts(imports::parse_kernel_text(kPrefixSum).ast);
  EXPECT_EQ(loops(prefix), 2);
  EXPECT_EQ(disagreement(prefix), "");
}

}  // namespace
}  // namespace tunebed
