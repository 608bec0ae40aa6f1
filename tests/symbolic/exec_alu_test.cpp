// exec_alu (core/ir/exec_alu.hpp): C truncation, wraparound, IEEE rounding, comparisons, casts,
// and the defined results of what C leaves undefined.
#include "core/ir/exec_alu.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>

#include "core/ir/uop.hpp"

namespace tunebed {
namespace {

ConstValue I(DType d, int64_t v) { return ConstValue::integer(d, v); }
ConstValue F(DType d, double v) { return ConstValue::real(d, v); }

int64_t run_int(Ops op, DType d, std::initializer_list<int64_t> xs) {
  std::vector<ConstValue> ops;
  for (int64_t x : xs) ops.push_back(I(d, x));
  return exec_alu(op, d, ops).i;
}

double run_float(Ops op, DType d, std::initializer_list<double> xs) {
  std::vector<ConstValue> ops;
  for (double x : xs) ops.push_back(F(d, x));
  return exec_alu(op, d, ops).f;
}

TEST(ExecAlu, DivisionTruncatesTowardZeroAndModFollowsTheDividend) {
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int32, {7, 2}), 3);
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int32, {-7, 2}), -3);
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int32, {7, -2}), -3);
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int32, {-7, -2}), 3);
  EXPECT_EQ(run_int(Ops::MOD, dtypes::int32, {-7, 2}), -1);
  EXPECT_EQ(run_int(Ops::MOD, dtypes::int32, {7, -2}), 1);
  EXPECT_EQ(run_int(Ops::MOD, dtypes::int32, {-7, -2}), -1);
}

TEST(ExecAlu, DivisionByZeroAndOverflowAreDefined) {
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int64, {7, 0}), 0);
  EXPECT_EQ(run_int(Ops::MOD, dtypes::int64, {7, 0}), 7);
  int64_t min32 = std::numeric_limits<int32_t>::min(), min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int32, {min32, -1}), min32);
  EXPECT_EQ(run_int(Ops::MOD, dtypes::int32, {min32, -1}), 0);
  EXPECT_EQ(run_int(Ops::IDIV, dtypes::int64, {min64, -1}), min64);
}

TEST(ExecAlu, IntegersWrapToTheirDtype) {
  EXPECT_EQ(run_int(Ops::ADD, dtypes::int8, {127, 1}), -128);
  EXPECT_EQ(run_int(Ops::MUL, dtypes::int8, {16, 16}), 0);
  EXPECT_EQ(run_int(Ops::ADD, dtypes::int32, {2147483647, 1}), -2147483648LL);
  EXPECT_EQ(run_int(Ops::MUL, dtypes::int32, {65536, 65536}), 0);
  EXPECT_EQ(run_int(Ops::ADD, dtypes::uint32, {4294967295LL, 2}), 1);
  EXPECT_EQ(run_int(Ops::NEG, dtypes::uint32, {1}), 4294967295LL);
  EXPECT_EQ(run_int(Ops::MUL, dtypes::int64, {std::numeric_limits<int64_t>::max(), 2}), -2);
  EXPECT_EQ(run_int(Ops::NEG, dtypes::int64, {std::numeric_limits<int64_t>::min()}), std::numeric_limits<int64_t>::min());
}

TEST(ExecAlu, UnsignedOpsReadUnsignedValues) {
  uint64_t big = 0xffffffffffffff00ULL;  // above INT64_MAX
  ConstValue a = I(dtypes::uint64, static_cast<int64_t>(big)), b = I(dtypes::uint64, 16);
  EXPECT_EQ(static_cast<uint64_t>(exec_alu(Ops::IDIV, dtypes::uint64, std::vector{a, b}).i), big / 16);
  EXPECT_TRUE(exec_alu(Ops::CMPLT, dtypes::bool_, std::vector{b, a}).i);
  EXPECT_EQ(static_cast<uint64_t>(exec_alu(Ops::MAX, dtypes::uint64, std::vector{a, b}).i), big);
  EXPECT_EQ(exec_alu(Ops::CAST, dtypes::float64, std::vector{a}).f, static_cast<double>(big));
}

TEST(ExecAlu, ShiftsAndBitwise) {
  EXPECT_EQ(run_int(Ops::SHL, dtypes::int32, {1, 31}), -2147483648LL);
  EXPECT_EQ(run_int(Ops::SHL, dtypes::int32, {1, 32}), 0);
  EXPECT_EQ(run_int(Ops::SHR, dtypes::int32, {-8, 1}), -4);
  EXPECT_EQ(run_int(Ops::SHR, dtypes::int32, {-8, 40}), -1);
  EXPECT_EQ(run_int(Ops::SHR, dtypes::uint8, {200, 3}), 25);
  EXPECT_EQ(run_int(Ops::SHL, dtypes::int32, {5, -1}), 0);
  EXPECT_EQ(run_int(Ops::AND, dtypes::int32, {12, 10}), 8);
  EXPECT_EQ(run_int(Ops::OR, dtypes::int32, {12, 10}), 14);
  EXPECT_EQ(run_int(Ops::XOR, dtypes::int32, {12, 10}), 6);
  EXPECT_EQ(run_int(Ops::POW, dtypes::int32, {3, 4}), 81);
  EXPECT_EQ(run_int(Ops::POW, dtypes::int8, {2, 7}), -128);
  EXPECT_EQ(run_int(Ops::POW, dtypes::int32, {-1, -3}), -1);
}

TEST(ExecAlu, ComparisonsGiveBools) {
  auto cmp = [](Ops op, ConstValue a, ConstValue b) { return exec_alu(op, dtypes::bool_, std::vector{a, b}); };
  EXPECT_EQ(cmp(Ops::CMPLT, I(dtypes::int32, -1), I(dtypes::int32, 0)).i, 1);
  EXPECT_EQ(cmp(Ops::CMPLT, I(dtypes::int32, -1), I(dtypes::int32, 0)).dtype, dtypes::bool_);
  EXPECT_EQ(cmp(Ops::CMPNE, I(dtypes::int32, 3), I(dtypes::int32, 3)).i, 0);
  EXPECT_EQ(cmp(Ops::CMPEQ, I(dtypes::int32, 3), I(dtypes::int32, 3)).i, 1);
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cmp(Ops::CMPLT, F(dtypes::float32, nan), F(dtypes::float32, 1)).i, 0);
  EXPECT_EQ(cmp(Ops::CMPEQ, F(dtypes::float32, nan), F(dtypes::float32, nan)).i, 0);
  EXPECT_EQ(cmp(Ops::CMPNE, F(dtypes::float32, nan), F(dtypes::float32, nan)).i, 1);
}

TEST(ExecAlu, FloatsRoundToTheirDtype) {
  EXPECT_EQ(run_float(Ops::ADD, dtypes::float32, {1.0, 1e-8}), 1.0);  // below float's epsilon
  EXPECT_NE(run_float(Ops::ADD, dtypes::float64, {1.0, 1e-8}), 1.0);
  EXPECT_EQ(run_float(Ops::ADD, dtypes::float16, {1.0, 0.0004}), 1.0);  // half's epsilon is 2^-10
  EXPECT_EQ(run_float(Ops::ADD, dtypes::float16, {1.0, 0.001}), 1.0009765625);
  EXPECT_EQ(run_float(Ops::MUL, dtypes::float16, {300.0, 300.0}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_float(Ops::ADD, dtypes::bfloat16, {1.0, 0.003}), 1.0);  // bfloat16: ulp 2^-7 at 1
  EXPECT_EQ(run_float(Ops::ADD, dtypes::bfloat16, {1.0, 0.005}), 1.0078125);
  EXPECT_EQ(run_float(Ops::RECIP, dtypes::float32, {0.0}), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(run_float(Ops::SQRT, dtypes::float32, {-1.0})));
  EXPECT_EQ(run_float(Ops::LOG2, dtypes::float32, {0.0}), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_float(Ops::EXP2, dtypes::float32, {3.0}), 8.0);
  EXPECT_EQ(run_float(Ops::TRUNC, dtypes::float32, {-2.7}), -2.0);
  EXPECT_EQ(run_float(Ops::NEG, dtypes::float32, {2.5}), -2.5);
  EXPECT_FLOAT_EQ(run_float(Ops::SIN, dtypes::float32, {1.0}), static_cast<float>(std::sin(1.0)));
  EXPECT_TRUE(std::isnan(run_float(Ops::MAX, dtypes::float32, {std::nan(""), 1.0})));
}

TEST(ExecAlu, CastsConvertBetweenDtypes) {
  auto cast = [](ConstValue v, DType to) { return exec_alu(Ops::CAST, to, std::vector{v}); };
  EXPECT_EQ(cast(I(dtypes::int32, 300), dtypes::uint8).i, 44);
  EXPECT_EQ(cast(I(dtypes::int32, -1), dtypes::uint32).i, 4294967295LL);
  EXPECT_EQ(cast(F(dtypes::float32, -2.7), dtypes::int32).i, -2);
  EXPECT_EQ(cast(F(dtypes::float32, 1e30), dtypes::int64).i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(cast(F(dtypes::float32, std::nan("")), dtypes::int32).i, 0);
  EXPECT_EQ(cast(F(dtypes::float32, 0.5), dtypes::bool_).i, 1);
  EXPECT_EQ(cast(I(dtypes::int64, 16777217), dtypes::float32).f, 16777216.0);  // rounds to float
  EXPECT_EQ(cast(F(dtypes::float64, 65519.0), dtypes::float16).f, 65504.0);
  auto bitcast = [](ConstValue v, DType to) { return exec_alu(Ops::BITCAST, to, std::vector{v}); };
  EXPECT_EQ(bitcast(F(dtypes::float32, 1.0), dtypes::int32).i, 0x3f800000);
  EXPECT_EQ(bitcast(F(dtypes::float16, -2.0), dtypes::uint16).i, 0xc000);
  EXPECT_EQ(bitcast(I(dtypes::uint16, 0x3c00), dtypes::float16).f, 1.0);
}

TEST(ExecAlu, WhereAndUnsupportedOps) {
  ConstValue t = I(dtypes::bool_, 1), a = I(dtypes::int32, 5), b = I(dtypes::int32, 9);
  EXPECT_EQ(exec_alu(Ops::WHERE, dtypes::int32, std::vector{t, a, b}).i, 5);
  EXPECT_EQ(exec_alu(Ops::WHERE, dtypes::int32, std::vector{I(dtypes::bool_, 0), a, b}).i, 9);
  EXPECT_THROW(exec_alu(Ops::XOR, dtypes::float32, std::vector{F(dtypes::float32, 1), F(dtypes::float32, 2)}),
               std::invalid_argument);
  EXPECT_THROW(exec_alu(Ops::SIN, dtypes::int32, std::vector{a}), std::invalid_argument);
  EXPECT_THROW(exec_alu(Ops::ADD, dtypes::int32, std::vector{a}), std::invalid_argument);
  EXPECT_THROW(exec_alu(Ops::LOAD, dtypes::int32, std::vector{a}), std::invalid_argument);
}

// C's identity for truncating division, on every int32 pair (the defined x//0 included).
RC_GTEST_PROP(ExecAluProperty, division_and_modulo_recompose_the_dividend, (int32_t x, int32_t y)) {
  int64_t q = run_int(Ops::IDIV, dtypes::int32, {x, y}), r = run_int(Ops::MOD, dtypes::int32, {x, y});
  RC_ASSERT(run_int(Ops::ADD, dtypes::int32, {run_int(Ops::MUL, dtypes::int32, {q, y}), r}) == x);
  if (y != 0 && !(x == std::numeric_limits<int32_t>::min() && y == -1)) {
    RC_ASSERT(q == x / y);
    RC_ASSERT(r == x % y);
  }
}

RC_GTEST_PROP(ExecAluProperty, int32_arithmetic_is_arithmetic_mod_2_to_the_32, (int32_t x, int32_t y)) {
  auto wrap = [](int64_t v) { return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))); };
  RC_ASSERT(run_int(Ops::ADD, dtypes::int32, {x, y}) == wrap(int64_t{x} + y));
  RC_ASSERT(run_int(Ops::MUL, dtypes::int32, {x, y}) == wrap(int64_t{x} * y));
}

}  // namespace
}  // namespace tunebed
