// The mapping of tinygrad's dataset ASTs onto tunebed's kernel-AST form (core/imports).
#include "core/imports/tinygrad_ast.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed::imports {
namespace {

const std::string kView3 =
    "ShapeTracker(views=(View(shape=(3,),strides=(1,),offset=0,mask=None,contiguous=True),))";
std::string global(int i) {
  return "UOp(Ops.VIEW,dtypes.float.ptr(3),arg=" + kView3 +
         ",src=(UOp(Ops.DEFINE_GLOBAL,dtypes.float.ptr(3),arg=" + std::to_string(i) + ",src=()),))";
}
std::string load(int i) { return "UOp(Ops.LOAD,dtypes.float,arg=None,src=(" + global(i) + ",))"; }
std::string sink(const std::string& arg, const std::string& value) {
  return "UOp(Ops.SINK,dtypes.void,arg=" + arg + ",src=(UOp(Ops.STORE,dtypes.void,arg=None,src=(" +
         global(0) + "," + value + ")),))";
}
// The dataset's constant: CONST with its own (here masked: padded) ShapeTracker as a source.
const std::string kMasked =
    "ShapeTracker(views=(View(shape=(3,),strides=(0,),offset=0,mask=((0,2),),contiguous=False),))";
const std::string kOldConst =
    "UOp(Ops.CONST,dtypes.float,arg=2.5,src=(UOp(Ops.VIEW,dtypes.void,arg=" + kMasked + ",src=()),))";

TEST(TinygradAst, ConstViewBecomesValidMaskedConstant) {
  UOp ast = parse_tinygrad_kernel(
                sink("None", "UOp(Ops.ADD,dtypes.float,arg=None,src=(" + load(1) + "," + kOldConst + "))"))
                .ast;
  const UOp& add = ast.src(0).src(1);
  ASSERT_EQ(add.op(), Ops::ADD);
  const UOp& w = add.src(1);
  ASSERT_EQ(w.op(), Ops::WHERE) << print_uop(ast);
  ASSERT_EQ(w.src(0).op(), Ops::VALID);
  const UOp& valid_view = w.src(0).src(0);
  EXPECT_TRUE(valid_view.src().empty());
  // VALID keeps the constant's ShapeTracker, mask included: the padding reads 0.
  EXPECT_EQ(valid_view.arg(),
            parse_tinygrad_uop("UOp(Ops.VIEW,dtypes.void,arg=" + kMasked + ",src=())").arg());
  EXPECT_EQ(w.src(1).op(), Ops::CONST);
  EXPECT_EQ(w.src(1).const_value(), 2.5);
  EXPECT_EQ(w.src(2).op(), Ops::CONST);
  EXPECT_EQ(w.src(2).const_value(), 0.0);
  // The constants themselves are unmasked and the same everywhere: stride 0, no mask.
  const ShapeTracker& z = w.src(1).src(0).arg().as_object<ShapeTracker>();
  EXPECT_EQ(z, ShapeTracker::from_shape({3}, SymShape{0}));
  EXPECT_EQ(w.src(2).src(0), w.src(1).src(0));
}

// As tunebed's scheduler (and the seed's merge_views) leaves an unmasked constant: CONST (VIEW z).
TEST(TinygradAst, UnmaskedConstViewIsAlreadyTheSeedForm) {
  const std::string zero =
      "ShapeTracker(views=(View(shape=(3,),strides=(0,),offset=0,mask=None,contiguous=False),))";
  const std::string c =
      "UOp(Ops.CONST,dtypes.int,arg=7,src=(UOp(Ops.VIEW,dtypes.void,arg=" + zero + ",src=()),))";
  UOp parsed = parse_tinygrad_uop(sink("None", c));
  UOp ast = from_tinygrad(parsed).ast;
  EXPECT_EQ(ast, parsed);
  EXPECT_EQ(ast.src(0).src(1).op(), Ops::CONST);
  EXPECT_EQ(ast.src(0).src(1).src(0).arg().as_object<ShapeTracker>(),
            ShapeTracker::from_shape({3}, SymShape{0}));
}

TEST(TinygradAst, SeedFormConstantIsLeftAlone) {
  UOp once = parse_tinygrad_kernel(sink("None", kOldConst)).ast;
  // Feeding the seed form back in (as tinygrad text would print it) changes nothing.
  EXPECT_EQ(from_tinygrad(once).ast, once);
  EXPECT_EQ(graph_rewrite(once, tinygrad_to_tunebed()), once);
}

TEST(TinygradAst, KernelInfoIsStrippedAndItsOptsKept) {
  const std::string info =
      "KernelInfo(name='test',global_dims=0,local_dims=0,upcasted=1,dont_use_locals=False,"
      "applied_opts=(Opt(op=OptOps.LOCAL,axis=0,arg=3),Opt(op=OptOps.UPCAST,axis=0,arg=0),Opt(op=OptOps."
      "NOLOCALS,axis=None,arg=None)),"
      "opts_to_apply=None)";
  ImportedKernel with = parse_tinygrad_kernel(sink(info, load(1)));
  ImportedKernel without = parse_tinygrad_kernel(sink("None", load(1)));
  EXPECT_TRUE(with.ast.arg().is_none());
  EXPECT_EQ(with.ast, without.ast);
  EXPECT_EQ(kernel_hash(with.ast), kernel_hash(without.ast));
  EXPECT_EQ(with.tinygrad_opts, "LOCAL:0:3,UPCAST:0:0,NOLOCALS");
  EXPECT_EQ(without.tinygrad_opts, "");
}

TEST(TinygradAst, OptsTextPrintsTupleArgs) {
  Arg opts =
      parse_tinygrad_uop("UOp(Ops.NOOP,dtypes.void,arg=(Opt(op=OptOps.TC,axis=0,arg=(-1,2,1)),),src=())")
          .arg();
  EXPECT_EQ(opts_text(opts), "TC:0:(-1,2,1)");
  EXPECT_THROW(opts_text(Arg(3)), ImportError);
}

TEST(TinygradAst, NotAKernelIsAnImportError) {
  try {
    parse_tinygrad_kernel(load(1));
    FAIL() << "a LOAD root was taken";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("rule root-is-sink: LOAD"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_tinygrad_kernel("UOp(Ops.SINK,dtypes.void,arg=None,src=(" + load(1) + ",))"),
               ImportError);
}

TEST(TinygradAst, KernelHashIsSixteenHexDigitsOfTheCanonicalText) {
  UOp a = parse_tinygrad_kernel(sink("None", load(1))).ast;
  UOp b = parse_tinygrad_kernel(sink("None", load(2))).ast;
  const std::string h = kernel_hash(a);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(kernel_hash(parse_uop(print_uop(a))), h);
  EXPECT_NE(kernel_hash(b), h);
}

// tinygrad leaves symbolic strides as strides_for_shape multiplied them: the dataset's llama
// kernels (lines 3442-3746) hold 1*(pos+1)*1 where tunebed's sint arithmetic holds pos+1.
const std::string kPos = "UOp(Ops.DEFINE_VAR,dtypes.int,arg=('pos',1,100),src=())";
const std::string kOne = "UOp(Ops.CONST,dtypes.int,arg=1,src=())";
const std::string kPosPlus1 = "UOp(Ops.ADD,dtypes.int,arg=None,src=(" + kPos + "," + kOne + ",))";
std::string symbolic_view(const std::string& stride, bool contiguous) {
  return "UOp(Ops.VIEW,dtypes.void,arg=ShapeTracker(views=(View(shape=(8," + kPosPlus1 + "),strides=(" +
         stride + ",1),offset=0,mask=None,contiguous=" + (contiguous ? "True" : "False") + "),)),src=())";
}

TEST(TinygradAst, UnsimplifiedSymbolicStrideReadsAsItsSimplifiedForm) {
  const std::string raw = "UOp(Ops.MUL,dtypes.int,arg=None,src=(UOp(Ops.MUL,dtypes.int,arg=None,src=(" +
                          kOne + "," + kPosPlus1 + ",)),x1:=" + kOne + ",))";
  const UOp view = parse_tinygrad_uop(symbolic_view(raw, true));
  const ShapeTracker& st = view.arg().as_object<ShapeTracker>();
  EXPECT_TRUE(st.contiguous()) << st.views()[0].repr();
  // The same view as tunebed writes it: one node, so the two texts give one kernel hash.
  EXPECT_EQ(view, parse_tinygrad_uop(symbolic_view(kPosPlus1, true)));
  EXPECT_EQ(st.views()[0].strides()[0], st.views()[0].shape()[1]);
}

TEST(TinygradAst, ViewClaimingContiguityWithOtherStridesIsStillRefused) {
  // Simplifying is a change of spelling only: strides that are not the shape's stay non-canonical.
  EXPECT_THROW(parse_tinygrad_uop(symbolic_view(kPos, true)), ParseError);
  EXPECT_THROW(parse_tinygrad_uop(symbolic_view(kPosPlus1, false)), ParseError);
}

}  // namespace
}  // namespace tunebed::imports
