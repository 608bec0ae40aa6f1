// graph_rewrite: the two walk orders, fixed points, memoisation on shared nodes, the context,
// the trace, and the guard against rule sets that never settle.
#include "core/rewrite/graph_rewrite.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace tunebed {
namespace {

const UPat x = UPat::var("x");

UOp fvar(const char* name) {
  return UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({name, 0, 1}));
}
UOp sink(std::vector<UOp> src) { return UOp::make(Ops::SINK, dtypes::void_, std::move(src)); }

TEST(GraphRewrite, DefaultAndBottomUpOrdersGiveDifferentResults) {
  // The default order rewrites sources before their users, so SQRT(a) has become EXP2(a) before
  // NEG(SQRT(a)) is looked at and "neg-sqrt" never sees its pattern. bottom_up (tinygrad's name)
  // rewrites a node before its sources, so "neg-sqrt" fires first and the SQRT is gone.
  PatternMatcher pm{
      {"neg-sqrt", UPat(Ops::NEG, {UPat(Ops::SQRT, {x})}), x},
      {"sqrt-to-exp2", UPat(Ops::SQRT, {x}), UPat(Ops::EXP2, {x})},
  };
  UOp a = fvar("a");
  UOp g = a.alu(Ops::SQRT).alu(Ops::NEG);
  EXPECT_EQ(graph_rewrite(g, pm), a.alu(Ops::EXP2).alu(Ops::NEG));
  EXPECT_EQ(graph_rewrite(g, pm, RewriteOptions{.bottom_up = true}), a);
}

TEST(GraphRewrite, DefaultAndBottomUpOrdersLeaveDifferentTraces) {
  // (a + 0) + 0. Default: the inner a + 0 becomes a first; the outer node rebuilt on it is then
  // a + 0 again, a node already rewritten, so the memo answers and one step is recorded.
  // bottom_up: the outer node is rewritten first, to the inner one, and then that to a.
  PatternMatcher pm{{"add-zero", x + 0, x}};
  UOp a = UOp::variable("a", 0, 9);
  UOp g = (a + 0) + 0;
  RewriteTrace def, bu;
  EXPECT_EQ(graph_rewrite(g, pm, RewriteOptions{.trace = &def}), a);
  EXPECT_EQ(graph_rewrite(g, pm, RewriteOptions{.bottom_up = true, .trace = &bu}), a);
  ASSERT_EQ(def.size(), 1u);
  EXPECT_EQ(def[0].before, a + 0);
  ASSERT_EQ(bu.size(), 2u);
  EXPECT_EQ(bu[0].before, g);
  EXPECT_EQ(bu[0].after, a + 0);
  EXPECT_EQ(bu[1].before, a + 0);
  EXPECT_EQ(bu[1].after, a);
}

TEST(GraphRewrite, RulesApplyUntilNoneFires) {
  PatternMatcher pm{
      {"exp2-to-log2", UPat(Ops::EXP2, {x}), UPat(Ops::LOG2, {x})},
      {"log2-to-sin", UPat(Ops::LOG2, {x}), UPat(Ops::SIN, {x})},
      {"sin-to-sqrt", UPat(Ops::SIN, {x}), UPat(Ops::SQRT, {x})},
      // Enabled only once the source has gone all the way down the chain.
      {"neg-sqrt", UPat(Ops::NEG, {UPat(Ops::SQRT, {x})}), x},
  };
  UOp a = fvar("a");
  for (bool bottom_up : {false, true}) {
    RewriteTrace trace;
    EXPECT_EQ(graph_rewrite(a.alu(Ops::EXP2), pm, RewriteOptions{.bottom_up = bottom_up, .trace = &trace}),
              a.alu(Ops::SQRT));
    ASSERT_EQ(trace.size(), 3u);
    EXPECT_EQ(trace[0].rule, "exp2-to-log2");
    EXPECT_EQ(trace[2].rule, "sin-to-sqrt");
  }
  EXPECT_EQ(graph_rewrite(a.alu(Ops::EXP2).alu(Ops::NEG), pm), a);
}

TEST(GraphRewrite, AComputingRuleRunsToItsFixedPoint) {
  PatternMatcher pm{{"count-down", UPat::cvar("c"), [](const Match& m) {
                       int64_t v = m["c"].const_int();
                       return v > 0 ? m["c"].const_like(v - 1) : UOp();
                     }}};
  RewriteTrace trace;
  EXPECT_EQ(graph_rewrite(sink({UOp::index(50)}), pm, RewriteOptions{.trace = &trace}),
            sink({UOp::index(0)}));
  EXPECT_EQ(trace.size(), 50u);
}

TEST(GraphRewrite, ANodeShared1000TimesIsRewrittenOnce) {
  int fired = 0;
  PatternMatcher pm{{"add-zero", x + 0, [&](const Match& m) {
                       fired++;
                       return m["x"];
                     }}};
  UOp a = UOp::variable("a", 0, 9);
  UOp shared = a + 0;
  std::vector<UOp> users, want;
  for (int i = 1; i <= 1000; i++) {
    users.push_back(shared * i);
    want.push_back(a * i);
  }
  RewriteTrace trace;
  EXPECT_EQ(graph_rewrite(sink(users), pm, RewriteOptions{.trace = &trace}), sink(want));
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(trace.size(), 1u);
  EXPECT_EQ(rule_stats(pm), "add-zero: 1\n");
}

TEST(GraphRewrite, ALongChainIsWalkedWithoutRecursion) {
  PatternMatcher pm{{"neg-neg", UPat(Ops::NEG, {UPat(Ops::NEG, {x})}), x}};
  UOp a = fvar("a");
  UOp u = a;
  for (int i = 0; i < 100000; i++) u = u.alu(Ops::NEG);
  EXPECT_EQ(graph_rewrite(u, pm), a);
  EXPECT_EQ(graph_rewrite(u.alu(Ops::NEG), pm, RewriteOptions{.bottom_up = true}), a.alu(Ops::NEG));
}

struct Env {
  std::map<std::string, int64_t> values;
  int substituted = 0;
};

const PatternMatcher substitute{{"substitute", UPat(Ops::DEFINE_VAR), [](const Match& m) {
                                   Env& env = m.ctx<Env>();
                                   auto it = env.values.find(m.root.arg().as_tuple().at(0).as_string());
                                   if (it == env.values.end()) return UOp();
                                   env.substituted++;
                                   return m.root.const_like(it->second);
                                 }}};

TEST(GraphRewrite, RulesReachTheContext) {
  UOp a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9), z = UOp::variable("z", 0, 9);
  Env env{{{"a", 3}, {"b", 4}}};
  EXPECT_EQ(graph_rewrite(a * b + z, substitute, env), UOp::index(3) * UOp::index(4) + z);
  EXPECT_EQ(env.substituted, 2);
}

TEST(GraphRewrite, AWrongOrMissingContextThrows) {
  UOp a = UOp::variable("a", 0, 9);
  std::string not_an_env;
  EXPECT_THROW(graph_rewrite(a + 1, substitute, not_an_env), std::logic_error);
  EXPECT_THROW(graph_rewrite(a + 1, substitute), std::logic_error);
}

TEST(GraphRewrite, TheTraceRecordsRuleBeforeAndAfterInOrder) {
  PatternMatcher pm{{"add-zero", x + 0, x}, {"mul-one", x * 1, x}};
  UOp a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9);
  RewriteTrace trace;
  EXPECT_EQ(graph_rewrite(sink({a * 1, b + 0}), pm, RewriteOptions{.trace = &trace}), sink({a, b}));
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].rule, "mul-one");
  EXPECT_EQ(trace[0].before, a * 1);
  EXPECT_EQ(trace[0].after, a);
  EXPECT_EQ(trace[1].rule, "add-zero");
  EXPECT_EQ(trace[1].before, b + 0);
  EXPECT_EQ(trace[1].after, b);
}

TEST(GraphRewrite, NoRuleFiringLeavesTheGraphAlone) {
  PatternMatcher pm{{"add-zero", x + 0, x}};
  UOp g = UOp::variable("a", 0, 9) * 3 + 1;
  RewriteTrace trace;
  EXPECT_EQ(graph_rewrite(g, pm, RewriteOptions{.trace = &trace}), g);
  EXPECT_TRUE(trace.empty());
}

// x -> y and y -> x never settle; the error names a rule of the cycle, whichever fired last.
void expect_no_fixed_point(const UOp& g, const PatternMatcher& pm, const RewriteOptions& opts) {
  try {
    graph_rewrite(g, pm, opts);
    ADD_FAILURE() << "rewrote to a fixed point";
  } catch (const RewriteError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("no fixed point"), std::string::npos) << msg;
    EXPECT_TRUE(msg.find("(last rule: neg-to-sqrt)") != std::string::npos ||
                msg.find("(last rule: sqrt-to-neg)") != std::string::npos)
        << msg;
  }
}

TEST(GraphRewrite, RulesThatUndoEachOtherRaiseRewriteErrorNamingTheRule) {
  PatternMatcher pm{
      {"neg-to-sqrt", UPat(Ops::NEG, {x}), UPat(Ops::SQRT, {x})},
      {"sqrt-to-neg", UPat(Ops::SQRT, {x}), UPat(Ops::NEG, {x})},
  };
  UOp g = fvar("a").alu(Ops::NEG);
  expect_no_fixed_point(g, pm, {});
  expect_no_fixed_point(g, pm, RewriteOptions{.bottom_up = true});
  expect_no_fixed_point(sink({g, g.alu(Ops::EXP2)}), pm, RewriteOptions{.max_steps = 10});
}

// a + c -> (a + c) + c grows the graph by a node each rewrite, and each new node matches again.
// The step limit counts nodes of the input, not of the grown graph: it throws instead of eating
// memory (the limit used to grow with every node rewritten).
TEST(GraphRewrite, RulesThatGrowTheGraphForeverStopAtTheInputsLimit) {
  const UPat c = UPat::cvar("c");
  PatternMatcher pm{{"grow", x + c, [](const Match& m) { return (m["x"] + m["c"]) + m["c"]; }}};
  const UOp g = UOp::variable("a", 0, 9) + 1;
  for (bool bottom_up : {false, true}) {
    try {
      graph_rewrite(g, pm, RewriteOptions{.bottom_up = bottom_up});
      ADD_FAILURE() << "rewrote to a fixed point";
    } catch (const RewriteError& e) {
      EXPECT_NE(std::string(e.what()).find("no fixed point after 103000 rewrites (last rule: grow)"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(GraphRewrite, MaxStepsBoundsTheRewrites) {
  PatternMatcher pm{{"count-down", UPat::cvar("c"), [](const Match& m) {
                       int64_t v = m["c"].const_int();
                       return v > 0 ? m["c"].const_like(v - 1) : UOp();
                     }}};
  EXPECT_THROW(graph_rewrite(UOp::index(50), pm, RewriteOptions{.max_steps = 10}), RewriteError);
  EXPECT_EQ(graph_rewrite(UOp::index(10), pm, RewriteOptions{.max_steps = 10}), UOp::index(0));
}

}  // namespace
}  // namespace tunebed
