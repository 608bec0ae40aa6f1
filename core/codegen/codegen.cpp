// The pass list (tinygrad's codegen/__init__.py: full_rewrite) and get_program.
#include <algorithm>
#include <functional>

#include "core/codegen/passes.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

// ASTs the C target cannot run, refused up front with the reason.
void check_supported(const UOp& ast) {
  if (ast.op() != Ops::SINK)
    throw CodegenError("kernel AST: the root is a " + std::string(op_name(ast.op())) + ", not a SINK");
  for (const UOp& u : ast.toposort()) {
    if (u.op() == Ops::DEFINE_LOCAL || (u.dtype().ptr && u.dtype().addrspace == AddrSpace::Local))
      throw CodegenError(
          "kernel uses local memory (DEFINE_LOCAL), which the C renderer's target does not have");
    if (u.dtype().scalar == Scalar::BFloat16) throw CodegenError("the C renderer has no bfloat16");
  }
}

}  // namespace

KernelInfo kernel_info(const UOp& sink) {
  if (!sink.arg().is_record()) throw CodegenError("kernel AST: the SINK arg is not a KernelInfo record");
  try {
    return KernelInfo::from_record(sink.arg().as_record());
  } catch (const std::invalid_argument& e) {
    throw CodegenError(std::string("kernel AST: ") + e.what());
  }
}

UOp full_rewrite_to_sink(const UOp& ast, const Renderer& renderer) {
  check_supported(ast);
  const KernelInfo info = kernel_info(ast);
  // The tables, composed once. devectorize goes before the symbolic rules, so that a vector ALU
  // is split into scalar ones before rules written for scalars see it.
  static const PatternMatcher sym = symbolic() + gep_pushing();
  static const PatternMatcher initial_symbolic = sym + pm_decompositions();
  static const PatternMatcher expand = gep_pushing() + expander();
  static const PatternMatcher remove_reduce = pm_reduce() + gep_pushing();
  static const PatternMatcher pm_devectorize = devectorize() + sym + load_store_folding();
  static const PatternMatcher final_rewrite = symbolic_simple() + pm_render();

  IndexContext index{info.axis_types, {}, 0, std::make_shared<int64_t>(0)};
  UOp sink = graph_rewrite(ast, pm_lowerer(), index, {.bottom_up = true});
  sink = graph_rewrite(sink, initial_symbolic);
  sink = graph_rewrite(sink, expand);
  ReduceContext reduce;
  sink = graph_rewrite(sink, remove_reduce, reduce);
  Renderer caps = renderer;  // the rules read it as their (mutable-typed) context
  sink = graph_rewrite(sink, pm_devectorize, caps);
  return graph_rewrite(sink, final_rewrite);
}

std::vector<UOp> full_rewrite(const UOp& ast, const Renderer& renderer) {
  return linearize(full_rewrite_to_sink(ast, renderer));
}

ProgramSpec get_program(const UOp& ast, const Renderer& renderer) {
  ProgramSpec p;
  p.uops = full_rewrite(ast, renderer);
  p.source = render_c(p.uops);
  p.name = to_function_name(kernel_info(ast).name);
  std::vector<UOp> globals;
  for (const UOp& u : p.uops) {
    if (u.op() == Ops::DEFINE_GLOBAL) globals.push_back(u);
    if (u.op() == Ops::DEFINE_VAR) p.vars.push_back(u);
    if (u.op() == Ops::SPECIAL) p.num_cores = sint_from_arg(u.arg().as_tuple().at(1)).to_int();
  }
  std::sort(globals.begin(), globals.end(),
            [](const UOp& a, const UOp& b) { return a.arg().as_int() < b.arg().as_int(); });
  for (size_t i = 0; i < globals.size(); i++) {
    if (globals[i].arg().as_int() != static_cast<int64_t>(i))
      throw CodegenError("kernel AST: DEFINE_GLOBAL args are not 0.." + std::to_string(globals.size() - 1));
    p.globals.push_back(globals[i].dtype());
  }
  std::sort(p.vars.begin(), p.vars.end(), [](const UOp& a, const UOp& b) {
    return a.arg().as_tuple().at(0).as_string() < b.arg().as_tuple().at(0).as_string();
  });
  return p;
}

}  // namespace tunebed
