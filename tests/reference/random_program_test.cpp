// The property over random tensor programs: the reference evaluates every one without error, and
// agrees element by element with the scalar evaluator of scalar_eval.hpp, within a tolerance by
// dtype (exactly for integers).
#include "core/tensor/random_program.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "core/ir/text.hpp"
#include "core/reference/reference.hpp"
#include "scalar_eval.hpp"

namespace tunebed {
namespace {

// RapidCheck as the RandomSource: every choice is a generated value, so failures shrink.
class RapidCheckSource final : public RandomSource {
 public:
  // inRange scales with RapidCheck's size, which starts near 0; fix it at the nominal size so even the
  // first cases are programs of some depth.
  int64_t integer(int64_t lo, int64_t hi) override {
    return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<int64_t>(lo, hi + 1));
  }
};

bool close(const DType& d, double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  const double tol = d == dtypes::float16 || d == dtypes::bfloat16 ? 1e-2 : d.is_float() ? 1e-4 : 0;
  return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) idx[k] = flat % shape[k], flat /= shape[k];
  return idx;
}

RC_GTEST_PROP(ReferenceProperty, RandomProgramsEvaluateAndMatchTheScalarEvaluator, ()) {
  RapidCheckSource source;
  const RandomProgram program = random_program(source, {.max_depth = 6, .max_rank = 4, .max_dim = 5});
  const Tensor& out = program.output;
  reference::Array got;
  try {
    got = reference::evaluate(out.uop(), out.buffers());
  } catch (const std::exception& e) {
    RC_FAIL(std::string("reference failed: ") + e.what());
  }
  RC_ASSERT(got.shape == out.shape());
  RC_ASSERT(got.dtype == out.dtype());
  testing::ScalarEvaluator scalar(out.buffers());
  for (int64_t k = 0; k < got.numel(); k++) {
    const testing::ScalarValue want = scalar.at(out.uop(), unflatten(k, out.shape()));
    const double w = out.dtype().is_float() ? want.f : static_cast<double>(want.i);
    if (!close(out.dtype(), got.as_double(k), w)) {
      RC_FAIL("element " + std::to_string(k) + " of " + to_string(out.dtype()) + ": reference " +
              std::to_string(got.as_double(k)) + ", scalar evaluator " + std::to_string(w) + " in\n" +
              print_uop(out.uop()));
    }
  }
}

// The generator is a pure function of its choices: a seeded source rebuilds the same program.
TEST(RandomProgram, SameChoicesSameProgram) {
  for (uint64_t seed = 0; seed < 20; seed++) {
    SplitMixSource a(seed), b(seed);
    const RandomProgram pa = random_program(a), pb = random_program(b);
    EXPECT_EQ(pa.output.uop().op(), pb.output.uop().op());
    EXPECT_EQ(pa.output.shape(), pb.output.shape());
    EXPECT_EQ(pa.inputs.size(), pb.inputs.size());
    EXPECT_EQ(reference::to_host(reference::evaluate(pa.output.uop(), pa.output.buffers())),
              reference::to_host(reference::evaluate(pb.output.uop(), pb.output.buffers())));
  }
}

// Over many seeds the generator reaches every kind of op it promises.
TEST(RandomProgram, CoversElementwiseReduceMovementAndMatmul) {
  std::map<Ops, int> seen;
  for (uint64_t seed = 0; seed < 300; seed++) {
    SplitMixSource s(seed);
    for (const UOp& u : random_program(s).output.uop().toposort()) seen[u.op()]++;
  }
  for (Ops op :
       {Ops::ADD, Ops::MUL, Ops::MAX, Ops::EXP2, Ops::LOG2, Ops::REDUCE_AXIS, Ops::RESHAPE, Ops::PERMUTE,
        Ops::EXPAND, Ops::PAD, Ops::SHRINK, Ops::FLIP, Ops::CAST, Ops::WHERE, Ops::CMPLT})
    EXPECT_GT(seen[op], 0) << op_name(op);
}

}  // namespace
}  // namespace tunebed
