// The AST interpreter against the reference: a schedule run item by item computes what the
// reference interpreter computes for the tensor graph, both within the derived error bounds of the
// schedule's exact run (core/engine/check.hpp).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "core/engine/check.hpp"
#include "core/ir/text.hpp"
#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/tensor/random_program.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed {
namespace {

class RapidCheckSource final : public RandomSource {
 public:
  // fixed at the nominal size, so even the first cases are programs of some depth
  int64_t integer(int64_t lo, int64_t hi) override {
    return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<int64_t>(lo, hi + 1));
  }
};

BufferData deep_copy(const BufferData& b) {
  BufferData out;
  for (const auto& [id, buf] : b) out[id] = std::make_shared<HostBuffer>(*buf);
  return out;
}

// "" when the first element where A and WANT disagree is none, else where, naming WHO.
std::string off(const std::string& who, const HostBuffer& a, const Expected& want) {
  const Verdict v = check_output(a, want);
  return v.ok ? "" : who + ": " + v.message;
}

// Where scheduling + the AST interpreter (in the dtypes) or the reference disagree with the
// schedule's exact run, or "". The exact run's bound of each element is derived from that
// element's own operands (core/ir/error_bound.hpp): its dtypes, its sums' lengths, their terms.
std::string mismatch(const Tensor& out, size_t* kernels = nullptr) {
  const Schedule s = create_schedule({out.uop()});
  if (kernels) *kernels = s.items.size();
  BufferData data = deep_copy(out.buffers());
  run_schedule(s, data);
  const Expected want = expect_output(s, out.buffers());
  const std::string interpreted = off("the AST interpreter", read_output(s.outputs.at(0), data), want);
  if (!interpreted.empty()) return interpreted;
  return off("the reference", reference::to_host(reference::evaluate(out.uop(), out.buffers())), want);
}

RC_GTEST_PROP(AstInterpreterProperty, ScheduleRunItemByItemMatchesTheReference, ()) {
  RapidCheckSource source;
  const RandomProgram program = random_program(source, {.max_depth = 6, .max_rank = 4, .max_dim = 5});
  std::string bad;
  size_t kernels = 0;
  try {
    bad = mismatch(program.output, &kernels);
  } catch (const std::exception& e) {
    bad = std::string("threw: ") + e.what();
  }
  if (!bad.empty()) RC_FAIL(bad + " in\n" + print_uop(program.output.uop()));
  RC_CLASSIFY(kernels == 0, "no kernel (a view of an input)");
  RC_CLASSIFY(kernels == 1, "one kernel");
  RC_CLASSIFY(kernels > 1, "several kernels");
}

TEST(AstInterpreter, WorkloadsMatchTheReference) {
  for (const char* spec : {"matmul:M=6,N=5,K=7", "softmax:M=4,N=9", "layernorm:M=3,N=8",
                           "conv2d:C=3,H=6,W=6,K=4", "attention:B=1,H=2,S=4,D=8", "transpose:M=5,N=7"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(mismatch(make_workload(spec).output), "");
  }
}

// A reduce computes its terms a block of 64 lanes at a time (ast_interpreter.cpp's LanePlan): sums
// longer than a block and not a multiple of it, over two axes (the outer one stepped between
// blocks), through masked views, with a WHERE or a nested reduce in the terms (computed lane by
// lane), and a max (not a float sum).
TEST(AstInterpreter, ReducesLongerThanABlockOfLanesMatchTheReference) {
  for (const char* spec : {"matmul:M=3,N=5,K=150", "softmax:M=3,N=130", "layernorm:M=2,N=200"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(mismatch(make_workload(spec).output), "");
  }
  const Tensor x = Tensor::randn({3, 70, 3}, 5);
  EXPECT_EQ(mismatch(x.sum({1, 2})), "");
  EXPECT_EQ(mismatch(x.pad({{0, 0}, {5, 60}, {0, 0}}).sum({1})), "");
  EXPECT_EQ(mismatch(x.relu().sum({1})), "");
  EXPECT_EQ(mismatch((x - x.max({1}, true)).exp().sum({1})), "");
  EXPECT_EQ(mismatch(x.max({1})), "");
  EXPECT_EQ(mismatch(x.flip({1}).shrink({{0, 3}, {1, 69}, {0, 3}}).sum({1})), "");
}

TEST(AstInterpreter, ReadsThroughMaskedViews) {
  const Tensor x = Tensor::randn({4, 5}, 3);
  EXPECT_EQ(mismatch(x.pad({{1, 2}, {0, 1}}) * 2 + 1), "");
  EXPECT_EQ(mismatch(x.shrink({{1, 3}, {2, 5}}).flip({0}).contiguous()), "");
}

// The scheduler's sum over a stride-0 axis is x * n + 0.0: n copies of -0.0 sum to +0.0, and
// 1 / that is +inf, as in the reference.
TEST(AstInterpreter, ASumOfNegativeZerosOverAnExpandIsPositiveZero) {
  HostBuffer negative(dtypes::float32, 4);
  for (int64_t k = 0; k < 4; k++) negative.set_float(k, -1.0 - static_cast<double>(k));
  const Tensor zeros = Tensor::from_host(negative, {4}) * 0.0;
  EXPECT_EQ(mismatch(zeros.contiguous().reshape({4, 1}).expand({4, 3}).sum({1}).reciprocal()), "");
}

// An exact run skips reading the bounds of an input whose bounds are all zero; one with a bound
// carries it into every output that reads it.
TEST(AstInterpreter, AnExactRunCarriesAnInputsBoundIntoItsSum) {
  const Workload w = make_workload("sum:M=4,N=8,axis=rows,dtype=float32");
  UOp ast;
  for (const ScheduleItem& item : create_schedule({w.output.uop()}).items)
    if (!item.is_copy()) ast = item.ast;
  std::vector<HostBuffer> values, bounds;
  for (auto [dtype, size] : ast_buffer_specs(ast)) {
    values.push_back(widened(HostBuffer(dtype, size)));
    bounds.emplace_back(dtypes::float64, size);
    if (values.size() > 1) fill_random(values.back(), values.size());
  }
  auto output_bounds = [&] {
    std::vector<HostBuffer*> v, b;
    for (size_t i = 0; i < values.size(); i++) {
      v.push_back(&values[i]);
      b.push_back(&bounds[i]);
    }
    run_kernel_ast_exact(ast, v, b);
    std::vector<double> out;
    for (int64_t i = 0; i < bounds[0].numel(); i++) out.push_back(bounds[0].get_float(i));
    return out;
  };
  const std::vector<double> exact_inputs = output_bounds();
  bounds[1].set_float(3, 0.5);  // row 0, column 3
  const std::vector<double> one_inexact = output_bounds();
  ASSERT_EQ(one_inexact.size(), 4u);
  EXPECT_GE(one_inexact[0], exact_inputs[0] + 0.5);
  for (size_t row = 1; row < 4; row++) EXPECT_EQ(one_inexact[row], exact_inputs[row]);
}

// Split over threads, an exact run computes what it computes on one, sampled or not (the sample
// is of the whole index space, not of each thread's part).
TEST(AstInterpreter, AnExactRunOnThreadsIsTheRunOnOne) {
  for (const char* spec : {"matmul:M=33,N=17,K=9", "softmax:M=7,N=13", "conv2d:C=3,H=6,W=6,K=4"}) {
    const Workload w = make_workload(spec);
    for (const ScheduleItem& item : create_schedule({w.output.uop()}).items) {
      if (item.is_copy()) continue;
      std::vector<HostBuffer> bufs;
      for (auto [dtype, size] : ast_buffer_specs(item.ast)) {
        bufs.emplace_back(dtype, size);
        if (bufs.size() > 1) fill_random(bufs.back(), bufs.size());
      }
      for (int64_t budget : {INT64_MAX, ast_iterations(item.ast) / 5}) {
        SCOPED_TRACE(std::string(spec) + ", budget " + std::to_string(budget));
        const std::vector<Expected> one = expect_kernel_ast(item.ast, bufs, {}, budget, 1);
        for (int threads : {2, 3}) {
          const std::vector<Expected> split = expect_kernel_ast(item.ast, bufs, {}, budget, threads);
          for (size_t i = 0; i < one.size(); i++) {
            EXPECT_EQ(split[i].value, one[i].value) << "buffer " << i << ", " << threads << " threads";
            for (size_t k = 0; k < one[i].bound.size(); k++)
              ASSERT_EQ(std::isnan(split[i].bound[k]) ? -1 : split[i].bound[k],
                        std::isnan(one[i].bound[k]) ? -1 : one[i].bound[k])
                  << "buffer " << i << " element " << k << ", " << threads << " threads";
          }
        }
      }
    }
  }
}

// The split's guard (exact_run_splits): out[i] = 2 in[i] over 3 elements splits; a STORE whose view
// sends every index to one element, or a kernel that LOADs the buffer it STOREs, stays on one
// thread, where split parts would race for an element or read what another part writes.
TEST(AstInterpreter, AnExactRunSplitsOnlyWhereNoPartCanTouchAnothersElements) {
  const auto kernel = [](int store_stride, int load_from) {
    const auto view = [](int stride, int of) {
      return "VIEW float32.ptr(3) arg=ShapeTracker(views=(View(shape=(3,), strides=(" + std::to_string(stride) +
             ",), offset=0, mask=None, contiguous=" + (stride == 1 ? "True" : "False") + "),)) src=(u" +
             std::to_string(of) + ")\n";
    };
    return parse_uop("u0 = DEFINE_GLOBAL float32.ptr(3) arg=0\n"
                     "u1 = " + view(store_stride, 0) +
                     "u2 = DEFINE_GLOBAL float32.ptr(3) arg=1\n"
                     "u3 = " + view(1, load_from) +
                     "u4 = LOAD float32 src=(u3)\n"
                     "u5 = ADD float32 src=(u4, u4)\n"
                     "u6 = STORE void src=(u1, u5)\n"
                     "u7 = SINK void src=(u6)\n");
  };
  HostBuffer out(dtypes::float32, 3), in(dtypes::float32, 3);
  const std::vector<HostBuffer*> bufs = {&out, &in};
  EXPECT_TRUE(exact_run_splits(kernel(1, 2), bufs));
  EXPECT_FALSE(exact_run_splits(kernel(0, 2), bufs));  // every index stores element 0
  EXPECT_FALSE(exact_run_splits(kernel(1, 0), bufs));  // in place: out[i] = 2 out[i]
}

// A whole schedule's exact run (what `run --check` and a workload's cross-check compute) passes its
// threads to each kernel: the same expectation, several kernels deep and sampled at the last.
TEST(AstInterpreter, AScheduleRunOnThreadsIsTheRunOnOne) {
  int sampled_runs = 0;
  for (const char* spec : {"softmax:M=7,N=13", "layernorm:M=5,N=9", "matmul:M=33,N=17,K=9", "mlp:B=4,IN=8,HIDDEN=16,OUT=8"}) {
    const Workload w = make_workload(spec);
    const Schedule s = create_schedule({w.output.uop()});
    // Sampled where only the last kernel is past the budget (an earlier one past it throws).
    std::vector<int64_t> budgets = {INT64_MAX};
    int64_t earlier = 0;
    for (size_t i = 0; i + 1 < s.items.size(); i++)
      if (!s.items[i].is_copy()) earlier = std::max(earlier, ast_iterations(s.items[i].ast));
    if (const int64_t sampled = ast_iterations(s.items.back().ast) / 5; sampled >= earlier) budgets.push_back(sampled);
    for (int64_t budget : budgets) {
      SCOPED_TRACE(std::string(spec) + ", budget " + std::to_string(budget));
      sampled_runs += budget != INT64_MAX;
      const Expected one = expect_output(s, w.output.buffers(), 0, budget, 1);
      const Expected two = expect_output(s, w.output.buffers(), 0, budget, 2);
      EXPECT_EQ(two.value, one.value);
      ASSERT_EQ(two.bound.size(), one.bound.size());
      for (size_t k = 0; k < one.bound.size(); k++)
        ASSERT_EQ(std::isnan(two.bound[k]) ? -1 : two.bound[k], std::isnan(one.bound[k]) ? -1 : one.bound[k]) << k;
    }
  }
  EXPECT_GE(sampled_runs, 1);
}

TEST(AstInterpreter, RejectsAnAstWithoutStores) {
  const UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, int64_t{0});
  EXPECT_THROW(run_kernel_ast(UOp::make(Ops::SINK, dtypes::void_, {g}), {}), AstInterpreterError);
}

}  // namespace
}  // namespace tunebed
