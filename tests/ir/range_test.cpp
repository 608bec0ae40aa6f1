// vmin/vmax: every case of core/ir/range.cpp, including widening to the whole dtype on overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "core/ir/uop.hpp"

namespace tunebed {
namespace {

using Bounds = std::pair<int64_t, int64_t>;
Bounds bounds(const UOp& u) { return {u.vmin(), u.vmax()}; }

UOp var(int64_t lo, int64_t hi, DType d = dtypes::int32) { return UOp::variable("v", lo, hi, d); }
UOp c(int64_t v, DType d = dtypes::int32) { return UOp::const_int(d, v); }
UOp bin(Ops op, const UOp& a, const UOp& b) { return UOp::make(op, a.dtype(), {a, b}); }

const Bounds kInt32{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
const Bounds kInt64{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};

TEST(Range, ConstsAndVariablesAreTheirOwnBounds) {
  EXPECT_EQ(bounds(c(-4)), Bounds(-4, -4));
  EXPECT_EQ(bounds(UOp::const_bool(true)), Bounds(1, 1));
  EXPECT_EQ(bounds(var(-3, 8)), Bounds(-3, 8));
  // A float has no integer bounds: the whole range.
  EXPECT_EQ(bounds(UOp::const_float(dtypes::float32, 2.0)), kInt64);
  // Pointers and void carry no value.
  EXPECT_EQ(bounds(UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(0))), Bounds(0, 0));
}

TEST(Range, AddAndSub) {
  EXPECT_EQ(bounds(var(0, 10) + var(-5, 3)), Bounds(-5, 13));
  EXPECT_EQ(bounds(bin(Ops::SUB, var(0, 10), var(-5, 3))), Bounds(-3, 15));
}

TEST(Range, MulTakesTheExtremesOfAllFourCorners) {
  EXPECT_EQ(bounds(var(-3, 2) * var(-4, 5)), Bounds(-15, 12));
  EXPECT_EQ(bounds(var(-3, -2) * var(-4, -1)), Bounds(2, 12));
  EXPECT_EQ(bounds(var(0, 4) * -3), Bounds(-12, 0));
}

TEST(Range, IdivByAConstantTruncatesTowardZero) {
  EXPECT_EQ(bounds(var(-7, 9) / 2), Bounds(-3, 4));
  EXPECT_EQ(bounds(var(-7, 9) / -2), Bounds(-4, 3));
}

TEST(Range, IdivByARangeOfOneSign) {
  EXPECT_EQ(bounds(var(0, 10) / var(2, 5)), Bounds(0, 5));      // both positive
  EXPECT_EQ(bounds(var(-10, -1) / var(2, 5)), Bounds(-5, 0));   // negative by positive
  EXPECT_EQ(bounds(var(-10, -2) / var(-5, -2)), Bounds(0, 5));  // both negative
  EXPECT_EQ(bounds(var(2, 10) / var(-5, -2)), Bounds(-5, 0));   // positive by negative
  EXPECT_EQ(bounds(var(0, 10) / var(-1, 1)), kInt32) << "a divisor range holding 0 says nothing";
  EXPECT_EQ(bounds(var(-3, 10) / var(2, 5)), kInt32) << "a dividend of both signs by a range";
}

TEST(Range, ModFollowsTheSignOfTheDividend) {
  EXPECT_EQ(bounds(var(0, 100) % 7), Bounds(0, 6));
  EXPECT_EQ(bounds(var(-100, -1) % 7), Bounds(-6, 0));
  EXPECT_EQ(bounds(var(-5, 5) % 7), Bounds(-6, 6));
  EXPECT_EQ(bounds(var(0, 100) % -7), Bounds(0, 6));
  EXPECT_EQ(bounds(var(-100, 0) % -7), Bounds(-6, 0));
  EXPECT_EQ(bounds(var(0, 100) % var(1, 4)), Bounds(0, 3));
  EXPECT_EQ(bounds(var(0, 100) % var(-1, 4)), kInt32);
}

TEST(Range, Max) {
  EXPECT_EQ(bounds(var(-3, 2).max(var(0, 5))), Bounds(0, 5));
  EXPECT_EQ(bounds(var(-3, 2).max(var(-10, -5))), Bounds(-3, 2));
}

TEST(Range, ComparisonsAreDecidedWhenTheRangesAre) {
  EXPECT_EQ(bounds(var(0, 3).lt(var(5, 9))), Bounds(1, 1));
  EXPECT_EQ(bounds(var(5, 9).lt(var(0, 3))), Bounds(0, 0));
  EXPECT_EQ(bounds(var(0, 5).lt(var(5, 9))), Bounds(0, 1));
  EXPECT_EQ(bounds(var(0, 3).ne(var(5, 9))), Bounds(1, 1));
  EXPECT_EQ(bounds(c(4).ne(c(4))), Bounds(0, 0));
  EXPECT_EQ(bounds(var(0, 4).ne(c(4))), Bounds(0, 1));
  EXPECT_EQ(bounds(c(4).eq(c(4))), Bounds(1, 1));
  EXPECT_EQ(bounds(var(0, 3).eq(var(5, 9))), Bounds(0, 0));
  EXPECT_EQ(bounds(var(0, 4).eq(c(4))), Bounds(0, 1));
  EXPECT_EQ(var(0, 3).lt(var(5, 9)).dtype(), dtypes::bool_);
}

TEST(Range, AndOrOnBools) {
  UOp b = var(0, 1, dtypes::bool_);
  UOp t = UOp::const_bool(true), f = UOp::const_bool(false);
  EXPECT_EQ(bounds(b & t), Bounds(0, 1));
  EXPECT_EQ(bounds(f & b), Bounds(0, 0));
  EXPECT_EQ(bounds(t & t), Bounds(1, 1));
  EXPECT_EQ(bounds(t | b), Bounds(1, 1));
  EXPECT_EQ(bounds(f | f), Bounds(0, 0));
  EXPECT_EQ(bounds(b | f), Bounds(0, 1));
}

TEST(Range, AndWithANonNegativeConstantMask) {
  EXPECT_EQ(bounds(var(0, 100) & c(7)), Bounds(0, 7));
  EXPECT_EQ(bounds(var(0, 3) & c(7)), Bounds(0, 3));
  EXPECT_EQ(bounds(var(-1, 3) & c(7)), kInt32);
  EXPECT_EQ(bounds(var(0, 100) | c(7)), kInt32);
}

TEST(Range, ShiftsByAConstant) {
  EXPECT_EQ(bounds(bin(Ops::SHL, var(1, 3), c(2))), Bounds(4, 12));
  EXPECT_EQ(bounds(bin(Ops::SHL, var(-2, 3), c(1))), Bounds(-4, 6));
  EXPECT_EQ(bounds(bin(Ops::SHR, var(8, 17), c(2))), Bounds(2, 4));
  EXPECT_EQ(bounds(bin(Ops::SHR, var(-8, 7), c(1))), Bounds(-4, 3));
  EXPECT_EQ(bounds(bin(Ops::SHL, var(1, 3), var(0, 2))), kInt32);
  EXPECT_EQ(bounds(bin(Ops::SHL, var(1, 3), c(31))), kInt32) << "shifted out of int32";
}

TEST(Range, WhereSpansBothBranches) {
  UOp cond = var(0, 1, dtypes::bool_);
  EXPECT_EQ(bounds(cond.where(var(0, 3), var(10, 12))), Bounds(0, 12));
  EXPECT_EQ(bounds(cond.where(UOp::const_float(dtypes::float32, 1), UOp::const_float(dtypes::float32, 2))),
            kInt64);
}

TEST(Range, CastKeepsBoundsThatFitTheTarget) {
  EXPECT_EQ(bounds(var(-5, 100, dtypes::int8).cast(dtypes::int32)), Bounds(-5, 100));
  EXPECT_EQ(bounds(var(0, 1000).cast(dtypes::int8)), Bounds(-128, 127));
  EXPECT_EQ(bounds(var(-1, 3).cast(dtypes::uint8)), Bounds(0, 255));
  EXPECT_EQ(bounds(UOp::const_float(dtypes::float32, 2).cast(dtypes::int32)), kInt32);
}

TEST(Range, RangeCountsFromZeroToItsEndMinusOne) {
  EXPECT_EQ(bounds(UOp::make(Ops::RANGE, dtypes::int32, {c(10)}, Arg(0))), Bounds(0, 9));
  EXPECT_EQ(bounds(UOp::make(Ops::RANGE, dtypes::int32, {var(1, 16)}, Arg(0))), Bounds(0, 15));
  EXPECT_EQ(bounds(UOp::make(Ops::RANGE, dtypes::int32, {c(0)}, Arg(0))), Bounds(0, 0));
  UOp most_negative = c(std::numeric_limits<int64_t>::min(), dtypes::int64);
  EXPECT_EQ(bounds(UOp::make(Ops::RANGE, dtypes::int64, {most_negative}, Arg(0))), Bounds(0, 0));
}

TEST(Range, SpecialBindAndVectorize) {
  EXPECT_EQ(bounds(UOp::make(Ops::SPECIAL, dtypes::int32, {}, Arg::tuple({"gidx0", 16}))), Bounds(0, 15));
  EXPECT_EQ(bounds(UOp::make(Ops::SPECIAL, dtypes::int32, {}, Arg::tuple({"gidx0", var(4, 8)}))),
            Bounds(0, 7));
  // A launch size of 0 or below is empty; its bound must not overflow computing size - 1.
  EXPECT_EQ(bounds(UOp::make(Ops::SPECIAL, dtypes::int64, {},
                             Arg::tuple({"gidx0", std::numeric_limits<int64_t>::min()}))),
            Bounds(0, 0));
  EXPECT_EQ(bounds(UOp::make(Ops::BIND, dtypes::int32, {var(2, 6), c(3)})), Bounds(2, 6));
  EXPECT_EQ(bounds(UOp::make(Ops::VECTORIZE, dtypes::int32.vec(3), {c(4), var(-1, 2), c(9)})), Bounds(-1, 9));
}

TEST(Range, OverflowWidensToTheWholeDtype) {
  EXPECT_EQ(bounds(var(0, std::numeric_limits<int32_t>::max()) + 1), kInt32);
  EXPECT_EQ(bounds(var(100, 120, dtypes::int8) + c(20, dtypes::int8)), Bounds(-128, 127));
  EXPECT_EQ(bounds(var(0, 255, dtypes::uint8) + c(1, dtypes::uint8)), Bounds(0, 255));
  EXPECT_EQ(bounds(var(0, 100000) * var(0, 100000)), kInt32);
  EXPECT_EQ(bounds(var(0, std::numeric_limits<int64_t>::max(), dtypes::int64) + c(1, dtypes::int64)), kInt64);
  EXPECT_EQ(bounds(var(std::numeric_limits<int64_t>::min(), 0, dtypes::int64) / c(-1, dtypes::int64)),
            kInt64);
  // In range again: no widening.
  EXPECT_EQ(bounds(var(100, 120, dtypes::int8) + c(7, dtypes::int8)), Bounds(107, 127));
}

TEST(Range, MalformedNodesGetTheWholeRangeInsteadOfReadingMissingSources) {
  // The text parser builds whatever it is given; range analysis must not assume the arity.
  EXPECT_EQ(bounds(UOp::make(Ops::WHERE, dtypes::int32, {})), kInt32);
  EXPECT_EQ(bounds(UOp::make(Ops::CAST, dtypes::int32, {})), kInt32);
  EXPECT_EQ(bounds(UOp::make(Ops::ADD, dtypes::int32, {c(1)})), kInt32);
}

}  // namespace
}  // namespace tunebed
