// Each rule family of core/symbolic on cases where a named rule must fire (and what it must give)
// and cases where it must not. Expressions are written in the expression syntax; `fires` also
// checks, through the rewrite trace, that the named rule is the one that did the work.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {
namespace {

ExprOptions bounds(std::map<std::string, VarBounds> vars) {
  ExprOptions o;
  o.vars = std::move(vars);
  return o;
}

// x, y in [0, 100]; n in [-50, -1]; s in [-20, 20]; i, j, k small indices.
const ExprOptions kVars = bounds({{"x", {0, 100}},
                                  {"y", {0, 100}},
                                  {"n", {-50, -1}},
                                  {"s", {-20, 20}},
                                  {"i", {0, 9}},
                                  {"j", {0, 5}},
                                  {"k", {0, 3}},
                                  {"b", {0, 1}}});

std::string simp(const std::string& text, const ExprOptions& o = kVars) {
  return print_expr(simplify(parse_expr(text, o)));
}

// The rules that fired while simplifying text.
std::vector<std::string> rules_fired(const std::string& text, const ExprOptions& o = kVars) {
  RewriteTrace trace;
  graph_rewrite(parse_expr(text, o), symbolic(), RewriteOptions{.trace = &trace});
  std::vector<std::string> names;
  for (const RewriteStep& s : trace) names.push_back(s.rule);
  return names;
}

bool fired(const std::string& rule, const std::string& text, const ExprOptions& o = kVars) {
  auto names = rules_fired(text, o);
  return std::find(names.begin(), names.end(), rule) != names.end();
}

struct Case {
  std::string rule, input, expected;
};

void expect_rules(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(simp(c.input), c.expected) << c.input;
    EXPECT_TRUE(fired(c.rule, c.input)) << c.rule << " did not fire on " << c.input;
    // and the result is the same function as the input
    UOp in = parse_expr(c.input, kVars);
    auto m = find_mismatch(in, simplify(in), 1 << 16, 2000, 1);
    EXPECT_FALSE(m) << c.input << ": " << (m ? m->to_string() : "");
  }
}

void expect_unchanged(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [rule, input] : cases) EXPECT_FALSE(fired(rule, input)) << rule << " must not fire on " << input;
}

TEST(SymbolicFold, FoldsEveryIntegerOp) {
  expect_rules({
      {"fold-const", "3+4*5", "23"},
      {"fold-const", "-7//2", "-3"},
      {"fold-const", "-7%2", "-1"},
      {"fold-const", "7%-2", "1"},
      {"fold-const", "max(-3, 2)", "2"},
      {"fold-const", "min(-3, 2)", "-3"},
      {"fold-const", "where(2 < 3, 10, 20)", "10"},
      {"fold-const", "(3 == 3) != (4 < 2)", "true"},
      {"fold-const", "9223372036854775807+1", "-9223372036854775808"},
  });
}

TEST(SymbolicFold, NeverFoldsDivisionByZero) {
  EXPECT_EQ(simp("7//0"), "7//0");
  EXPECT_EQ(simp("7%0"), "7%0");
}

TEST(SymbolicIdentities, RemoveOps) {
  expect_rules({
      {"add-zero", "x+0", "x"},
      {"mul-one", "x*1", "x"},
      {"mul-zero", "x*0", "0"},
      {"div-one", "s//1", "s"},
      {"div-neg-one", "s//-1", "-s"},
      {"div-self", "n//n", "1"},
      {"mul-div", "(s*n)//n", "s"},
      {"mod-one", "s%1", "0"},
      {"mod-self", "s%s", "0"},
      {"mod-mod", "(s%y)%y", "s%y"},
      {"lt-self", "s<s", "false"},
      {"ne-self", "s!=s", "false"},
      {"eq-self", "s==s", "true"},
      {"where-same", "where(x<y, s, s)", "s"},
      {"where-not", "where(!(x<y), s, n)", "where(x<y, n, s)"},
      {"idempotent", "max(x*y, x*y)", "x*y"},
  });
}

TEST(SymbolicIdentities, BoolAndWhereAlgebra) {
  expect_rules({
      {"xor-zero", "s^0", "s"},
      {"mod-neg-one", "s%-1", "0"},
      {"and-true", "(x<y)&true", "x<y"},
      {"and-false", "(x<y)&false", "false"},
      {"or-true", "(x<y)|true", "true"},
      {"or-false", "(x<y)|false", "x<y"},
      {"or-absorb", "(x<y)|((x<y)&(s<n))", "x<y"},
      {"not-not", "!!(x<y)", "x<y"},
      {"where-const-cond", "where(true, x, y)", "x"},
      {"where-is-cond", "where(x<y, true, false)", "x<y"},
      {"where-where", "where(x<y, where(s<n, x, y), y)", "where(s<n&x<y, x, y)"},
      {"where-alu-where", "where(x<y, s, 0) + where(x<y, n, 1)", "where(x<y, n+s, 1)"},
  });
}

TEST(SymbolicIdentities, BoolArithmeticIsLogic) {
  UOp x = UOp::variable("x", 0, 9, dtypes::int64), y = UOp::variable("y", 0, 9, dtypes::int64);
  UOp a = x.lt(y), b = y.lt(x);
  EXPECT_EQ(simplify(UOp::make(Ops::MUL, dtypes::bool_, {a, b})), simplify(a & b));
  EXPECT_EQ(simplify(UOp::make(Ops::ADD, dtypes::bool_, {a, b})), simplify(a | b));
  EXPECT_EQ(simplify(a.max(b)), simplify(a | b));
  EXPECT_EQ(print_expr(simplify(a.max(b))), "x<y|y<x");
}

TEST(SymbolicIdentities, Casts) {
  UOp x = UOp::variable("x", 0, 9, dtypes::int32);
  EXPECT_EQ(simplify(UOp::make(Ops::CAST, dtypes::int32, {x})), x);                    // cast-noop
  EXPECT_EQ(simplify(x.cast(dtypes::int64).cast(dtypes::int32)), x);                     // cast-through
  EXPECT_EQ(simplify(x.cast(dtypes::int8).cast(dtypes::int32)), x);                      // 0..9 fits int8
  EXPECT_EQ(simplify(x.cast(dtypes::int16).cast(dtypes::int64)), x.cast(dtypes::int64));
  UOp w = UOp::variable("w", 0, 1000, dtypes::int32);
  UOp narrowed = w.cast(dtypes::int8).cast(dtypes::int32);                               // 1000 does not fit
  EXPECT_EQ(simplify(narrowed), narrowed);
}

TEST(SymbolicIdentities, GuardedIdentitiesNeedTheirGuards) {
  expect_unchanged({
      {"div-self", "s//s"},           // s may be 0, and 0//0 is 0
      {"mul-div", "(s*y)//y"},        // y may be 0
      {"mul-div", "(x*x*x*x*x*x*x*x*x*x*x)//x"},  // x^11 wraps int64
  });
}

TEST(SymbolicCombine, CombinesLikeTermsAcrossNestedSums) {
  expect_rules({
      {"normalize-sum", "x+y+x*3-y", "x*4"},
      {"normalize-sum", "(x+5)+(y+(x-7))", "x*2+y-2"},
      {"normalize-sum", "(s%4)+(s//4)*4", "s"},
      {"normalize-sum", "(s%4)*3+y+(s//4)*12", "s*3+y"},
      {"distribute-const", "x-(x-y)", "y"},
      {"distribute-const", "(x+y)*3-x*3", "y*3"},
      {"assoc-consts", "(s*3)*-4", "-s*12"},
      {"assoc-consts", "max(max(s, 10), 11)", "max(s, 11)"},
      {"normalize-sum", "x//4+(x+1)//4+(x+2)//4+(x+3)//4", "x"},      // Hermite's identity
      {"normalize-sum", "(k+1)//4+(k+2)//4+(k+3)//4", "k"},           // k//4 was already 0
      {"mul-const-out", "(x*3)*y", "x*y*3"},
      {"commute", "y*x", "x*y"},
  });
}

TEST(SymbolicCombine, SubAndNegBecomeSums) {
  UOp x = UOp::variable("x", 0, 9, dtypes::int32), y = UOp::variable("y", 0, 9, dtypes::int32);
  EXPECT_EQ(print_expr(simplify(UOp::make(Ops::SUB, dtypes::int32, {x + y, y}))), "x");
  EXPECT_EQ(print_expr(simplify(UOp::make(Ops::NEG, dtypes::int32, {x - y}) + x)), "y");
}

TEST(SymbolicCombine, DoesNotReassociateFloats) {
  UOp f = UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, Arg::tuple({Arg("f"), Arg(0), Arg(1)}));
  UOp e = (f + f.const_like_float(1.0)) + f.const_like_float(2.0);
  EXPECT_EQ(simplify(e), e);
  EXPECT_EQ(simplify(f * f.const_like_float(0.0)), f * f.const_like_float(0.0));  // NaN*0 is NaN
}

TEST(SymbolicRange, DecidesFromBounds) {
  expect_rules({
      {"range-const", "x<101", "true"},
      {"range-const", "n<0", "true"},
      {"range-const", "k//4", "0"},
      {"mod-range", "k%4", "k"},
      {"max-ordered", "max(x+101, y)", "x+101"},
      {"max-ordered", "max(n, x)", "x"},
      {"range-const", "(x+200)//(k+400)", "0"},
      {"range-const", "(n-100)//(n-200)", "0"},
      {"mod-range", "(x+200)%(k+400)", "x+200"},
      {"mod-range", "(x+300)%(k+250)", "-k+x+50"},
      {"mod-range", "(n-100)%(n-200)", "n-100"},
  });
}

TEST(SymbolicRange, NegativeDividendsAreNotFloorDivided) {
  // s in [-20, 20]: s%4 is not s (s == 5), and s//40 is 0 for every s only by truncation
  EXPECT_EQ(simp("s%40"), "s");
  EXPECT_EQ(simp("s//40"), "0");
  EXPECT_EQ(simp("s%4"), "s%4");
  EXPECT_EQ(simp("s//4"), "s//4");
}

TEST(SymbolicDivmod, FoldsSumsByConstants) {
  expect_rules({
      {"divmod-fold", "(i*4+k)//4", "i"},
      {"divmod-fold", "(i*4+k)%4", "k"},
      {"divmod-fold", "(x*6+4)//2", "x*3+2"},
      {"divmod-fold", "(s*6+4)//2", "s*3+2"},       // a common factor cancels for any sign
      {"divmod-fold", "(s*6+4)%4", "(s*3+2)%2*2"},
      {"divmod-fold", "(x*4+y)//4", "x+y//4"},
      {"divmod-fold", "(x*4+y)%4", "y%4"},
      {"divmod-fold", "(b*3+1)//2", "b*2"},        // b takes two values: a line through them
      {"divmod-fold", "(b+3)%2", "-b+1"},
      {"divmod-fold", "(-x+256)//4", "-((x+3)//4)+64"},  // negative terms, non-negative sum
      {"divmod-fold", "((x%12)+y)%4", "(x+y)%4"},
      {"div-div", "(s//3)//4", "s//12"},
      {"div-add-div", "(x//4+2)//3", "(x+8)//12"},
      {"div-neg-divisor", "s//(n*2)", "-(s//(-n*2))"},
      {"mod-neg-divisor", "s%-8", "s%8"},
      {"div-neg-dividend", "(n*3)//(i+1)", "-(-n*3//(i+1))"},
      {"mod-neg-dividend", "(n*3)%(i+1)", "-(-n*3%(i+1))"},
  });
}

TEST(SymbolicDivmod, FloorOnlyRulesNeedNonNegativeDividends) {
  expect_unchanged({
      {"divmod-fold", "(s*4+k)//4"},   // s*4+k may be negative: truncation is not floor
      {"divmod-fold", "(s*4+3)%4"},
      {"divmod-fold", "((s%12)+y)%4"},  // s%12 may be negative
      {"div-add-div", "(s//4+2)//3"},
  });
  EXPECT_EQ(simp("(s*4+k)//4"), "(k+s*4)//4");
  // Hermite's identity needs s >= 0 (s == -1 gives -1 on the left)
  EXPECT_EQ(simp("s//4+(s+1)//4+(s+2)//4+(s+3)//4"), "s//4+(s+1)//4+(s+2)//4+(s+3)//4");
}

TEST(SymbolicDivmod, WrappingSumsAreLeftAlone) {
  // x*2^62 wraps int64: (x*2^62 + 4)//4 is not x*2^60 + 1
  EXPECT_FALSE(fired("divmod-fold", "(x*4611686018427387904+4)//4"));
  ExprOptions o = bounds({{"w", {0, 2147483647}}});
  o.dtype = dtypes::int32;
  EXPECT_EQ(simp("(w*4+4)//4", o), "(w*4+4)//4");
}

TEST(SymbolicCompare, MovesConstantsAndFactors) {
  expect_rules({
      {"lt-add-const", "x+5<10", "x<5"},
      {"const-lt-add", "10<x+5", "5<x"},
      {"eq-add-const", "s+5==3", "s==-2"},
      {"ne-add-const", "s+5!=3", "s!=-2"},
      {"lt-mul-const", "x*4<10", "x<3"},
      {"const-lt-mul", "10<x*4", "2<x"},
      {"lt-div", "s//4<2", "s<8"},
      {"lt-div", "s//4<-1", "s<-7"},
      {"lt-gcd", "x*4+k<8", "x<2"},
      {"lt-mul-const", "x*-4<-10", "-x<-2"},
      {"lt-simplex", "x*3+y*4<1", "x+y<1"},
      {"lt-neg", "-s<-y", "y<s"},
  });
}

TEST(SymbolicCompare, OrderRulesNeedExactSums) {
  // x + 2^63-1 wraps: x + c < 0 is true for x > 0, x < -c is not
  expect_unchanged({{"lt-add-const", "x+9223372036854775807<0"}, {"lt-gcd", "x*4+y<8"}, {"lt-simplex", "s*3+y*4<1"}});
}

TEST(SymbolicIndex, ReshapeIndexFolds) {
  ExprOptions o = bounds({{"i", {0, 1}}, {"j", {0, 5}}});
  // a (2,6) -> (3,4) reshape reads element i*6+j at row (i*6+j)//4, column (i*6+j)%4
  EXPECT_EQ(simp("((i*6+j)//4)%3", o), "(i*6+j)//4");
  EXPECT_EQ(simp("((i*6+j)//4)*4 + (i*6+j)%4", o), "i*6+j");
  ExprOptions o2 = bounds({{"i", {0, 3}}, {"j", {0, 3}}});
  EXPECT_EQ(simp("((i*4+j)//4)%4*4 + (i*4+j)%4", o2), "i*4+j");
}

TEST(SymbolicIndex, ConvIndexFolds) {
  // NCHW input index of a 3x3 conv, stride 1, no padding: n, c, oy, ox, ky, kx; the flat input
  // position split back into (c, y, x) and recombined must be the plain linear index.
  ExprOptions o = bounds({{"n", {0, 7}}, {"c", {0, 15}}, {"oy", {0, 29}}, {"ox", {0, 29}}, {"ky", {0, 2}}, {"kx", {0, 2}}});
  std::string flat = "(c*1024 + (oy+ky)*32 + ox+kx)";
  std::string e = "n*16384 + ((" + flat + "//1024)%16)*1024 + ((" + flat + "//32)%32)*32 + " + flat + "%32";
  EXPECT_EQ(simp(e, o), "c*1024+kx+ky*32+n*16384+ox+oy*32");
  UOp in = parse_expr(e, o);
  EXPECT_LT(alu_op_count(simplify(in)), alu_op_count(in));
}

}  // namespace
}  // namespace tunebed
