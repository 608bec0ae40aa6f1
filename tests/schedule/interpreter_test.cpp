// The AST interpreter against the reference: a schedule run item by item computes what the
// reference interpreter computes for the tensor graph, within a tolerance by dtype.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

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

// How far a result may be from the reference: exact for integers. Floats get a tolerance relative
// to the result by the least precise float dtype anywhere in the graph (the reference rounds some
// intermediates differently, e.g. it keeps a matmul's half products exact), plus, where float16 or
// bfloat16 intermediates exist, four units in the last place of the largest of them: a result that
// is a small difference of large half intermediates moves by a whole intermediate ulp when one of
// them rounds the other way (seed 11070027598836708073: half intermediates near 34, a result near
// 0.35 off by 0.031, one ulp at 32).
struct Tolerance {
  double rel = 0, abs = 0;
};

Tolerance tolerance(const Tensor& out) {
  const UOp& graph = out.uop();
  if (!graph.dtype().is_float()) return {};
  std::vector<UOp> low_precision;
  for (const UOp& u : graph.toposort())
    if (u.dtype() == dtypes::float16 || u.dtype() == dtypes::bfloat16) low_precision.push_back(u);
  if (low_precision.empty()) return {.rel = 1e-4};
  double ulp = 0;
  const reference::Evaluation values = reference::evaluate(low_precision, out.buffers());
  for (size_t n = 0; n < low_precision.size(); n++) {
    const int mantissa_bits = low_precision[n].dtype() == dtypes::float16 ? 10 : 7;
    for (double v : values.outputs[n].f)
      if (std::isfinite(v) && v != 0) ulp = std::max(ulp, std::ldexp(1.0, std::ilogb(v) - mantissa_bits));
  }
  return {.rel = 2e-2, .abs = 4 * ulp};
}

bool close(const Tolerance& tol, double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol.rel * (1 + std::fabs(want)) + tol.abs;
}

BufferData deep_copy(const BufferData& b) {
  BufferData out;
  for (const auto& [id, buf] : b) out[id] = std::make_shared<HostBuffer>(*buf);
  return out;
}

// The first element where scheduling + the AST interpreter and the reference disagree, or "".
std::string mismatch(const Tensor& out, size_t* kernels = nullptr) {
  const Schedule s = create_schedule({out.uop()});
  if (kernels) *kernels = s.items.size();
  BufferData data = deep_copy(out.buffers());
  run_schedule(s, data);
  const HostBuffer got = read_output(s.outputs.at(0), data);
  const HostBuffer want = reference::to_host(reference::evaluate(out.uop(), out.buffers()));
  if (got.numel() != want.numel())
    return std::to_string(got.numel()) + " elements, the reference has " + std::to_string(want.numel());
  const Tolerance tol = tolerance(out);
  for (int64_t k = 0; k < got.numel(); k++)
    if (!close(tol, got.get_float(k), want.get_float(k)))
      return "element " + std::to_string(k) + " of " + to_string(out.dtype()) + ": " +
             std::to_string(got.get_float(k)) + ", reference " + std::to_string(want.get_float(k));
  return "";
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

TEST(AstInterpreter, RejectsAnAstWithoutStores) {
  const UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, int64_t{0});
  EXPECT_THROW(run_kernel_ast(UOp::make(Ops::SINK, dtypes::void_, {g}), {}), AstInterpreterError);
}

}  // namespace
}  // namespace tunebed
