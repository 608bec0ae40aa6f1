// UPat: every way a pattern constrains a UOp, and what it captures.
#include "core/rewrite/upat.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tunebed {
namespace {

const UPat x = UPat::var("x"), y = UPat::var("y"), c = UPat::cvar("c");

// The captures of p on u, or nullopt when p does not match. Captures refer to the names inside
// the pattern, so a test keeps the pattern alive while it reads them.
std::optional<Captures> captures(const UPat& p, const UOp& u) {
  Captures caps;
  if (!match(p, u, caps)) {
    EXPECT_EQ(caps.size(), 0u) << "a failed match leaves no capture behind";
    return std::nullopt;
  }
  return caps;
}
bool matches(const UPat& p, const UOp& u) { return captures(p, u).has_value(); }

struct UPatTest : ::testing::Test {
  UOp a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9);
  UOp three = UOp::index(3);
  UOp f = UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({"f", 0, 1}));
};

TEST_F(UPatTest, AnyPatternMatchesEveryUOpAndCapturesNothing) {
  EXPECT_TRUE(matches(UPat(), a));
  EXPECT_TRUE(matches(UPat(), a + b));
  EXPECT_EQ(captures(UPat(), a)->size(), 0u);
}

TEST_F(UPatTest, OpMatchesThatOpOnly) {
  EXPECT_TRUE(matches(UPat(Ops::ADD), a + b));
  EXPECT_FALSE(matches(UPat(Ops::ADD), a * b));
  EXPECT_FALSE(matches(UPat(Ops::ADD), a));
}

TEST_F(UPatTest, OpSetMatchesAnyOfItsOps) {
  UPat p = UPat::ops({Ops::ADD, Ops::MUL});
  EXPECT_TRUE(matches(p, a + b));
  EXPECT_TRUE(matches(p, a * b));
  EXPECT_FALSE(matches(p, a.max(b)));
  EXPECT_TRUE(matches(UPat::ops(GroupOp::Comparison, {x, y}), a.lt(b)));
}

TEST_F(UPatTest, DtypeConstrainsTheMatchedUOp) {
  EXPECT_TRUE(matches(UPat::var("x", dtypes::int32), a));
  EXPECT_FALSE(matches(UPat::var("x", dtypes::int32), f));
  UPat either = UPat::var("x").dtypes({dtypes::float16, dtypes::float32});
  EXPECT_TRUE(matches(either, f));
  EXPECT_FALSE(matches(either, a));
  EXPECT_FALSE(matches(UPat(Ops::ADD).dtype(dtypes::int64), a + b));
}

TEST_F(UPatTest, ArgMustBeEqual) {
  UOp g0 = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(0));
  UOp g1 = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(1));
  UPat p = UPat(Ops::DEFINE_GLOBAL).arg(Arg(0));
  EXPECT_TRUE(matches(p, g0));
  EXPECT_FALSE(matches(p, g1));
  EXPECT_FALSE(matches(UPat(Ops::DEFINE_GLOBAL).arg(Arg(0.0)), g0)) << "an int arg is not a float arg";
}

TEST_F(UPatTest, NamedPatternsCaptureTheMatchedUOp) {
  UPat sum = UPat(Ops::ADD, {x, y}).named("sum");
  auto caps = captures(sum, a + b);
  ASSERT_TRUE(caps);
  EXPECT_EQ((*caps)["sum"], a + b);
  EXPECT_EQ((*caps)["x"], a);
  EXPECT_EQ((*caps)["y"], b);
  EXPECT_EQ(caps->find("z"), nullptr);
  EXPECT_THROW((*caps)["z"], std::logic_error);
}

TEST_F(UPatTest, ANameUsedTwiceMustBindTheSameUOp) {
  UPat p = UPat(Ops::MUL, {x, x});
  EXPECT_TRUE(matches(p, a * a));
  EXPECT_FALSE(matches(p, a * b));
  // Across levels too: (x + y) * x.
  UPat q = UPat(Ops::MUL, {UPat(Ops::ADD, {x, y}), x}).ordered();
  EXPECT_TRUE(matches(q, (a + b) * a));
  EXPECT_FALSE(matches(q, (a + b) * three));
}

TEST_F(UPatTest, AChoiceOfOrderInsideOneSourceIsRevisitedWhenALaterSourceFails) {
  // (x + y) * x against (a + b) * b: the ADD first matches with x = a, and then the second
  // source b is not x; matching must go back into the ADD and try x = b, y = a.
  UPat q = UPat(Ops::MUL, {UPat(Ops::ADD, {x, y}), x}).ordered();
  auto caps = captures(q, (a + b) * b);
  ASSERT_TRUE(caps);
  EXPECT_EQ((*caps)["x"], b);
  EXPECT_EQ((*caps)["y"], a);
  // Through two commutative levels: x * (x + y) against (b + a) * a swaps both the MUL and the ADD.
  UPat r = UPat(Ops::MUL, {x, UPat(Ops::ADD, {x, y})});
  auto deep = captures(r, (b + a) * a);
  ASSERT_TRUE(deep);
  EXPECT_EQ((*deep)["x"], a);
  EXPECT_EQ((*deep)["y"], b);
}

TEST_F(UPatTest, ExactSourcesMustHaveTheSameCount) {
  UPat p = UPat(Ops::SINK, {x, y});
  EXPECT_TRUE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a, b})));
  EXPECT_FALSE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a})));
  EXPECT_FALSE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a, b, a})));
  EXPECT_TRUE(matches(UPat(Ops::SINK, {}), UOp::make(Ops::SINK, dtypes::void_, {})));
  EXPECT_FALSE(matches(UPat(Ops::SINK, {}), UOp::make(Ops::SINK, dtypes::void_, {a})));
}

TEST_F(UPatTest, AllowAnyLenMatchesAPrefix) {
  UPat p = UPat(Ops::SINK, {x, y}).allow_any_len();
  EXPECT_TRUE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a, b})));
  EXPECT_TRUE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a, b, three})));
  EXPECT_FALSE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {a})));
  auto caps = captures(p, UOp::make(Ops::SINK, dtypes::void_, {b, a, three}));
  ASSERT_TRUE(caps);
  EXPECT_EQ((*caps)["x"], b);
}

TEST_F(UPatTest, SrcAllMatchesEverySourceWhateverTheirCount) {
  UPat p = UPat(Ops::SINK).src_all(UPat::cvar());
  EXPECT_TRUE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {three, UOp::index(4), three})));
  EXPECT_TRUE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {})));
  EXPECT_FALSE(matches(p, UOp::make(Ops::SINK, dtypes::void_, {three, a})));
  // A name inside src_all binds once, so every source must be that same UOp.
  UPat same = UPat(Ops::SINK).src_all(x);
  EXPECT_TRUE(matches(same, UOp::make(Ops::SINK, dtypes::void_, {a, a, a})));
  EXPECT_FALSE(matches(same, UOp::make(Ops::SINK, dtypes::void_, {a, b})));
}

TEST_F(UPatTest, CommutativeOpsMatchInBothOrders) {
  UPat p = x + c;
  auto fwd = captures(p, a + three);
  auto rev = captures(p, three + a);
  ASSERT_TRUE(fwd && rev);
  EXPECT_EQ((*fwd)["x"], a);
  EXPECT_EQ((*rev)["x"], a);
  EXPECT_EQ((*rev)["c"], three);
  EXPECT_FALSE(matches(p, a + b));
  // Comparisons such as CMPLT are not commutative, nor is anything marked ordered().
  EXPECT_FALSE(matches(UPat(Ops::CMPLT, {x, c}), three.lt(a)));
  EXPECT_FALSE(matches(p.ordered(), three + a));
}

TEST_F(UPatTest, CapturesOfAFailedOrderAreUndone) {
  // On CONST + a, the first order binds x to the CONST and then fails on c; if that binding
  // stayed, the second order (x = a) would fail too.
  UPat p = UPat(Ops::ADD, {x, c});
  auto caps = captures(p, three + a);
  ASSERT_TRUE(caps);
  EXPECT_EQ((*caps)["x"], a);
  EXPECT_EQ(caps->size(), 2u);
  // The same with a deeper first source: (x * y) + c against c + (a * b).
  UPat q = UPat(Ops::MUL, {x, y}) + c;
  auto deep = captures(q, three + a * b);
  ASSERT_TRUE(deep);
  EXPECT_EQ((*deep)["x"], a);
  EXPECT_EQ(deep->size(), 3u);
}

TEST_F(UPatTest, CnstMatchesAConstantOfThatValueInAnyDtype) {
  EXPECT_TRUE(matches(UPat::cnst(0), UOp::index(0)));
  EXPECT_TRUE(matches(UPat::cnst(0), UOp::const_float(dtypes::float32, 0.0)));
  EXPECT_TRUE(matches(UPat::cnst(0), UOp::const_float(dtypes::float32, -0.0)));
  EXPECT_TRUE(matches(UPat::cnst(1), UOp::const_bool(true)));
  EXPECT_FALSE(matches(UPat::cnst(0), UOp::index(1)));
  EXPECT_FALSE(matches(UPat::cnst(0), a));
  EXPECT_TRUE(matches(x * -1, a * -1));
}

TEST_F(UPatTest, CvarMatchesAnyConstant) {
  EXPECT_TRUE(matches(c, three));
  EXPECT_TRUE(matches(c, UOp::const_float(dtypes::float16, 2.5)));
  EXPECT_FALSE(matches(c, a));
  EXPECT_TRUE(matches(UPat::cvar("c", dtypes::int32), three));
  EXPECT_FALSE(matches(UPat::cvar("c", dtypes::int64), three));
}

TEST_F(UPatTest, PredicatesMustAllHold) {
  UPat small = x.where([](const UOp& u) { return u.vmax() < 5; });
  EXPECT_TRUE(matches(small, UOp::index(4)));
  EXPECT_FALSE(matches(small, a));  // a goes up to 9
  UPat small_even = small.where([](const UOp& u) { return u.is_const() && u.const_int() % 2 == 0; });
  EXPECT_TRUE(matches(small_even, UOp::index(4)));
  EXPECT_FALSE(matches(small_even, three));
  EXPECT_FALSE(matches(small_even, UOp::index(6)));
}

TEST_F(UPatTest, ExpressionBuildingMatchesTheOpsItNames) {
  EXPECT_TRUE(matches((x * c) / c, (a * three) / three));
  EXPECT_FALSE(matches((x * c) / c, (a * three) / UOp::index(4)));
  EXPECT_TRUE(matches(x % 4, a % 4));
  EXPECT_TRUE(matches(x.lt(y).where(x, y), a.lt(b).where(a, b)));
  EXPECT_TRUE(matches(x.cast(dtypes::float32), a.cast(dtypes::float32)));
  EXPECT_FALSE(matches(x.cast(dtypes::float16), a.cast(dtypes::float32)));
  EXPECT_EQ((x * c + 0).to_string(), "ADD(MUL(x, CONST:c), CONST(0.000000))");
}

// Regression: matching recursed once per goal, so src_all over 100000 sources overflowed the
// stack. The matcher is iterative now.
TEST_F(UPatTest, SrcAllOverAHundredThousandSourcesDoesNotRecurse) {
  std::vector<UOp> src;
  for (int i = 0; i < 100000; i++) src.push_back(UOp::index(i % 7));
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, src);
  Captures caps;
  EXPECT_TRUE(match(UPat(Ops::SINK).src_all(UPat::cvar()), sink, caps));
  src.push_back(UOp::variable("v", 0, 3));
  UOp with_var = UOp::make(Ops::SINK, dtypes::void_, src);
  EXPECT_FALSE(match(UPat(Ops::SINK).src_all(UPat::cvar()), with_var, caps));
}

// A predicate that matches a pattern itself runs a match inside a match.
TEST_F(UPatTest, MatchInsideAPredicateLeavesTheOuterMatchIntact) {
  UPat inner = UPat::var("i") + 1;
  UPat outer = UPat::var("a").where([&](const UOp& u) {
    Captures c;
    return match(inner, u, c);
  }) * UPat::var("b");
  UOp x = UOp::variable("x", 0, 9), y = UOp::variable("y", 0, 9);
  Captures caps;
  ASSERT_TRUE(match(outer, (x + 1) * y, caps));
  EXPECT_EQ(caps["a"], x + 1);
  EXPECT_EQ(caps["b"], y);
  EXPECT_FALSE(match(outer, (x + 2) * y, caps));
}

}  // namespace
}  // namespace tunebed
