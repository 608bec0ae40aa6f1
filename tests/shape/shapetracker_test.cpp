// View canonical form, illegal ops, the text form of a ShapeTracker arg, index expressions and
// strides, and symbolic shapes. Expected values are tinygrad's (7b16fadd) for the same input.
#include "core/shape/shapetracker.hpp"

#include <gtest/gtest.h>

#include "core/ir/text.hpp"
#include "core/symbolic/symbolic.hpp"
#include "fuzz/shape_uop_eval.hpp"

namespace tunebed {
namespace {

ShapeTracker base(const SymShape& s) { return ShapeTracker::from_shape(s); }

// ---- canonical form ----------------------------------------------------------------------------

TEST(ViewCreate, SizeOneDimensionsGetStrideZero) {
  View v = View::create({4, 1, 6}, SymShape{6, 6, 1});
  EXPECT_EQ(v.strides(), (SymShape{6, 0, 1}));
  EXPECT_TRUE(v.contiguous());
}

TEST(ViewCreate, MaskCoveringEverythingIsDropped) {
  View v = View::create({4, 6}, std::nullopt, 0, Mask{{0, 4}, {0, 6}});
  EXPECT_FALSE(v.mask().has_value());
  EXPECT_TRUE(v.contiguous());
}

TEST(ViewCreate, DimensionMaskedToOneIndexGetsStrideZeroAndOffset) {
  View v = View::create({4, 6}, std::nullopt, 0, Mask{{2, 3}, {0, 6}});
  EXPECT_EQ(v.repr(),
            "View(shape=(4, 6), strides=(0, 1), offset=12, mask=((2, 3), (0, 6)), contiguous=False)");
}

TEST(ViewCreate, EmptyMaskZeroesStridesAndOffset) {
  View v = View::create({4, 6}, SymShape{6, 1}, 5, Mask{{1, 1}, {0, 6}});
  EXPECT_EQ(v.repr(),
            "View(shape=(4, 6), strides=(0, 0), offset=0, mask=((0, 0), (0, 0)), contiguous=False)");
}

TEST(ViewCreate, EmptyShapeIsContiguousWithZeroStrides) {
  View v = View::create({3, 0, 2}, SymShape{5, 7, 1}, 9, Mask{{1, 2}, {0, 0}, {0, 2}});
  EXPECT_EQ(v.repr(), "View(shape=(3, 0, 2), strides=(0, 0, 0), offset=0, mask=None, contiguous=True)");
}

TEST(ViewCreate, NegativeDimensionIsRejected) { EXPECT_THROW(View::create({4, -1}), ViewError); }

// ---- illegal ops name the op and the reason ------------------------------------------------------

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ViewError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MovementErrors, NameTheOpAndWhy) {
  ShapeTracker st = base({4, 6});
  EXPECT_EQ(error_of([&] {
              st.reshape({5, 5});
            }),
            "reshape: size mismatch, (4, 6) has 24 elements, (5, 5) has 25");
  EXPECT_EQ(error_of([&] { st.reshape({-4, -6}); }), "reshape: negative dimension in (-4, -6)");
  EXPECT_EQ(error_of([&] { st.permute({0, 0}); }), "permute: not a permutation of 0..1");
  EXPECT_EQ(error_of([&] { st.permute({1, 0, 2}); }), "permute: expected 2 axes, got 3");
  EXPECT_EQ(error_of([&] { st.expand({4, 7}); }), "expand: axis 1 has size 6, only size 1 expands (to 7)");
  EXPECT_EQ(error_of([&] { st.pad({{0, 0}, {-1, 0}}); }), "pad: axis 1: negative padding -1:0");
  EXPECT_EQ(error_of([&] { st.shrink({{0, 4}, {2, 7}}); }), "shrink: axis 1: 2:7 is not within 0:6");
  EXPECT_EQ(error_of([&] { st.shrink({{3, 2}, {0, 6}}); }), "shrink: axis 0: 3:2 is not within 0:4");
  EXPECT_EQ(error_of([&] { st.flip({true}); }), "flip: expected 2 axes, got 1");
  EXPECT_EQ(error_of([&] { st.mop(Ops::ADD, Arg()); }), "ADD is not a movement op");
  EXPECT_EQ(error_of([&] {
              st.mop(Ops::PAD, Arg::tuple({Arg(1), Arg(2)}));
            }),
            "pad: expected pairs, got (1, 2)");
}

// ---- the text form -----------------------------------------------------------------------------

TEST(ShapeTrackerText, PrintsLikeTinygrad) {
  EXPECT_EQ(
      base({4, 6}).repr(),
      "ShapeTracker(views=(View(shape=(4, 6), strides=(6, 1), offset=0, mask=None, contiguous=True),))");
  EXPECT_EQ(base({}).repr(),
            "ShapeTracker(views=(View(shape=(), strides=(), offset=0, mask=None, contiguous=True),))");
  EXPECT_EQ(
      base({5}).pad({{1, 0}}).repr(),
      "ShapeTracker(views=(View(shape=(6,), strides=(1,), offset=-1, mask=((1, 6),), contiguous=False),))");
}

TEST(ShapeTrackerText, ViewUOpRoundTripsThroughPrintAndParse) {
  ShapeTracker st = base({4, 6}).pad({{1, 1}, {0, 2}}).reshape({48}).flip({true});
  ASSERT_EQ(st.views().size(), 2u);
  UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(24), {}, Arg(0));
  UOp view = UOp::make(Ops::VIEW, dtypes::float32.ptr_to(24), {buf}, st.to_arg());
  std::string text = print_uop(view);
  EXPECT_NE(
      text.find(
          "arg=ShapeTracker(views=(View(shape=(6, 8), strides=(6, 1), offset=-6, mask=((1, 5), (0, 6))"),
      std::string::npos)
      << text;
  UOp back = parse_uop(text);
  EXPECT_EQ(back, view);  // interning: the very same node
  EXPECT_EQ(back.arg().as_object<ShapeTracker>(), st);
}

TEST(ShapeTrackerText, SymbolicShapeRoundTrips) {
  UOp n = UOp::variable("N", 1, 10);
  ShapeTracker st = base({sint(n), 4}).pad({{1, 1}, {0, 0}});
  UOp view = UOp::make(Ops::VIEW, dtypes::void_, {}, st.to_arg());
  std::string text = print_uop(view);
  EXPECT_NE(text.find("DEFINE_VAR"), std::string::npos) << text;
  EXPECT_EQ(parse_uop(text), view) << text;
}

TEST(ShapeTrackerText, NonCanonicalViewIsRejected) {
  const char* text =
      "u0 = VIEW void arg=ShapeTracker(views=(View(shape=(4, 1), strides=(1, 1), offset=0, mask=None, "
      "contiguous=True),))\n";
  try {
    parse_uop(text);
    FAIL() << "parsed a non-canonical view";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("not in canonical form, expected View(shape=(4, 1), strides=(1, 0)"),
              std::string::npos)
        << e.what();
  }
}

// ---- index expressions and strides ---------------------------------------------------------------

TEST(ShapeTrackerIndexing, ContiguousIndexIsRowMajorAndAlwaysValid) {
  auto [idx, valid] = base({4, 6}).to_indexed_uops();
  std::vector<UOp> r = ShapeTracker::index_ranges({4, 6});
  EXPECT_EQ(idx, tunebed::simplify(r[0] * 6 + r[1])) << print_uop(idx);
  EXPECT_TRUE(valid.is_const(1)) << print_uop(valid);
}

// Positions past int32 are computed in int64: the last element of a 65536x65536 buffer is 2^32-1.
TEST(ShapeTrackerIndexing, LargeTrackersIndexInInt64) {
  EXPECT_EQ(base({1 << 15, 1 << 15}).index_dtype(), dtypes::index);
  ShapeTracker st = base({1 << 16, 1 << 16}).flip({true, false});
  ASSERT_EQ(st.index_dtype(), dtypes::int64);
  auto [idx, valid] = st.to_indexed_uops();
  EXPECT_EQ(idx.dtype(), dtypes::int64);
  naive::UOpEvaluator eval({idx, valid});
  eval.run({0, (1 << 16) - 1});
  EXPECT_EQ(eval.value(idx), (int64_t{1} << 32) - 1);
  eval.run({(1 << 16) - 1, 0});
  EXPECT_EQ(eval.value(idx), 0);
}

struct StridesCase {
  ShapeTracker st;
  std::vector<std::optional<sint>> strides, strides_ignoring_valid;
  std::vector<size_t> unit_axes;
};

TEST(ShapeTrackerIndexing, RealStridesMatchTinygrad) {
  using S = std::optional<sint>;
  ShapeTracker b = base({4, 6});
  const StridesCase cases[] = {
      {b, {S(6), S(1)}, {S(6), S(1)}, {1}},
      {b.pad({{1, 1}, {0, 2}}), {S(), S()}, {S(6), S(1)}, {}},
      {b.pad({{1, 1}, {0, 2}}).reshape({48}), {S()}, {S()}, {}},
      {b.permute({1, 0}).reshape({24}), {S()}, {S()}, {}},
      {b.reshape({4, 1, 6}).expand({4, 3, 6}).reshape({12, 6}), {S(), S(1)}, {S(), S(1)}, {1}},
      {b.flip({false, true}).reshape({2, 2, 6}).permute({0, 2, 1}),
       {S(12), S(-1), S(6)},
       {S(12), S(-1), S(6)},
       {}},
  };
  for (const StridesCase& c : cases) {
    EXPECT_EQ(c.st.real_strides(), c.strides) << c.st.repr();
    EXPECT_EQ(c.st.real_strides(true), c.strides_ignoring_valid) << c.st.repr();
    EXPECT_EQ(c.st.unit_stride_axes(), c.unit_axes) << c.st.repr();
  }
}

// ---- symbolic shapes -----------------------------------------------------------------------------

class Symbolic : public ::testing::Test {
 protected:
  UOp n = UOp::variable("N", 1, 10);
  sint N{n};
};

TEST_F(Symbolic, ReshapeOfContiguousStaysOneView) {
  ShapeTracker st = base({N, 4}).reshape({N * 4});
  ASSERT_EQ(st.views().size(), 1u);
  EXPECT_EQ(st.shape(), SymShape{N * 4});
  EXPECT_EQ(st.views()[0].strides(), SymShape{1});
  EXPECT_TRUE(st.contiguous());
}

TEST_F(Symbolic, PadMasksUpToTheSymbolicEnd) {
  View v = base({N, 4}).pad({{1, 1}, {0, 0}}).views()[0];
  EXPECT_EQ(v.shape(), (SymShape{N + 2, 4}));
  EXPECT_EQ(v.offset(), sint(-4));
  ASSERT_TRUE(v.mask().has_value());
  EXPECT_EQ(*v.mask(), (Mask{{1, N + 1}, {0, 4}}));
}

TEST_F(Symbolic, ShrinkToSymbolicEnd) {
  View v = base({N, 4}).shrink({{0, N - 1}, {1, 3}}).views()[0];
  EXPECT_EQ(v.shape(), (SymShape{N - 1, 2}));
  EXPECT_EQ(v.strides(), (SymShape{4, 1}));
  EXPECT_EQ(v.offset(), sint(1));
}

TEST_F(Symbolic, ExpandSizeOneToSymbolic) {
  View v = base({1, 4}).expand({N, 4}).views()[0];
  EXPECT_EQ(v.shape(), (SymShape{N, 4}));
  EXPECT_EQ(v.strides(), (SymShape{0, 1}));
}

TEST_F(Symbolic, ReshapeAcrossAPermuteStacksAView) {
  ShapeTracker st = base({N, 4}).permute({1, 0}).reshape({N * 4});
  ASSERT_EQ(st.views().size(), 2u);
  EXPECT_EQ(st.views()[0].strides(), (SymShape{1, 4}));
  EXPECT_TRUE(st.views()[1].contiguous());
  EXPECT_EQ(st.simplify(), st);
}

TEST_F(Symbolic, PaddedIndexIsValidUpToTheVariable) {
  auto [idx, valid] = base({N, 4}).pad({{1, 1}, {0, 0}}).to_indexed_uops();
  std::vector<UOp> r = ShapeTracker::index_ranges({N + 2, 4});
  EXPECT_EQ(idx, tunebed::simplify(r[0] * 4 + r[1] - 4)) << print_uop(idx);
  EXPECT_EQ(valid, tunebed::simplify(r[0].lt(1).logical_not() & r[0].lt((N + 1).uop()))) << print_uop(valid);
}

TEST_F(Symbolic, IllegalShrinkIsRejectedWhenProvable) {
  EXPECT_THROW(base({N, 4}).shrink({{0, N + 1}, {0, 4}}), ViewError);
}

// real_size: how many elements a buffer read through the tracker needs.
TEST(RealSize, CountsTheBufferPositionsReachedNotTheShape) {
  EXPECT_EQ(ShapeTracker::from_shape({4, 5}).real_size(), 20);
  EXPECT_EQ(ShapeTracker::from_shape({4, 1}).expand({4, 6}).real_size(), 4);   // a broadcast reads 4
  EXPECT_EQ(ShapeTracker::from_shape({4}).pad({{1, 2}}).real_size(), 4);       // padding reads nothing
  EXPECT_EQ(ShapeTracker::from_shape({10}).shrink({{2, 5}}).real_size(), 5);   // up to position 4
  EXPECT_EQ(ShapeTracker::from_shape({3, 0}).real_size(), 0);
}

}  // namespace
}  // namespace tunebed
