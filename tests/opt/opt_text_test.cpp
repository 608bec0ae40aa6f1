// Opt's text form (what --opts and the tuning database use) and KernelInfo's record form.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/ir/text.hpp"
#include "core/opt/kernel_info.hpp"

namespace tunebed {
namespace {

rc::Gen<Opt> gen_opt() {
  return rc::gen::exec([] {
    auto op = static_cast<OptOps>(*rc::gen::inRange(0, 10));
    if (op == OptOps::NOLOCALS) return Opt{op, std::nullopt, std::monostate{}};
    int axis = *rc::gen::inRange(0, 9);
    if (op == OptOps::TC)
      return Opt{op, axis, TCArg{*rc::gen::inRange(-1, 5), *rc::gen::inRange(0, 3), *rc::gen::inRange(1, 3)}};
    return Opt{op, axis, *rc::gen::inRange(0, 300)};
  });
}

TEST(OptText, PrintsTheDocumentedForms) {
  EXPECT_EQ(to_string(Opt{OptOps::UPCAST, 0, 4}), "UPCAST:0:4");
  EXPECT_EQ(to_string(Opt{OptOps::NOLOCALS, std::nullopt, std::monostate{}}), "NOLOCALS");
  EXPECT_EQ(to_string(Opt{OptOps::TC, 0, TCArg{-1, 2, 1}}), "TC:0:(-1,2,1)");
  EXPECT_EQ(to_string(std::vector<Opt>{{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}),
            "UPCAST:0:4,UNROLL:0:4");
}

TEST(OptText, ParsesListsWithTcArgsAndSpaces) {
  std::vector<Opt> opts = parse_opts("TC:0:(-1,2,1), UPCAST:1:4,NOLOCALS");
  ASSERT_EQ(opts.size(), 3u);
  EXPECT_EQ(opts[0], (Opt{OptOps::TC, 0, TCArg{-1, 2, 1}}));
  EXPECT_EQ(opts[1], (Opt{OptOps::UPCAST, 1, 4}));
  EXPECT_EQ(opts[2].op, OptOps::NOLOCALS);
  EXPECT_TRUE(parse_opts("").empty());
}

TEST(OptText, BadOptsNameTheItemAndTheFault) {
  auto message = [](const std::string& s) {
    try {
      parse_opts(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("UPCAST:0:4,UPCST:0:4"),
            "opt \"UPCST:0:4\": unknown OptOp \"UPCST\" (one of TC UPCAST UNROLL LOCAL GROUP GROUPTOP "
            "NOLOCALS PADTO SWAP THREAD)");
  EXPECT_EQ(message("UPCAST:x:4"), "opt \"UPCAST:x:4\": axis \"x\" is not an integer");
  EXPECT_EQ(message("UPCAST:0"), "opt \"UPCAST:0\": expected OP:AXIS:ARG");
  EXPECT_EQ(message("LOCAL"), "opt \"LOCAL\": LOCAL needs an axis and an arg, as LOCAL:AXIS:ARG");
  EXPECT_EQ(message("TC:0:(1,2)"), "opt \"TC:0:(1,2)\": a TC arg has exactly 3 integers");
}

RC_GTEST_PROP(OptText, ParseOfPrintIsTheSameOpts, ()) {
  std::vector<Opt> opts = *rc::gen::container<std::vector<Opt>>(gen_opt());
  RC_ASSERT(parse_opts(to_string(opts)) == opts);
}

RC_GTEST_PROP(OptText, RecordOfOptRoundTripsThroughTheArgText, ()) {
  Opt opt = *gen_opt();
  Arg printed = parse_arg(print_arg(Arg(opt.to_record())));
  RC_ASSERT(Opt::from_record(printed.as_record()) == opt);
}

TEST(KernelInfoRecord, PrintsAsTinygradsKernelInfo) {
  KernelInfo info{"r_16_4_4",
                  {AxisType::LOOP, AxisType::UPCAST, AxisType::REDUCE},
                  false,
                  {{OptOps::UPCAST, 0, 4}},
                  std::nullopt};
  EXPECT_EQ(
      print_arg(Arg(info.to_record())),
      "KernelInfo(name=\"r_16_4_4\", axis_types=(\"LOOP\", \"UPCAST\", \"REDUCE\"), dont_use_locals=False, "
      "applied_opts=(Opt(op=\"UPCAST\", axis=0, arg=4),), opts_to_apply=None)");
}

TEST(KernelInfoRecord, RoundTripsWithEveryAxisTypeAndOptsToApply) {
  KernelInfo info{
      "E_4", {}, true, {{OptOps::TC, 1, TCArg{0, 1, 2}}}, std::vector<Opt>{{OptOps::THREAD, 0, 8}}};
  for (int t = 0; t < 8; t++) info.axis_types.push_back(static_cast<AxisType>(t));
  Arg printed = parse_arg(print_arg(Arg(info.to_record())));
  EXPECT_EQ(KernelInfo::from_record(printed.as_record()), info);
}

TEST(KernelInfoRecord, FromRecordNamesTheBadField) {
  Record old{"KernelInfo", {{"name", Arg("test")}, {"global_dims", Arg(0)}}};
  try {
    KernelInfo::from_record(old);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "KernelInfo field global_dims: no such field");
  }
  Record bad_type{"KernelInfo", {{"axis_types", Arg::tuple({Arg("SIDEWAYS")})}}};
  EXPECT_THROW(KernelInfo::from_record(bad_type), std::invalid_argument);
}

}  // namespace
}  // namespace tunebed
