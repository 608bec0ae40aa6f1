// tinygrad's kernel-AST text (core/ir/tinygrad_text.hpp) on a sample of its published dataset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

TEST(TinygradText, SampleParsesAndRoundTripsExceptImages) {
  auto lines = testing::sops_sample_lines();
  ASSERT_GT(lines.size(), 150u);
  int parsed = 0, images = 0;
  for (const std::string& l : lines) {
    if (l.find("dtypes.imagef") != std::string::npos) {
      EXPECT_THROW(parse_tinygrad_uop(l), ParseError);
      images++;
      continue;
    }
    UOp u = parse_tinygrad_uop(l);
    ASSERT_EQ(u.op(), Ops::SINK) << l.substr(0, 80);
    EXPECT_EQ(parse_uop(print_uop(u)), u);
    parsed++;
  }
  EXPECT_EQ(parsed + images, static_cast<int>(lines.size()));
  EXPECT_GT(images, 0);
}

TEST(TinygradText, SharedSubexpressionsAreOneNode) {
  UOp u = parse_tinygrad_uop(
      "UOp(Ops.ADD, dtypes.int, arg=None, src=(x0:=UOp(Ops.DEFINE_VAR, dtypes.int, arg=('i', 0, 9), src=()), x0,))");
  ASSERT_EQ(u.src().size(), 2u);
  EXPECT_EQ(u.src(0), u.src(1));
  EXPECT_EQ(u.src(0).arg().as_tuple()[0].as_string(), "i");
}

TEST(TinygradText, ConstantsOfEveryKind) {
  auto c = [](const std::string& arg, const std::string& dt) {
    return parse_tinygrad_uop("UOp(Ops.CONST, dtypes." + dt + ", arg=" + arg + ", src=())").arg();
  };
  EXPECT_TRUE(std::isinf(c("inf", "float").as_number()));
  EXPECT_LT(c("-inf", "float").as_number(), 0);
  EXPECT_TRUE(std::isnan(c("nan", "float").as_number()));
  EXPECT_EQ(c("True", "bool").as_bool(), true);
  EXPECT_EQ(c("-3", "int").as_int(), -3);
  EXPECT_EQ(c("18446744073709551615", "ulong").as_int(), -1);  // uint64 max, as its bits
}

TEST(TinygradText, OlderPointerAndOptForms) {
  UOp l = parse_tinygrad_uop("UOp(Ops.DEFINE_LOCAL, dtypes.float.ptr(16,local=True), arg='temp0', src=())");
  EXPECT_EQ(l.dtype().addrspace, AddrSpace::Local);
  EXPECT_EQ(l.dtype().size, 16);
  UOp s = parse_tinygrad_uop(
      "UOp(Ops.SINK, dtypes.void, arg=KernelInfo(name='test', applied_opts=(Opt(op=OptOps.LOCAL, axis=0, arg=3),)), "
      "src=())");
  const Record& info = s.arg().as_record();
  EXPECT_EQ(info.name, "KernelInfo");
  const Record& opt = info.at("applied_opts").as_tuple().at(0).as_record();
  EXPECT_EQ(opt.at("op").as_string(), "LOCAL");
  EXPECT_EQ(opt.at("arg").as_int(), 3);
}

TEST(TinygradText, ErrorsNameTheProblem) {
  auto err = [](const std::string& text) {
    try {
      parse_tinygrad_uop(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("UOp(Ops.NOPE, dtypes.int, arg=None, src=())").find("unknown op 'Ops.NOPE'"), std::string::npos);
  EXPECT_NE(err("UOp(Ops.ADD, dtypes.int, arg=None, src=(x3,))").find("'x3' is not bound"), std::string::npos);
  EXPECT_NE(err("UOp(Ops.CONST, dtypes.imagef((4,1,4)), arg=1, src=())").find("image dtypes"), std::string::npos);
  EXPECT_NE(err("UOp(Ops.CONST, dtypes.int, arg=1, src=()) trailing").find("column 43"), std::string::npos);
}

}  // namespace
}  // namespace tunebed
