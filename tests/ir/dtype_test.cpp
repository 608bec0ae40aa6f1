// DType (sizes, vectors and pointers, limits, tinygrad's promotion lattice, value truncation), the
// Ops names, and HostBuffer's range check.
#include "core/ir/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "core/ir/host_buffer.hpp"
#include "core/ir/ops.hpp"

namespace tunebed {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const DType kAllScalars[] = {dtypes::bool_,  dtypes::int8,    dtypes::int16,    dtypes::int32,
                             dtypes::int64,  dtypes::uint8,   dtypes::uint16,   dtypes::uint32,
                             dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                             dtypes::float64};

TEST(DType, ItemsizeIsBytesOfOneElementIncludingVectorWidth) {
  EXPECT_EQ(dtypes::void_.itemsize(), 0);
  EXPECT_EQ(dtypes::bool_.itemsize(), 1);
  EXPECT_EQ(dtypes::int8.itemsize(), 1);
  EXPECT_EQ(dtypes::uint16.itemsize(), 2);
  EXPECT_EQ(dtypes::int32.itemsize(), 4);
  EXPECT_EQ(dtypes::uint64.itemsize(), 8);
  EXPECT_EQ(dtypes::float16.itemsize(), 2);
  EXPECT_EQ(dtypes::bfloat16.itemsize(), 2);
  EXPECT_EQ(dtypes::float64.itemsize(), 8);
  EXPECT_EQ(dtypes::float32.vec(4).itemsize(), 16);
  EXPECT_EQ(dtypes::float32.vec(4).scalar_itemsize(), 4);
}

TEST(DType, VecMakesAVectorAndVecOneIsIdentity) {
  DType f4 = dtypes::float32.vec(4);
  EXPECT_EQ(f4.count, 4);
  EXPECT_EQ(f4.vcount(), 4);
  EXPECT_EQ(f4.scalar_type(), dtypes::float32);
  EXPECT_EQ(dtypes::float32.vec(1), dtypes::float32);
  EXPECT_EQ(to_string(f4), "float32.vec(4)");
  EXPECT_THROW(f4.vec(2), std::invalid_argument);  // no vectors of vectors
}

TEST(DType, PtrKeepsPointeeSizeAndAddressSpace) {
  DType p = dtypes::float32.ptr_to(16);
  EXPECT_TRUE(p.ptr);
  EXPECT_EQ(p.size, 16);
  EXPECT_EQ(p.addrspace, AddrSpace::Global);
  EXPECT_EQ(p.base(), dtypes::float32);
  EXPECT_FALSE(p.is_float()) << "a pointer to floats is not a float";
  EXPECT_EQ(to_string(p), "float32.ptr(16)");
  EXPECT_EQ(to_string(dtypes::int8.ptr_to(-1, AddrSpace::Local)), "int8.ptr(-1,local)");
  EXPECT_EQ(to_string(dtypes::int8.ptr_to(4, AddrSpace::Reg)), "int8.ptr(4,reg)");
  DType pv = dtypes::float32.vec(4).ptr_to(8);
  EXPECT_EQ(pv.base(), dtypes::float32.vec(4));
  EXPECT_EQ(to_string(pv), "float32.vec(4).ptr(8)");
  DType vp = p.with_v(2);
  EXPECT_EQ(vp.vcount(), 2);
  EXPECT_EQ(vp.count, 1);
  EXPECT_EQ(to_string(vp), "float32.ptr(16).vec(2)");
  EXPECT_THROW(p.vec(2), std::invalid_argument);
  EXPECT_THROW(p.ptr_to(4), std::invalid_argument);
  EXPECT_NE(dtypes::float32.ptr_to(16), dtypes::float32.ptr_to(16, AddrSpace::Local));
  EXPECT_NE(dtypes::float32.ptr_to(16), dtypes::float32.ptr_to(17));
}

TEST(DType, KindPredicates) {
  EXPECT_TRUE(dtypes::bfloat16.is_float());
  EXPECT_TRUE(dtypes::float32.vec(2).is_float());
  EXPECT_TRUE(dtypes::uint32.is_int());
  EXPECT_TRUE(dtypes::uint32.is_unsigned());
  EXPECT_FALSE(dtypes::int32.is_unsigned());
  EXPECT_FALSE(dtypes::bool_.is_int());
  EXPECT_TRUE(dtypes::bool_.is_bool());
  EXPECT_TRUE(dtypes::void_.is_void());
  EXPECT_FALSE(dtypes::float16.is_int());
}

TEST(DType, MinAndMaxAreTheDtypesLimits) {
  EXPECT_EQ(dtypes::int8.int_min(), -128);
  EXPECT_EQ(dtypes::int8.int_max(), 127);
  EXPECT_EQ(dtypes::uint8.int_min(), 0);
  EXPECT_EQ(dtypes::uint8.int_max(), 255);
  EXPECT_EQ(dtypes::int16.int_min(), -32768);
  EXPECT_EQ(dtypes::uint16.int_max(), 65535);
  EXPECT_EQ(dtypes::int32.int_min(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(dtypes::uint32.int_max(), 4294967295);
  EXPECT_EQ(dtypes::int64.int_min(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(dtypes::int64.int_max(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(dtypes::bool_.int_min(), 0);
  EXPECT_EQ(dtypes::bool_.int_max(), 1);
  // uint64's true maximum does not fit an int64; as a double it is exact enough.
  EXPECT_EQ(dtypes::uint64.min_value(), 0.0);
  EXPECT_EQ(dtypes::uint64.max_value(), 18446744073709551615.0);
  EXPECT_EQ(dtypes::int8.min_value(), -128.0);
  EXPECT_EQ(dtypes::float16.min_value(), -kInf);
  EXPECT_EQ(dtypes::float64.max_value(), kInf);
}

// tinygrad's promo_lattice (dtype.py) without fp8: bool -> {int8, uint8}, intN -> int2N,
// uintN -> {int2N, uint2N}, int64/uint64 -> {float16, bfloat16} -> float32 -> float64; the answer
// is the lowest-priority dtype both reach.
TEST(DType, LeastUpperDtypeFollowsTinygradsPromotionLattice) {
  struct Case {
    DType a, b, want;
  };
  const Case cases[] = {
      {dtypes::int8, dtypes::uint8, dtypes::int16},
      {dtypes::int8, dtypes::int8, dtypes::int8},
      {dtypes::int32, dtypes::float16, dtypes::float16},
      {dtypes::uint64, dtypes::int64, dtypes::float16},
      {dtypes::uint8, dtypes::uint16, dtypes::uint16},
      {dtypes::uint16, dtypes::int16, dtypes::int32},
      {dtypes::uint32, dtypes::int32, dtypes::int64},
      {dtypes::uint32, dtypes::uint64, dtypes::uint64},
      {dtypes::int8, dtypes::uint64, dtypes::float16},
      {dtypes::float16, dtypes::bfloat16, dtypes::float32},
      {dtypes::bfloat16, dtypes::int64, dtypes::bfloat16},
      {dtypes::float32, dtypes::float64, dtypes::float64},
      {dtypes::int64, dtypes::float32, dtypes::float32},
      {dtypes::bool_, dtypes::bool_, dtypes::bool_},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(least_upper_dtype(c.a, c.b), c.want) << to_string(c.a) << " + " << to_string(c.b);
    EXPECT_EQ(least_upper_dtype(c.b, c.a), c.want) << to_string(c.b) << " + " << to_string(c.a);
  }
}

TEST(DType, BoolPromotesToAnyOtherDtype) {
  for (const DType& x : kAllScalars) EXPECT_EQ(least_upper_dtype(dtypes::bool_, x), x) << to_string(x);
}

TEST(DType, LeastUpperDtypeIsAnUpperBoundOfBoth) {
  // Every pair: the answer is commutative and at least as high as each operand, and a dtype
  // already at least as high as both operands (the other one, when it is) is the answer itself.
  for (const DType& a : kAllScalars)
    for (const DType& b : kAllScalars) {
      DType u = least_upper_dtype(a, b);
      EXPECT_EQ(u, least_upper_dtype(b, a));
      EXPECT_GE(u.priority(), a.priority());
      EXPECT_GE(u.priority(), b.priority());
      EXPECT_EQ(least_upper_dtype(u, a), u);
      EXPECT_EQ(least_upper_dtype(u, b), u);
    }
}

TEST(DType, WrapIntTruncatesLikeACCast) {
  EXPECT_EQ(wrap_int(127, dtypes::int8), 127);
  EXPECT_EQ(wrap_int(128, dtypes::int8), -128);
  EXPECT_EQ(wrap_int(-129, dtypes::int8), 127);
  EXPECT_EQ(wrap_int(-1, dtypes::uint8), 255);
  EXPECT_EQ(wrap_int(256, dtypes::uint8), 0);
  EXPECT_EQ(wrap_int(40000, dtypes::int16), 40000 - 65536);
  EXPECT_EQ(wrap_int(-1, dtypes::uint16), 65535);
  EXPECT_EQ(wrap_int(int64_t{1} << 31, dtypes::int32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(wrap_int(-1, dtypes::uint32), 4294967295);
  EXPECT_EQ(wrap_int(5, dtypes::bool_), 1);
  EXPECT_EQ(wrap_int(0, dtypes::bool_), 0);
  EXPECT_EQ(wrap_int(std::numeric_limits<int64_t>::min(), dtypes::int64),
            std::numeric_limits<int64_t>::min());
}

TEST(DType, RoundFloatToFloat16IsRoundToNearestEven) {
  const DType h = dtypes::float16;
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -10), h), 1.0 + std::ldexp(1.0, -10));     // exact
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -11), h), 1.0);                            // tie: to even
  EXPECT_EQ(round_float(1.0 + 3 * std::ldexp(1.0, -11), h), 1.0 + std::ldexp(1.0, -9));  // tie: to even
  EXPECT_EQ(round_float(0.1, h), 0.0999755859375);
  EXPECT_EQ(round_float(65504.0, h), 65504.0);  // the largest half
  EXPECT_EQ(round_float(65519.0, h), 65504.0);
  EXPECT_EQ(round_float(65520.0, h), kInf);  // half-way to the next binade overflows
  EXPECT_EQ(round_float(-1e9, h), -kInf);
  EXPECT_EQ(round_float(std::ldexp(1.0, -24), h), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_float(std::ldexp(1.0, -25), h), 0.0);                   // tie: to even (zero)
  EXPECT_EQ(round_float(3 * std::ldexp(1.0, -26), h), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::signbit(round_float(-1e-30, h)));
  EXPECT_TRUE(std::isnan(round_float(std::nan(""), h)));
  EXPECT_EQ(round_float(-kInf, h), -kInf);
}

TEST(DType, RoundFloatRoundsOnceFromDoubleNotThroughFloat32) {
  // Just above a half-way point by less than a float32 ulp: going through float32 first would
  // land exactly on the tie and round down to even.
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), dtypes::float16),
            1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30), dtypes::bfloat16),
            1.0 + std::ldexp(1.0, -7));
}

// tunebed rounds to bfloat16 to nearest even, as hardware conversions do (tinygrad's
// truncate_bf16 chops the low bits instead).
TEST(DType, RoundFloatToBfloat16IsRoundToNearestEven) {
  const DType b = dtypes::bfloat16;
  EXPECT_EQ(round_float(3.0, b), 3.0);
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -8), b), 1.0);                            // tie: to even
  EXPECT_EQ(round_float(1.0 + 3 * std::ldexp(1.0, -8), b), 1.0 + std::ldexp(1.0, -6));  // tie: to even
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -7), b), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(round_float(0.1, b), 0.10009765625);
  EXPECT_EQ(round_float(std::ldexp(1.0, -133), b), std::ldexp(1.0, -133));  // smallest subnormal
  EXPECT_EQ(round_float(std::ldexp(1.0, -134), b), 0.0);                    // tie: to even (zero)
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  EXPECT_EQ(round_float(largest, b), largest);
  EXPECT_EQ(round_float(std::ldexp(2.0 - std::ldexp(1.0, -8), 127), b), kInf);  // half-way up
  EXPECT_EQ(round_float(1e39, b), kInf);
  EXPECT_EQ(round_float(-1e39, b), -kInf);
  EXPECT_TRUE(std::isnan(round_float(std::nan(""), b)));
}

TEST(DType, RoundFloatToFloat32AndFloat64) {
  EXPECT_EQ(round_float(0.1, dtypes::float32), static_cast<double>(0.1f));
  EXPECT_EQ(round_float(0.1, dtypes::float64), 0.1);
  EXPECT_EQ(round_float(1e300, dtypes::float32), kInf);
}

TEST(DType, ScalarNamesRoundTripAndTinygradAliasesParse) {
  for (const DType& d : kAllScalars) EXPECT_EQ(scalar_from_name(scalar_name(d.scalar)), d.scalar);
  EXPECT_EQ(scalar_from_name("half"), Scalar::Float16);
  EXPECT_EQ(scalar_from_name("float"), Scalar::Float32);
  EXPECT_EQ(scalar_from_name("uchar"), Scalar::UInt8);
  EXPECT_EQ(scalar_from_name("long"), Scalar::Int64);
  EXPECT_EQ(scalar_from_name("float128"), std::nullopt);
  EXPECT_EQ(scalar_from_name(""), std::nullopt);
}

TEST(Ops, NamesAreTheEnumeratorsAndParseBack) {
  EXPECT_EQ(op_name(Ops::ADD), "ADD");
  EXPECT_EQ(op_name(Ops::DEFINE_GLOBAL), "DEFINE_GLOBAL");
  EXPECT_EQ(op_name(Ops::CUSTOM), "CUSTOM");
  std::set<std::string_view> names;
  for (int i = 0; i < kNumOps; i++) {
    Ops op = static_cast<Ops>(i);
    EXPECT_EQ(op_from_name(op_name(op)), op) << op_name(op);
    names.insert(op_name(op));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumOps)) << "two ops share a name";
  EXPECT_EQ(op_from_name("add"), std::nullopt) << "names are case sensitive";
  EXPECT_EQ(op_from_name("Ops.ADD"), std::nullopt);
}

TEST(Ops, GroupsHoldTheirOps) {
  EXPECT_TRUE(GroupOp::Commutative.contains(Ops::ADD));
  EXPECT_FALSE(GroupOp::Commutative.contains(Ops::SUB));
  EXPECT_FALSE(GroupOp::Commutative.contains(Ops::CMPLT));
  EXPECT_TRUE(GroupOp::ALU.contains(Ops::WHERE));
  EXPECT_TRUE(GroupOp::ALU.contains(Ops::NEG));
  EXPECT_FALSE(GroupOp::ALU.contains(Ops::LOAD));
  EXPECT_TRUE(GroupOp::Comparison.contains(Ops::CMPEQ));
  // The last op in the enum lands in the second word of the mask.
  OpSet s{Ops::CUSTOM};
  EXPECT_TRUE(s.contains(Ops::CUSTOM));
  EXPECT_FALSE(s.contains(Ops::NOOP));
  EXPECT_FALSE(s.empty());
  EXPECT_TRUE(OpSet{}.empty());
  EXPECT_EQ(OpSet({Ops::ADD}) | OpSet({Ops::MUL}), OpSet({Ops::ADD, Ops::MUL}));
}

TEST(HostBuffer, HoldsExactlyItsElementsAndAccessPastThemThrows) {
  for (const DType& d : {dtypes::bool_, dtypes::float16, dtypes::float32, dtypes::int64}) {
    HostBuffer b(d, 3);
    EXPECT_TRUE(b.holds(0) && b.holds(2)) << to_string(d);
    EXPECT_FALSE(b.holds(3) || b.holds(-1) || b.holds(std::numeric_limits<int64_t>::max())) << to_string(d);
    EXPECT_THROW(b.get_float(3), std::out_of_range);
    EXPECT_THROW(b.set_int(-1, 0), std::out_of_range);
  }
  EXPECT_FALSE(HostBuffer(dtypes::float32, 0).holds(0));
}

}  // namespace
}  // namespace tunebed
