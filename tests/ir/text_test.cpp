// The canonical text form: exact printed text, parse errors (line, column, what was wrong), and
// every kind of arg through print and parse.
#include "core/ir/text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace tunebed {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Text, PrintsOneLinePerNodeParentsFirstRootLast) {
  UOp out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(16), {}, Arg(0));
  UOp in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(16), {}, Arg(1));
  UOp x = UOp::make(Ops::LOAD, dtypes::float32, {in});
  UOp sum = x + UOp::const_float(dtypes::float32, 1.5);
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {out, sum})});
  EXPECT_EQ(print_uop(sink),
            "u0 = DEFINE_GLOBAL float32.ptr(16) arg=0\n"
            "u1 = DEFINE_GLOBAL float32.ptr(16) arg=1\n"
            "u2 = LOAD float32 src=(u1)\n"
            "u3 = CONST float32 arg=1.5\n"
            "u4 = ADD float32 src=(u2, u3)\n"
            "u5 = STORE void src=(u0, u4)\n"
            "u6 = SINK void src=(u5)\n");
  EXPECT_EQ(parse_uop(print_uop(sink)), sink);
}

TEST(Text, UOpsInsideArgsArePrintedBeforeTheNodeAndReferencedByName) {
  UOp n = UOp::variable("n", 1, 32);
  UOp gidx = UOp::make(Ops::SPECIAL, dtypes::int32, {}, Arg::tuple({"gidx0", n}));
  UOp root = gidx * 2;
  EXPECT_EQ(print_uop(root),
            "u0 = DEFINE_VAR int32 arg=(\"n\", 1, 32)\n"
            "u1 = SPECIAL int32 arg=(\"gidx0\", u0)\n"
            "u2 = CONST int32 arg=2\n"
            "u3 = MUL int32 src=(u1, u2)\n");
  EXPECT_EQ(parse_uop(print_uop(root)), root);
}

TEST(Text, ASharedNodeIsPrintedOnce) {
  UOp x = UOp::variable("x", 0, 3);
  UOp s = x + 1;
  UOp root = s * s;
  EXPECT_EQ(print_uop(root),
            "u0 = DEFINE_VAR int32 arg=(\"x\", 0, 3)\n"
            "u1 = CONST int32 arg=1\n"
            "u2 = ADD int32 src=(u0, u1)\n"
            "u3 = MUL int32 src=(u2, u2)\n");
}

TEST(Text, ALongChainPrintsAndParsesWithoutRecursion) {
  UOp u = UOp::variable("x", 0, 3);
  for (int i = 0; i < 100000; i++) u = UOp::make(Ops::NEG, dtypes::int32, {u});
  EXPECT_EQ(parse_uop(print_uop(u)), u);
}

TEST(Text, ParsingAcceptsBlankLinesExtraSpacesAndAnyNames) {
  UOp u = parse_uop(
      "\n  a = CONST int32 arg=2  \n\n b=DEFINE_VAR int32 arg=(\"x\",0,3)\nsum = ADD int32 src=( b ,a )\n");
  EXPECT_EQ(u, UOp::variable("x", 0, 3) + 2);
}

// A parse that must fail, and where and why.
void expect_error(std::string_view text, int line, int col, const std::string& message) {
  try {
    parse_uop(text);
    ADD_FAILURE() << "parsed: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.col, col) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    EXPECT_EQ(
        std::string(e.what()).rfind("line " + std::to_string(line) + ", column " + std::to_string(col), 0),
        0u)
        << e.what();
  }
}

TEST(TextErrors, UnknownOp) { expect_error("u0 = FOO int32", 1, 6, "unknown op 'FOO'"); }

TEST(TextErrors, UnknownDtype) {
  expect_error("u0 = CONST flot32 arg=1", 1, 12, "unknown dtype 'flot32'");
  expect_error("u0 = CONST int32 arg=dtypes.int31", 1, 29, "unknown dtype 'int31'");
}

TEST(TextErrors, UndefinedReference) {
  expect_error("u0 = CONST int32 arg=1\nu1 = ADD int32 src=(u0, u9)", 2, 25,
               "'u9' is not defined before this line");
  expect_error("u0 = ADD int32 src=(u0, u0)", 1, 21, "'u0' is not defined");  // not even itself
  expect_error("u0 = SINK void arg=u7", 1, 20, "unknown name 'u7'");
}

TEST(TextErrors, MalformedNumber) {
  expect_error("u0 = CONST float32 arg=1.5.3", 1, 24, "malformed number");
  expect_error("u0 = CONST float32 arg=1e", 1, 24, "malformed number");
  expect_error("u0 = CONST int32 arg=-", 1, 22, "malformed number");
  expect_error("u0 = CONST int64 arg=99999999999999999999", 1, 22, "integer out of range");
}

TEST(TextErrors, UnterminatedString) {
  expect_error("u0 = NOOP void arg=\"abc", 1, 24, "unterminated string");
  expect_error("u0 = NOOP void arg=\"abc\nu1 = NOOP void", 1, 24, "unterminated string");
  expect_error("u0 = NOOP void arg=\"a\\q\"", 1, 24, "unknown escape '\\q'");
}

TEST(TextErrors, TrailingText) {
  expect_error("u0 = CONST int32 arg=1 junk", 1, 24, "unexpected text at end of line, found 'junk'");
  expect_error("u0 = CONST int32 arg=1\nu1 = NEG int32 src=(u0) src=(u0)", 2, 25,
               "unexpected text at end of line");
}

TEST(TextErrors, EmptyInput) {
  expect_error("", 1, 1, "no UOp in the text");
  expect_error("\n  \n", 3, 1, "no UOp in the text");
}

TEST(TextErrors, OtherMistakesNameTheProblem) {
  expect_error("u0 = CONST int32 arg=1\nu0 = CONST int32 arg=2", 2, 3, "'u0' is defined twice");
  expect_error("u0 CONST int32", 1, 4, "expected '='");
  expect_error("u0 = CONST float32.vec(0)", 1, 25, "vector width 0 out of range");
  expect_error("u0 = CONST float32.ptr(4,shared)", 1, 32, "unknown address space 'shared'");
  expect_error("u0 = CONST float32.ptr(4).ptr(4)", 1, 32, "pointer to a pointer");
  expect_error("u0 = CONST float32.vec(2).vec(2)", 1, 32, "a dtype can be vectorised once");
  expect_error("u0 = NOOP void arg=Ops.FOO", 1, 27, "unknown op 'Ops.FOO'");
  // Well formed text that makes no valid node: the message names the op, at the start of its line.
  expect_error("u0 = CONST int32 arg=1\nu1 = DEFINE_VAR int32 arg=\"x\"", 2, 1, "invalid DEFINE_VAR: ");
  // fuzz_ir_parse: an empty range reached a division by its upper bound 0 in range analysis.
  expect_error("u0 = DEFINE_VAR int32 arg=(\"n\", 2, 0)\nu1 = IDIV int32 src=(u0, u0)", 1, 1,
               "invalid DEFINE_VAR: variable n has min > max");
}

TEST(TextErrors, DeeplyNestedArgsAreRejectedNotRecursedInto) {
  std::string text = "u0 = NOOP void arg=" + std::string(100000, '(');
  expect_error(text, 1, 85, "arg nested too deeply");
}

// Each arg prints as `text` and parses back to an equal arg.
void expect_round_trip(const Arg& a, const std::string& text) {
  EXPECT_EQ(print_arg(a), text);
  Arg back = parse_arg(text);
  EXPECT_EQ(back, a) << text;
  EXPECT_EQ(back.hash(), a.hash()) << text;
}

TEST(TextArgs, ScalarsRoundTrip) {
  expect_round_trip(Arg(), "None");
  expect_round_trip(Arg(true), "True");
  expect_round_trip(Arg(false), "False");
  expect_round_trip(Arg(0), "0");
  expect_round_trip(Arg(-42), "-42");
  expect_round_trip(Arg(std::numeric_limits<int64_t>::max()), "9223372036854775807");
  expect_round_trip(Arg(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  expect_round_trip(Arg(Ops::ADD), "Ops.ADD");
  expect_round_trip(Arg(Ops::DEFINE_GLOBAL), "Ops.DEFINE_GLOBAL");
}

TEST(TextArgs, FloatsPrintTheShortestTextThatReadsBackExactly) {
  expect_round_trip(Arg(1.5), "1.5");
  expect_round_trip(Arg(3.0), "3.0");  // a float always looks like one
  expect_round_trip(Arg(0.1), "0.1");
  expect_round_trip(Arg(1.0 / 3.0), "0.3333333333333333");
  expect_round_trip(Arg(-0.0), "-0.0");
  expect_round_trip(Arg(1e300), "1e+300");
  expect_round_trip(Arg(5e-324), "5e-324");
  expect_round_trip(Arg(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  expect_round_trip(Arg(kInf), "inf");
  expect_round_trip(Arg(-kInf), "-inf");
  expect_round_trip(Arg(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(parse_arg("2.5e-3"), Arg(0.0025));
  EXPECT_EQ(parse_arg("+7"), Arg(7));
  EXPECT_NE(parse_arg("1"), parse_arg("1.0")) << "an int and a float are different args";
}

TEST(TextArgs, StringsEscapeQuotesBackslashesAndNonPrintingBytes) {
  expect_round_trip(Arg("plain text"), "\"plain text\"");
  expect_round_trip(Arg(""), "\"\"");
  expect_round_trip(Arg("say \"hi\" \\o/"), "\"say \\\"hi\\\" \\\\o/\"");
  expect_round_trip(Arg(std::string("a\nb\t\x01\x7f\xff", 7)), "\"a\\x0ab\\x09\\x01\\x7f\\xff\"");
  expect_round_trip(Arg(std::string("nul\0byte", 8)), "\"nul\\x00byte\"");
  EXPECT_EQ(parse_arg("\"a\\nb\\tc\""), Arg("a\nb\tc"));
}

TEST(TextArgs, DtypesWithVectorPointerAndAddressSpaceRoundTrip) {
  expect_round_trip(Arg(dtypes::float32), "dtypes.float32");
  expect_round_trip(Arg(dtypes::bool_), "dtypes.bool");
  expect_round_trip(Arg(dtypes::void_), "dtypes.void");
  expect_round_trip(Arg(dtypes::float32.vec(4)), "dtypes.float32.vec(4)");
  expect_round_trip(Arg(dtypes::float16.ptr_to(16, AddrSpace::Local)), "dtypes.float16.ptr(16,local)");
  expect_round_trip(Arg(dtypes::int8.vec(4).ptr_to(-1, AddrSpace::Reg)), "dtypes.int8.vec(4).ptr(-1,reg)");
  expect_round_trip(Arg(dtypes::float32.ptr_to(8).with_v(4)), "dtypes.float32.ptr(8).vec(4)");
  // tinygrad's names and an explicit global address space parse too.
  EXPECT_EQ(parse_arg("dtypes.half.ptr(16, local)"), Arg(dtypes::float16.ptr_to(16, AddrSpace::Local)));
  EXPECT_EQ(parse_arg("dtypes.float.ptr(4,global)"), Arg(dtypes::float32.ptr_to(4)));
}

TEST(TextArgs, TuplesAndRecordsNestAndRoundTrip) {
  expect_round_trip(Arg(ArgTuple{}), "()");
  expect_round_trip(Arg::tuple({1}), "(1,)");
  expect_round_trip(Arg::tuple({1, "x", Arg::tuple({Arg(), 2.5}), ArgTuple{}}),
                    "(1, \"x\", (None, 2.5), ())");
  expect_round_trip(Arg(Record{"Opt", {{"op", Ops::MUL}, {"axis", 0}, {"arg", Arg::tuple({4})}}}),
                    "Opt(op=Ops.MUL, axis=0, arg=(4,))");
  expect_round_trip(Arg(Record{"Empty", {}}), "Empty()");
  expect_round_trip(Arg::tuple({Record{"A", {{"b", Record{"B", {{"c", dtypes::int8}}}}}}, -1}),
                    "(A(b=B(c=dtypes.int8)), -1)");
}

TEST(TextArgs, BadArgsAreRejected) {
  EXPECT_THROW(parse_arg("1 2"), ParseError);
  EXPECT_THROW(parse_arg("(1, 2"), ParseError);
  EXPECT_THROW(parse_arg("Name(x 1)"), ParseError);
  EXPECT_THROW(parse_arg("undefined_name"), ParseError);
  EXPECT_THROW(parse_arg(""), ParseError);
  EXPECT_THROW(parse_dtype("float32 extra"), ParseError);
  EXPECT_EQ(parse_dtype("half.vec(2)"), dtypes::float16.vec(2));
}

}  // namespace
}  // namespace tunebed
