// The expression syntax (core/symbolic/expr_text.hpp): parsing, errors with their column, the
// printer, and that printed expressions parse back to the same function.
#include "core/symbolic/expr_text.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_gen.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {
namespace {

int64_t value(const std::string& text) { return Evaluator(parse_expr(text)).eval({}).i; }

int error_column(const std::string& text) {
  try {
    parse_expr(text);
  } catch (const ExprError& e) {
    return e.col;
  }
  return 0;
}

TEST(ExprText, ParsesWithCPrecedenceAndTruncation) {
  EXPECT_EQ(value("1+2*3"), 7);
  EXPECT_EQ(value("(1+2)*3"), 9);
  EXPECT_EQ(value("10-4-3"), 3);
  EXPECT_EQ(value("100//10//5"), 2);
  EXPECT_EQ(value("-7//2"), -3);
  EXPECT_EQ(value("-7%3"), -1);
  EXPECT_EQ(value("7%-3"), 1);
  EXPECT_EQ(value("-(3-5)*2"), 4);
  EXPECT_EQ(value("max(3, -4) + min(3, -4)"), -1);
  EXPECT_EQ(value("where(1 < 2, 10, 20)"), 10);
  EXPECT_EQ(value("where(!(1 < 2), 10, 20)"), 20);
  EXPECT_EQ(value("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(value("where(1<2 & 3==3 | false, 1, 0)"), 1);
}

TEST(ExprText, VariablesTakeTheirBounds) {
  ExprOptions o;
  o.vars = {{"i", {0, 9}}};
  UOp e = parse_expr("i + j", o);
  Evaluator ev(e);
  ASSERT_EQ(ev.var_names(), (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(ev.vars()[0].vmax(), 9);
  EXPECT_EQ(ev.vars()[1].vmax(), 2147483647);  // the default bound
  EXPECT_EQ(ev.vars()[1].dtype(), dtypes::int64);
  EXPECT_THROW(ev.eval({10, 0}), std::invalid_argument);
}

TEST(ExprText, ErrorsNameTheColumn) {
  EXPECT_EQ(error_column("a+(b"), 5);
  EXPECT_EQ(error_column("a + * b"), 5);
  EXPECT_EQ(error_column("a / b"), 3);
  EXPECT_EQ(error_column("a < b < c"), 7);
  EXPECT_EQ(error_column("foo(1)"), 1);
  EXPECT_EQ(error_column("max(1)"), 6);
  EXPECT_EQ(error_column("a $ b"), 3);
  EXPECT_EQ(error_column("99999999999999999999"), 1);
  EXPECT_EQ(error_column("where(1, 2, 3)"), 1);  // the condition must be a comparison
  EXPECT_EQ(error_column("(a<b)+1"), 6);
  EXPECT_EQ(error_column(""), 1);
  EXPECT_EQ(error_column(std::string(1000, '(') + "1" + std::string(1000, ')')), 257);  // too deep
  try {
    parse_expr("a+(b");
  } catch (const ExprError& e) {
    EXPECT_STREQ(e.what(), "column 5: expected ')'");
  }
}

TEST(ExprText, PrintsNaturally) {
  ExprOptions o;
  auto p = [&](const std::string& s) { return print_expr(parse_expr(s, o)); };
  EXPECT_EQ(p("a-b"), "a-b");
  EXPECT_EQ(p("-a"), "-a");
  EXPECT_EQ(p("a-b*3"), "a-b*3");
  EXPECT_EQ(p("a+-3"), "a-3");
  EXPECT_EQ(p("min(a, b)"), "min(a, b)");
  EXPECT_EQ(p("((i*6+j)//4)%3"), "(i*6+j)//4%3");
  EXPECT_EQ(p("a//(b*c)"), "a//(b*c)");
  EXPECT_EQ(p("a//(-b*2)"), "a//(-b*2)");
  EXPECT_EQ(p("where(a<b, a, b)"), "where(a<b, a, b)");
  EXPECT_EQ(p("(a<b)==(b<a)"), "(a<b)==(b<a)");
  EXPECT_EQ(p("!(a<b)"), "!(a<b)");
}

struct TapeSource {
  const std::vector<uint64_t>& tape;
  size_t next = 0;
  int64_t pick(int64_t lo, int64_t hi) {
    uint64_t r = next < tape.size() ? tape[next++] : 0;
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1));
  }
};

RC_GTEST_PROP(ExprTextProperty, printed_expressions_parse_back_to_the_same_function, ()) {
  auto tape = *rc::gen::container<std::vector<uint64_t>>(rc::gen::arbitrary<uint64_t>());
  TapeSource src{tape};
  std::vector<UOp> vars = expr_gen::random_vars(src, 3, dtypes::int64);
  UOp e = expr_gen::random_int(src, vars, 5);
  ExprOptions o;
  for (const UOp& v : vars) o.vars[v.arg().as_tuple().at(0).as_string()] = {v.vmin(), v.vmax()};
  for (const UOp& u : {e, simplify(e)}) {
    std::string text = print_expr(u);
    UOp back = parse_expr(text, o);
    if (auto m = find_mismatch(u, back, 4096, 200, 7)) RC_FAIL(text + " parses to a different function: " + m->to_string());
  }
}

}  // namespace
}  // namespace tunebed
