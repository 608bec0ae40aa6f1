// PatternMatcher: indexing by op, composition, rule order, guards, hit counts, and replacement
// templates (instantiate).
#include "core/rewrite/pattern_matcher.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tunebed {
namespace {

const UPat x = UPat::var("x"), y = UPat::var("y"), c = UPat::cvar("c");

struct PatternMatcherTest : ::testing::Test {
  UOp a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9);
  UOp fa = UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({"fa", 0, 1}));
  UOp fb = UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({"fb", 0, 1}));
};

TEST_F(PatternMatcherTest, ARuleIsTriedOnlyOnTheOpsOfItsRoot) {
  int add_tries = 0, any_tries = 0;
  PatternMatcher pm{
      {"on-add", UPat(Ops::ADD).where([&](const UOp&) { return ++add_tries, false; }), x},
      {"on-any", UPat().where([&](const UOp&) { return ++any_tries, false; }), x},
  };
  EXPECT_FALSE(pm.rewrite(a * b));
  EXPECT_FALSE(pm.rewrite(a.max(b)));
  EXPECT_EQ(add_tries, 0) << "the ADD rule was tried on MUL or MAX";
  EXPECT_EQ(any_tries, 2);
  EXPECT_FALSE(pm.rewrite(a + b));
  EXPECT_EQ(add_tries, 1);
  EXPECT_EQ(any_tries, 3);
}

TEST_F(PatternMatcherTest, ARuleOnAnOpSetIsTriedOnEachOfItsOps) {
  PatternMatcher pm{{"add-or-mul-to-max", UPat::ops({Ops::ADD, Ops::MUL}, {x, y}), x.max(y)}};
  EXPECT_EQ(pm.rewrite(a + b), a.max(b));
  EXPECT_EQ(pm.rewrite(a * b), a.max(b));
  EXPECT_FALSE(pm.rewrite(a % b));
}

TEST_F(PatternMatcherTest, TheFirstRuleThatFiresWins) {
  PatternMatcher pm{
      {"never", x + y, x * y, [](const Match&) { return false; }},
      {"first", x + y, x.max(y)},
      {"second", x + y, x * y},
  };
  PatternMatcher::Applied r = pm.apply(a + b, nullptr, nullptr);
  EXPECT_EQ(r.out, a.max(b));
  ASSERT_NE(r.rule, nullptr);
  EXPECT_EQ(r.rule->name, "first");
}

TEST_F(PatternMatcherTest, ARuleThatReturnsNothingOrItsInputDoesNotFire) {
  PatternMatcher pm{
      {"null", x + y, [](const Match&) { return UOp(); }},
      {"same", x + y, [](const Match& m) { return m.root; }},
      {"real", x + y, x * y},
  };
  EXPECT_EQ(pm.rewrite(a + b), a * b);
  EXPECT_EQ(rule_stats(pm), "real: 1\n");
}

TEST_F(PatternMatcherTest, CompositionKeepsTheLeftTablesRulesFirst) {
  PatternMatcher left{{"to-max", x + y, x.max(y)}};
  PatternMatcher right{{"to-mul", x + y, x * y}, {"neg", UPat(Ops::NEG, {x}), x}};
  PatternMatcher both = left + right;
  EXPECT_EQ(both.entries().size(), 3u);
  EXPECT_EQ(both.rewrite(a + b), a.max(b));
  EXPECT_EQ((right + left).rewrite(a + b), a * b);
  EXPECT_EQ(both.rewrite(a.alu(Ops::NEG)), a) << "rules of the right table are indexed too";
}

TEST_F(PatternMatcherTest, RuleStatsCountHitsPerRuleInTableOrder) {
  PatternMatcher pm{
      {"add-zero", x + 0, x},
      {"mul-one", x * 1, x},
      {"mod-one", x % 1, [](const Match& m) { return m["x"].const_like(0); }},
  };
  EXPECT_EQ(rule_stats(pm), "");
  pm.rewrite(a * 1);
  pm.rewrite(a + 0);
  pm.rewrite(b + 0);
  pm.rewrite(a + 1);  // no hit
  EXPECT_EQ(rule_stats(pm), "add-zero: 2\nmul-one: 1\n");
}

TEST_F(PatternMatcherTest, RewriteRecordsTheStepInTheTrace) {
  PatternMatcher pm{{"add-zero", x + 0, x}};
  RewriteTrace trace;
  EXPECT_EQ(pm.rewrite(a + 0, nullptr, nullptr, &trace), a);
  EXPECT_FALSE(pm.rewrite(a, nullptr, nullptr, &trace));
  ASSERT_EQ(trace.size(), 1u);
  EXPECT_EQ(trace[0].rule, "add-zero");
  EXPECT_EQ(trace[0].before, a + 0);
  EXPECT_EQ(trace[0].after, a);
}

TEST_F(PatternMatcherTest, GuardsSeeTheCaptures) {
  PatternMatcher pm{{"div-self", (x * c) / c, x, [](const Match& m) { return m["c"].const_value() != 0; }}};
  EXPECT_EQ(pm.rewrite((a * 3) / 3), a);
  EXPECT_FALSE(pm.rewrite((a * 0) / 0));
  EXPECT_FALSE(pm.rewrite((a * 3) / 4));
}

// ---- replacement templates -----------------------------------------------------------------

TEST_F(PatternMatcherTest, TemplatesRebuildTheCapturedNodes) {
  PatternMatcher pm{{"swap", x + y, y + x},
                    {"dist", (x + y) * UPat::var("z"), x * UPat::var("z") + y * UPat::var("z")}};
  EXPECT_EQ(pm.rewrite(a + b), b + a);
  UOp z = UOp::variable("z", 1, 2);
  EXPECT_EQ(pm.rewrite((a + b) * z), a * z + b * z);
}

TEST_F(PatternMatcherTest, TemplateConstantsTakeTheDtypeOfASibling) {
  PatternMatcher pm{{"double", x + x, x * 2}};
  EXPECT_EQ(pm.rewrite(a + a), a * UOp::const_int(dtypes::int32, 2));
  EXPECT_EQ(pm.rewrite(fa + fa), fa * UOp::const_float(dtypes::float32, 2.0));
  UOp h = UOp::make(Ops::DEFINE_VAR, dtypes::float16.vec(4), {}, Arg::tuple({"h", 0, 1}));
  UOp out = pm.rewrite(h + h);
  ASSERT_TRUE(out);
  EXPECT_EQ(out.src(1).dtype(), dtypes::float16.vec(4));
  EXPECT_EQ(out.dtype(), dtypes::float16.vec(4));
}

TEST_F(PatternMatcherTest, WhereConstantsTakeTheDtypeOfTheBranchesNotTheCondition) {
  // relu: x < 0 ? 0 : x. The 0 in the comparison is x's dtype; so is the 0 branch.
  PatternMatcher pm{{"relu", x.max(UPat::cnst(0)), x.lt(UPat::cnst(0)).where(UPat::cnst(0), x)}};
  UOp out = pm.rewrite(fa.max(UOp::const_float(dtypes::float32, 0.0)));
  ASSERT_TRUE(out);
  EXPECT_EQ(out,
            fa.lt(UOp::const_float(dtypes::float32, 0.0)).where(UOp::const_float(dtypes::float32, 0.0), fa));
  EXPECT_EQ(out.dtype(), dtypes::float32);
  EXPECT_EQ(out.src(0).dtype(), dtypes::bool_);
}

TEST_F(PatternMatcherTest, TemplateComparisonsAreBool) {
  PatternMatcher pm{{"max-is-lt", x.max(y), x.lt(y)}};
  EXPECT_EQ(pm.rewrite(fa.max(fb)).dtype(), dtypes::bool_);
  UOp v = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(4), {fa, fa, fb, fb});
  EXPECT_EQ(pm.rewrite(v.max(v)).dtype(), dtypes::bool_.vec(4));
}

TEST_F(PatternMatcherTest, TemplateDtypeAndArgComeFromThePattern) {
  PatternMatcher pm{
      {"to-float", x + 0, x.cast(dtypes::float32)},
      {"tag", UPat(Ops::NEG, {x}), UPat(Ops::NOOP, {x}).arg(Arg("tagged")).dtype(dtypes::void_)}};
  EXPECT_EQ(pm.rewrite(a + 0), a.cast(dtypes::float32));
  EXPECT_EQ(pm.rewrite(a.alu(Ops::NEG)), UOp::make(Ops::NOOP, dtypes::void_, {a}, Arg("tagged")));
}

TEST_F(PatternMatcherTest, MalformedTemplatesAreLogicErrors) {
  PatternMatcher lone_const{{"lone", UPat(Ops::NEG, {x}), UPat::cnst(0)}};
  EXPECT_THROW(lone_const.rewrite(a.alu(Ops::NEG)), std::logic_error);
  PatternMatcher two_ops{{"two", UPat(Ops::NEG, {x}), UPat::ops({Ops::ADD, Ops::MUL}, {x, x})}};
  EXPECT_THROW(two_ops.rewrite(a.alu(Ops::NEG)), std::logic_error);
  PatternMatcher unbound{{"unbound", UPat(Ops::NEG, {x}), y}};
  EXPECT_THROW(unbound.rewrite(a.alu(Ops::NEG)), std::logic_error);
}

}  // namespace
}  // namespace tunebed
