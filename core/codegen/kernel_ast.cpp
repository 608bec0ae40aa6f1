// A kernel's reduced axes, its default name and the unoptimized kernel's KernelInfo.
#include "core/codegen/kernel_ast.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/spec/ast_shape.hpp"

namespace tunebed {

const ShapeTracker& view_st(const UOp& view) {
  const ShapeTracker* st = view.arg().try_object<ShapeTracker>();
  if (view.op() != Ops::VIEW || !st)
    throw std::invalid_argument("kernel AST: a VIEW without a ShapeTracker arg");
  return *st;
}

std::vector<int64_t> reduced_axes(const UOp& ast) {
  std::vector<int64_t> axes;
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::REDUCE_AXIS)
      for (int64_t a : u.arg().as_tuple().at(1).as_ints()) axes.push_back(a);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::string default_kernel_name(const UOp& ast) {
  std::string name = reduced_axes(ast).empty() ? "E" : "r";
  for (const sint& s : AstShapes().full_shape(ast)) {
    if (s.is_int()) {
      name += "_" + std::to_string(s.to_int());
      continue;
    }
    // The variable names in the size, so that the name stays an identifier.
    std::string vars;
    for (const UOp& x : s.uop().toposort())
      if (x.op() == Ops::DEFINE_VAR) vars += x.arg().as_tuple().at(0).as_string();
    name += "_" + (vars.empty() ? std::string("n") : vars);
  }
  return name;
}

KernelInfo no_opts_info(const UOp& ast) {
  KernelInfo info;
  info.name = default_kernel_name(ast);
  std::vector<int64_t> reduced = reduced_axes(ast);
  const size_t rank = AstShapes().full_shape(ast).size();
  for (size_t i = 0; i < rank; i++) {
    bool r = std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(i)) != reduced.end();
    info.axis_types.push_back(r ? AxisType::REDUCE : AxisType::GLOBAL);
  }
  return info;
}

UOp with_kernel_info(const UOp& ast, const KernelInfo& info) {
  if (ast.op() != Ops::SINK) throw std::invalid_argument("kernel AST: the root is not a SINK");
  return ast.with_arg(Arg(info.to_record()));
}

}  // namespace tunebed
