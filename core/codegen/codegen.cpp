// The pass list (tinygrad's codegen/__init__.py: full_rewrite) and get_program.
#include <algorithm>
#include <functional>

#include "core/codegen/passes.hpp"
#include "core/codegen/render_cstyle.hpp"
#include "core/spec/ast_shape.hpp"
#include "core/spec/verify_kernel_ast.hpp"
#include "core/symbolic/eval.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

// ASTs that are not optimized kernel ASTs (core/spec) or that the target cannot run, refused up
// front with the reason.
void check_supported(const UOp& ast, const Renderer& renderer) {
  if (std::optional<std::string> violation = optimized_ast_violation(ast)) throw CodegenError(*violation);
  for (const UOp& u : ast.toposort()) {
    if (!renderer.has_local &&
        (u.op() == Ops::DEFINE_LOCAL || (u.dtype().ptr && u.dtype().addrspace == AddrSpace::Local)))
      throw CodegenError(
          "kernel uses local memory (DEFINE_LOCAL), which the C renderer's target does not have");
    if (u.dtype().scalar == Scalar::BFloat16 && renderer.device != "CUDA")
      throw CodegenError("the " + renderer.device + " renderer has no bfloat16");
  }
}

SymShape ast_full_shape(const UOp& ast) {
  try {
    return AstShapes().full_shape(ast);
  } catch (const std::invalid_argument& e) {
    throw CodegenError(std::string("kernel AST: ") + e.what());
  }
}

std::string render(const std::vector<UOp>& uops, const Renderer& renderer, const LaunchPlan& launch) {
  if (renderer.device == "CPU") return render_c(uops);
  if (renderer.device == "GPU") return render_opencl(uops);
  if (renderer.device == "CUDA") return render_cuda(uops, launch.local);
  throw CodegenError("no renderer for device \"" + renderer.device + "\" (one of CPU, GPU, CUDA)");
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

std::vector<RewriteStage> rewrite_stages(const UOp& ast, const Renderer& renderer) {
  check_supported(ast, renderer);
  const KernelInfo info = kernel_info(ast);
  // The tables, composed once. devectorize goes before the symbolic rules, so that a vector ALU
  // is split into scalar ones before rules written for scalars see it.
  static const PatternMatcher sym = symbolic() + gep_pushing();
  static const PatternMatcher initial_symbolic = sym + pm_decompositions();
  static const PatternMatcher expand = gep_pushing() + expander();
  static const PatternMatcher remove_reduce = pm_reduce() + gep_pushing();
  static const PatternMatcher pm_devectorize = devectorize() + sym + load_store_folding();
  static const PatternMatcher final_rewrite = symbolic_simple() + pm_render();

  IndexContext index{info.axis_types, {}, 0, std::make_shared<int64_t>(0), {}};
  if (renderer.has_local) index.launch_idx = plan_launch(info, ast_full_shape(ast), renderer).axis_idx;
  std::vector<RewriteStage> stages;
  stages.push_back({"lowerer", graph_rewrite(ast, pm_lowerer(), index, {.bottom_up = true})});
  stages.push_back({"symbolic", graph_rewrite(stages.back().sink, initial_symbolic)});
  stages.push_back({"expander", graph_rewrite(stages.back().sink, expand)});
  ReduceContext reduce;
  stages.push_back({"reduce", graph_rewrite(stages.back().sink, remove_reduce, reduce)});
  Renderer caps = renderer;  // the rules read it as their (mutable-typed) context
  stages.push_back({"devectorizer", graph_rewrite(stages.back().sink, pm_devectorize, caps)});
  stages.push_back({"final", graph_rewrite(stages.back().sink, final_rewrite)});
  return stages;
}

UOp full_rewrite_to_sink(const UOp& ast, const Renderer& renderer) {
  return rewrite_stages(ast, renderer).back().sink;
}

std::vector<UOp> full_rewrite(const UOp& ast, const Renderer& renderer) {
  return linearize(full_rewrite_to_sink(ast, renderer));
}

ProgramSpec get_program(const UOp& ast, const Renderer& renderer) {
  ProgramSpec p;
  p.uops = full_rewrite(ast, renderer);
  const LaunchPlan launch =
      renderer.has_local ? plan_launch(kernel_info(ast), ast_full_shape(ast), renderer) : LaunchPlan{};
  p.source = render(p.uops, renderer, launch);
  p.name = to_function_name(kernel_info(ast).name);
  p.global_size = launch.global;
  p.local_size = launch.local;
  // The AST's buffers, used or not: a rewrite may drop a buffer's only load (WHERE(false, a, b),
  // 0*a), and the caller still passes bufs[i] for every DEFINE_GLOBAL i (found by fuzz_kernel).
  std::vector<UOp> globals;
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::DEFINE_GLOBAL) globals.push_back(u);
  for (const UOp& u : p.uops) {
    if (u.op() == Ops::DEFINE_VAR) p.vars.push_back(u);
    if (u.op() == Ops::SPECIAL && u.arg().as_tuple().at(0).as_string() == "core_id") {
      p.num_cores = sint_from_arg(u.arg().as_tuple().at(1)).to_int();
      p.global_size[0] = p.num_cores;
    }
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

LaunchDims ProgramSpec::launch_dims(const std::vector<int32_t>& var_values) const {
  auto value = [&](const sint& s) -> int64_t {
    if (s.is_int()) return s.to_int();
    Evaluator ev(s.uop());
    std::vector<int64_t> values;
    for (const UOp& v : ev.vars()) {
      auto it = std::find(vars.begin(), vars.end(), v);
      if (it == vars.end() || static_cast<size_t>(it - vars.begin()) >= var_values.size())
        throw std::invalid_argument("kernel " + name + ": launch size " + to_string(s) + " needs variable " +
                                    v.arg().as_tuple().at(0).as_string());
      values.push_back(var_values[it - vars.begin()]);
    }
    return ev.eval(values).i;
  };
  LaunchDims dims;
  for (size_t i = 0; i < 3; i++) {
    dims.global[i] = value(global_size[i]);
    dims.local[i] = value(local_size[i]);
    if (dims.global[i] < 1 || dims.local[i] < 1)
      throw std::invalid_argument("kernel " + name + ": launch dims must be positive");
  }
  return dims;
}

}  // namespace tunebed
