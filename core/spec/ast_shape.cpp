#include "core/spec/ast_shape.hpp"

#include <stdexcept>
#include <string>

namespace tunebed {

std::optional<SymShape> AstShapes::operator()(const UOp& u) {
  auto it = memo_.find(u.get());
  if (it != memo_.end()) return it->second;
  std::optional<SymShape> s = compute(u);
  memo_.emplace(u.get(), s);
  return s;
}

SymShape AstShapes::full_shape(const UOp& root) {
  std::optional<SymShape> full;
  for (const UOp& u : root.toposort()) {
    if (u.op() != Ops::VIEW) continue;  // every other node's shape is a VIEW's or has 1s in it
    const std::optional<SymShape> s = (*this)(u);
    if (!full) {
      full = s;
      continue;
    }
    if (s->size() != full->size())
      throw std::invalid_argument("kernel AST: shapes of rank " + std::to_string(s->size()) + " and " +
                                  std::to_string(full->size()));
    for (size_t i = 0; i < s->size(); i++) (*full)[i] = smax((*full)[i], (*s)[i]);
  }
  if (!full) throw std::invalid_argument("kernel AST: no VIEW, so no shape");
  return *full;
}

std::optional<SymShape> AstShapes::compute(const UOp& u) {
  if (u.op() == Ops::VIEW) return u.arg().as_object<ShapeTracker>().shape();
  if (u.op() == Ops::LOAD || u.op() == Ops::STORE) return (*this)(u.src(0));
  if (GroupOp::Buffer.contains(u.op())) {
    for (const UOp& s : u.src())
      if (s.op() == Ops::VIEW) return (*this)(s);
    return std::nullopt;
  }
  std::optional<SymShape> shape;
  for (const UOp& s : u.src())
    if (std::optional<SymShape> ss = (*this)(s)) {
      if (shape && !(*shape == *ss))
        throw std::invalid_argument("kernel AST: the sources of a " + std::string(op_name(u.op())) +
                                    " have different shapes " + to_string(*shape) + " and " + to_string(*ss));
      shape = ss;
    }
  if (shape && u.op() == Ops::REDUCE_AXIS)
    for (int64_t a : u.arg().as_tuple().at(1).as_ints()) shape->at(a) = 1;
  return shape;
}

}  // namespace tunebed
