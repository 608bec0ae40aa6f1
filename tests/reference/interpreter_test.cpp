// The reference's own semantics on hand-built graphs: integer wraparound and C division,
// float16 rounding per node, ASSIGN writes, and errors for graphs it cannot evaluate.
#include <gtest/gtest.h>

#include <cmath>

#include "core/reference/reference.hpp"
#include "core/tensor/graph.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

using reference::evaluate;
using reference::ReferenceError;

std::vector<double> eval(const UOp& u, const BufferData& b = {}) {
  const reference::Array a = evaluate(u, b);
  std::vector<double> out;
  for (int64_t k = 0; k < a.numel(); k++) out.push_back(a.as_double(k));
  return out;
}

UOp konst(DType d, double v) { return const_uop(d, v, "CPU"); }

TEST(ReferenceSemantics, IntegersWrapAndDivideAsC) {
  const UOp a = konst(dtypes::int8, 100), b = konst(dtypes::int8, 100);
  EXPECT_EQ(eval(UOp::make(Ops::ADD, dtypes::int8, {a, b})), std::vector<double>{-56});
  const UOp m7 = konst(dtypes::int32, -7), two = konst(dtypes::int32, 2);
  EXPECT_EQ(eval(UOp::make(Ops::IDIV, dtypes::int32, {m7, two})), std::vector<double>{-3});
  EXPECT_EQ(eval(UOp::make(Ops::MOD, dtypes::int32, {m7, two})), std::vector<double>{-1});
  const UOp big = konst(dtypes::uint32, 4000000000.0);
  EXPECT_EQ(eval(UOp::make(Ops::CMPLT, dtypes::bool_, {konst(dtypes::uint32, 1), big})),
            std::vector<double>{1});
  EXPECT_EQ(eval(UOp::make(Ops::CAST, dtypes::int32, {konst(dtypes::float32, -2.9)})),
            std::vector<double>{-2});
}

TEST(ReferenceSemantics, DivisionByZeroAndBadShiftsAreErrors) {
  const UOp zero = konst(dtypes::int32, 0), one = konst(dtypes::int32, 1);
  EXPECT_THROW(eval(UOp::make(Ops::IDIV, dtypes::int32, {one, zero})), ReferenceError);
  EXPECT_THROW(eval(UOp::make(Ops::SHL, dtypes::int32, {one, konst(dtypes::int32, 40)})), ReferenceError);
  EXPECT_EQ(eval(UOp::make(Ops::SHL, dtypes::int32, {one, konst(dtypes::int32, 31)})),
            std::vector<double>{-2147483648.0});
  // Floats divide by zero as IEEE does.
  EXPECT_EQ(eval(UOp::make(Ops::RECIP, dtypes::float32, {konst(dtypes::float32, 0)})),
            std::vector<double>{INFINITY});
}

TEST(ReferenceSemantics, Float16RoundsAfterEveryNode) {
  // 2048 + 1 is 2048 in float16, so (2048 + 1) + 1 is too; in float32 it would be 2050.
  const UOp x = konst(dtypes::float16, 2048), one = konst(dtypes::float16, 1);
  EXPECT_EQ(eval(UOp::make(Ops::ADD, dtypes::float16, {UOp::make(Ops::ADD, dtypes::float16, {x, one}), one})),
            std::vector<double>{2048});
  EXPECT_EQ(
      eval(UOp::make(Ops::MUL, dtypes::float16, {konst(dtypes::float16, 300), konst(dtypes::float16, 300)})),
      std::vector<double>{INFINITY});
}

TEST(ReferenceSemantics, AssignWritesAreReturnedNotApplied) {
  Tensor a = Tensor::from_values({1, 2, 3}, {3});
  const UOp buf = a.uop().op() == Ops::BUFFER ? a.uop() : a.uop().src(0);
  const Tensor value = a * 2;
  const UOp assign = UOp::make(Ops::ASSIGN, dtypes::float32, {a.uop(), value.uop()});
  const reference::Evaluation ev = evaluate(std::vector<UOp>{assign, a.uop()}, value.buffers());
  ASSERT_EQ(ev.writes.size(), 1u);
  EXPECT_EQ(ev.writes[0].first, buffer_id(buf));
  EXPECT_EQ(ev.writes[0].second.get_float(2), 6);
  EXPECT_EQ(ev.outputs[0].f, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(ev.outputs[1].f, (std::vector<double>{1, 2, 3}));  // the buffer as it was
}

TEST(ReferenceSemantics, MalformedGraphsAreErrorsNamingTheOp) {
  const UOp buf = new_buffer("CPU", 4, dtypes::float32);
  try {
    evaluate(buf, {});
    FAIL() << "no error";
  } catch (const ReferenceError& e) {
    EXPECT_EQ(std::string(e.what()), "BUFFER: no host data for buffer " + std::to_string(buffer_id(buf)));
  }
  BufferData data{{buffer_id(buf), std::make_shared<HostBuffer>(dtypes::float32, 4)}};
  const UOp bad_reshape = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Arg::ints(std::vector<int64_t>{3}));
  try {
    evaluate(bad_reshape, data);
    FAIL() << "no error";
  } catch (const ReferenceError& e) {
    EXPECT_EQ(std::string(e.what()), "RESHAPE: cannot reshape (4,) to (3,)");
  }
  const UOp wrong_kind = UOp::make(Ops::PERMUTE, dtypes::float32, {buf}, Arg("nonsense"));
  EXPECT_THROW(evaluate(wrong_kind, data), ReferenceError);
  const UOp mixed = UOp::make(Ops::ADD, dtypes::float32, {buf, konst(dtypes::float32, 1)});
  EXPECT_THROW(evaluate(mixed, data), ReferenceError);  // (4,) + (): shapes differ
  EXPECT_THROW(evaluate(UOp::make(Ops::RANGE, dtypes::int32, {konst(dtypes::int32, 4)}), data),
               ReferenceError);
}

}  // namespace
}  // namespace tunebed
