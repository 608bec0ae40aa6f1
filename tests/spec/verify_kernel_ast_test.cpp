// The kernel-AST rules (core/spec): one minimal malformed AST per rule, refused with a message
// naming that rule; and every kernel tunebed makes or imports keeps them all.
#include "core/spec/verify_kernel_ast.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/imports/tinygrad_ast.hpp"
#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/opt/heuristic.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/schedule/schedule.hpp"
#include "core/shape/shapetracker.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/data/sops_sample.hpp"

namespace tunebed {
namespace {

const SymShape k44{4, 4};

UOp global(int64_t i, DType d = dtypes::float32) {
  return UOp::make(Ops::DEFINE_GLOBAL, d.ptr_to(16), {}, i);
}
UOp view(const UOp& buf, const SymShape& shape) {
  return UOp::make(Ops::VIEW, buf.dtype(), {buf}, ShapeTracker::from_shape(shape).to_arg());
}
UOp bare_view(const SymShape& shape) {
  return UOp::make(Ops::VIEW, dtypes::void_, {}, ShapeTracker::from_shape(shape).to_arg());
}
UOp load(int64_t i, const SymShape& shape = k44, DType d = dtypes::float32) {
  return UOp::make(Ops::LOAD, d, {view(global(i, d), shape)});
}
UOp constant(double v, const SymShape& shape = k44) {
  return UOp::make(Ops::CONST, dtypes::float32, {bare_view(shape)}, v);
}
UOp store(const UOp& value, const SymShape& shape = k44) {
  return UOp::make(Ops::STORE, dtypes::void_, {view(global(0, value.dtype()), shape), value});
}
UOp sink(std::vector<UOp> stores) { return UOp::make(Ops::SINK, dtypes::void_, std::move(stores)); }
UOp kernel(const UOp& value, const SymShape& shape = k44) { return sink({store(value, shape)}); }
UOp sum(const UOp& x, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, Arg::tuple({Arg(Ops::ADD), Arg::ints(axes)}));
}

// y[i, 0] = sum_j (x[i, j] + 1): buffers, a constant, an ALU and a reduce.
UOp good_kernel() { return kernel(sum(load(1) + constant(1.0), {1}), {4, 1}); }

TEST(KernelAstSpec, AKernelWithEveryKindOfNodeKeepsBothTables) {
  EXPECT_EQ(kernel_ast_violation(good_kernel()), std::nullopt);
  EXPECT_EQ(optimized_ast_violation(good_kernel()), std::nullopt);
  EXPECT_NO_THROW(verify_kernel_ast(good_kernel()));
}

TEST(KernelAstSpec, TheErrorIsOneLineNamingTheRuleAndTheNode) {
  const UOp bad = sink({UOp::make(Ops::STORE, dtypes::void_, {global(0), load(1)})});
  try {
    verify_kernel_ast(bad);
    FAIL() << "a STORE without a VIEW was taken";
  } catch (const KernelAstError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "kernel AST rule store-has-view: STORE void writes through a DEFINE_GLOBAL, not a VIEW of a buffer");
  }
  EXPECT_THROW(verify_optimized_ast(bad), KernelAstError);
}

enum class Form { Kernel, Optimized };

struct Case {
  const char* rule;
  Form form;  // the table that refuses it (a kernel-AST case is refused by both where the rule is shared)
  std::function<UOp()> ast;
};

const std::vector<Case> kCases = {
    {"root-is-sink", Form::Kernel, [] { return store(load(1)); }},
    {"op-in-kernel-ast", Form::Kernel,
     [] { return kernel(UOp::make(Ops::CONTIGUOUS, dtypes::float32, {load(1)})); }},
    {"scalar-dtypes", Form::Kernel,
     [] { return kernel(UOp::make(Ops::CAST, dtypes::float32.vec(4), {load(1)})); }},
    {"sink-of-stores", Form::Kernel, [] { return sink({load(1)}); }},
    {"store-has-view", Form::Kernel,
     [] {
       return sink({UOp::make(Ops::STORE, dtypes::void_, {global(0), load(1)})});
     }},
    {"load-has-view", Form::Kernel,
     [] { return kernel(UOp::make(Ops::LOAD, dtypes::float32, {global(1)})); }},
    {"view-arg-is-shapetracker", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::LOAD, dtypes::float32,
                               {UOp::make(Ops::VIEW, global(1).dtype(), {global(1)}, Arg(4))}));
     }},
    // A swizzle left inside the kernel: a VIEW of an ALU.
    {"view-only-on-buffers", Form::Kernel,
     [] {
       const UOp x = load(1) + load(2);
       return kernel(UOp::make(Ops::VIEW, x.dtype(), {x}, ShapeTracker::from_shape(k44).to_arg()));
     }},
    // A stride n + (double)1: the parser of tinygrad's text takes any UOp inside a ShapeTracker.
    {"view-sizes-are-int-expressions", Form::Kernel,
     [] {
       const UOp v = parse_tinygrad_uop(
           "UOp(Ops.VIEW,dtypes.float.ptr(16),arg=ShapeTracker(views=(View(shape=(4,),strides=(UOp(Ops.ADD,"
           "dtypes.int,arg=None,src=(UOp(Ops.DEFINE_VAR,dtypes.int,arg=('n',1,3),src=()),UOp(Ops.CONST,"
           "dtypes.double,"
           "arg=1,src=()))),),offset=0,mask=None,contiguous=False),)),src=(UOp(Ops.DEFINE_GLOBAL,"
           "dtypes.float.ptr(16),arg=1,src=()),))");
       return kernel(UOp::make(Ops::LOAD, dtypes::float32, {v}), {4});
     }},
    // A buffer's VIEW read as a value, with no LOAD.
    {"views-under-buffer-ops", Form::Kernel,
     [] { return kernel(UOp::make(Ops::CAST, dtypes::float32, {view(global(1), k44)})); }},
    {"valid-of-view", Form::Kernel,
     [] {
       const UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {load(1)});
       return kernel(valid.where(constant(1.0), constant(0.0)));
     }},
    {"const-arg-matches-dtype", Form::Kernel,
     [] { return kernel(UOp::make(Ops::CONST, dtypes::float32, {bare_view(k44)}, Arg(int64_t{1}))); }},
    {"buffer-is-pointer", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::LOAD, dtypes::float32,
                               {view(UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32, {}, 1), k44)}));
     }},
    {"define-var-arg", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::DEFINE_VAR, dtypes::float32, {bare_view(k44)}, Arg::tuple({"n", 1, 8})));
     }},
    {"src-count", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::ADD, dtypes::float32, {load(1), load(2), load(3)}));
     }},
    {"alu-dtypes-agree", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::ADD, dtypes::float32, {load(1), load(2, k44, dtypes::int32)}));
     }},
    {"idiv-mod-on-ints", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::IDIV, dtypes::float32, {load(1), load(2)}));
     }},
    {"reduce-axis-arg", Form::Kernel,
     [] {
       return kernel(UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {load(1)},
                               Arg::tuple({Arg(Ops::SUB), Arg::ints(std::vector{1})})),
                     {4, 1});
     }},
    {"const-has-view", Form::Kernel, [] { return kernel(load(1) + UOp::const_float(dtypes::float32, 1.0)); }},
    {"sources-agree-on-shape", Form::Kernel,
     [] {
       return kernel(load(1) + load(2, {4, 1}));
     }},
    {"reduce-axes-in-range", Form::Kernel,
     [] {
       return kernel(sum(load(1), {2}), {4, 1});
     }},
    {"stores-agree-on-shape", Form::Kernel,
     [] {
       return sink({store(load(1)), store(load(2, {1, 4}), {1, 4})});
     }},
    // Two outputs of shape (4, 1), summed over 8 and over 6: no one loop runs both reduces.
    {"views-agree-on-full-shape", Form::Kernel,
     [] {
       return sink({store(sum(load(1, {4, 8}), {1}), {4, 1}), store(sum(load(2, {4, 6}), {1}), {4, 1})});
     }},
    {"op-in-optimized-ast", Form::Optimized,
     [] {
       return kernel(UOp::make(Ops::RESHAPE, dtypes::float32, {load(1)}, Arg::ints(std::vector{4, 4})));
     }},
    {"wmma-sources", Form::Optimized,
     [] {
       return kernel(UOp::make(Ops::WMMA, dtypes::float32, {load(1), load(2)}, Arg::tuple({"WMMA"})));
     }},
    // A CONTRACT of two lanes (one axis of size 2) into a vector of 4.
    {"contract-unroll-lanes", Form::Optimized,
     [] {
       const Arg axes = Arg::tuple({Arg::tuple({2, 2})});
       const UOp c = UOp::make(Ops::CONTRACT, dtypes::float32.vec(4), {load(1)}, axes);
       return kernel(UOp::make(Ops::UNROLL, dtypes::float32, {c}, axes));
     }},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.rule; }

class SpecRule : public ::testing::TestWithParam<Case> {};

TEST_P(SpecRule, RefusesItsMalformedAstNamingTheRule) {
  const Case& c = GetParam();
  const UOp ast = c.ast();
  const std::optional<std::string> v =
      c.form == Form::Kernel ? kernel_ast_violation(ast) : optimized_ast_violation(ast);
  ASSERT_TRUE(v.has_value()) << c.rule << " took the AST";
  const std::string prefix = c.form == Form::Kernel ? "kernel AST rule " : "optimized AST rule ";
  EXPECT_EQ(v->rfind(prefix + c.rule + ": ", 0), 0u) << *v;
  EXPECT_EQ(v->find('\n'), std::string::npos) << *v;
}

INSTANTIATE_TEST_SUITE_P(Rules, SpecRule, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string name = info.param.rule;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

TEST(KernelAstSpec, EveryRuleOfBothTablesHasACase) {
  std::set<std::string> tested;
  for (const Case& c : kCases) tested.insert(c.rule);
  for (const PatternMatcher* spec : {&kernel_ast_spec(), &optimized_ast_spec()})
    for (const auto& e : spec->entries()) EXPECT_TRUE(tested.count(e->rule.name)) << e->rule.name;
}

// The optimized table takes what only the optimizer makes: a grouped reduce's local buffer read
// after its STORE, and the bare constant a WMMA's accumulator starts from.
TEST(KernelAstSpec, TheOptimizedTableTakesLocalBuffersAndBareConstants) {
  const UOp local = UOp::make(Ops::DEFINE_LOCAL, dtypes::float32.ptr_to(4, AddrSpace::Local), {}, "temp0");
  const UOp partial = UOp::make(Ops::STORE, dtypes::void_, {view(local, {4, 1}), sum(load(1), {1})});
  const UOp grouped = UOp::make(Ops::LOAD, dtypes::float32, {view(local, {4, 1}), partial});
  const UOp ast = kernel(grouped + UOp::const_float(dtypes::float32, 1.0), {4, 1});
  EXPECT_EQ(optimized_ast_violation(ast), std::nullopt);
  EXPECT_NE(kernel_ast_violation(ast), std::nullopt);
}

TEST(KernelAstSpec, EveryLibraryWorkloadsKernelsVerify) {
  int kernels = 0;
  for (const WorkloadDef& def : workload_library())
    for (DType d : def.dtypes) {
      const std::string spec = def.name + ":dtype=" + to_string(d);
      for (const ScheduleItem& item : create_schedule({make_workload(spec).output.uop()}).items) {
        if (item.is_copy()) continue;
        kernels++;
        EXPECT_EQ(kernel_ast_violation(item.ast), std::nullopt) << spec;
        // The opts each target's heuristics choose, tensor cores included on CUDA.
        for (const Renderer& r : {Renderer::cpu(4), Renderer::opencl(), Renderer::cuda(80)})
          EXPECT_EQ(optimized_ast_violation(get_optimized_ast(item.ast, r)), std::nullopt)
              << spec << " " << r.device;
      }
    }
  EXPECT_GT(kernels, 0);
}

// Mapped without import's own check, so that a kernel breaking a rule fails here rather than
// being refused as an import failure.
TEST(KernelAstSpec, EveryParsableSopsSampleKernelVerifies) {
  int verified = 0;
  for (const std::string& line : testing::sops_sample_lines()) {
    UOp parsed;
    try {
      parsed = parse_tinygrad_uop(line);
    } catch (const ParseError&) {
      continue;  // image dtypes
    }
    const UOp ast = graph_rewrite(parsed, imports::tinygrad_to_tunebed());
    EXPECT_EQ(kernel_ast_violation(ast), std::nullopt) << line;
    verified++;
  }
  EXPECT_GT(verified, 100);
}

}  // namespace
}  // namespace tunebed
