// The rule tables of verify_kernel_ast.hpp. Each rule's check returns what is wrong with the node
// ("has 3 sources, ..."), or nullopt; the message puts the rule's name and the node before it.
#include "core/spec/verify_kernel_ast.hpp"

#include <algorithm>
#include <functional>
#include <type_traits>

#include "core/ir/text.hpp"
#include "core/spec/ast_shape.hpp"

namespace tunebed {
namespace {

using Complaint = std::optional<std::string>;

// What the shape rules read: the root, every node once (sources first) and the shapes so far.
struct SpecContext {
  UOp root;
  const std::vector<UOp>& topo;
  AstShapes shapes;
};

// A rule whose check takes the node, or the node and the SpecContext. A complaint fires the rule
// as NOOP(arg=complaint): a rewrite that only says the node is broken, and how.
template <class Check>
Rule rule(std::string name, UPat node, Check check) {
  return Rule(std::move(name), std::move(node), [check = std::move(check)](const Match& m) {
    Complaint c;
    if constexpr (std::is_invocable_v<Check, const UOp&>)
      c = check(m.root);
    else
      c = check(m.root, m.ctx<SpecContext>());
    return c ? UOp::make(Ops::NOOP, dtypes::void_, {}, Arg(*c)) : UOp();
  });
}

std::string name(Ops op) { return std::string(op_name(op)); }
bool is_buffer(const UOp& u) { return u.op() == Ops::DEFINE_GLOBAL || u.op() == Ops::DEFINE_LOCAL; }
bool is_buffer_view(const UOp& u) {
  return u.op() == Ops::VIEW && u.src().size() == 1 && is_buffer(u.src(0));
}
bool is_bare_view(const UOp& u) { return u.op() == Ops::VIEW && u.src().empty(); }

// The node as a message names it: op, dtype and a short arg ("VIEW void (4, 1)" for a view).
std::string describe(const UOp& u) {
  std::string s = name(u.op()) + " " + to_string(u.dtype());
  if (u.arg().is_none()) return s;
  if (const auto* st = u.arg().try_object<ShapeTracker>()) return s + " " + to_string(st->shape());
  std::string arg = print_arg(u.arg());
  return s + " " + (arg.size() > 40 ? arg.substr(0, 37) + "..." : arg);
}

Complaint op_not_in(const UOp& u, const OpSet& ops, const char* form) {
  if (ops.contains(u.op())) return std::nullopt;
  return "is not an op of the " + std::string(form);
}

int arity(Ops op) {
  if (GroupOp::Ternary.contains(op)) return 3;
  if (GroupOp::Binary.contains(op)) return 2;
  return 1;  // unary ALUs, CAST, BITCAST, REDUCE_AXIS
}

// tinygrad's dtype rules for ALUs (uop/spec.py): comparisons make bools of equal operands, WHERE
// picks between values of its dtype on a bool, a shift's distance may be a uint32, everything else
// has its sources' dtype; so does a REDUCE_AXIS.
Complaint alu_dtypes(const UOp& u) {
  const DType& d = u.dtype();
  auto is_of = [&](const UOp& s) -> Complaint {
    if (s.dtype() == d) return std::nullopt;
    return "has a source of dtype " + to_string(s.dtype());
  };
  switch (u.op()) {
    case Ops::WHERE:
      if (!u.src(0).dtype().is_bool()) return "selects on a " + to_string(u.src(0).dtype()) + ", not a bool";
      if (Complaint c = is_of(u.src(1))) return c;
      return is_of(u.src(2));
    case Ops::CMPLT:
    case Ops::CMPNE:
    case Ops::CMPEQ:
      if (!d.is_bool()) return std::string("is not a bool");
      if (u.src(0).dtype() != u.src(1).dtype())
        return "compares a " + to_string(u.src(0).dtype()) + " with a " + to_string(u.src(1).dtype());
      return std::nullopt;
    case Ops::SHL:
    case Ops::SHR:
      if (u.src(1).dtype() == dtypes::uint32) return is_of(u.src(0));
      [[fallthrough]];
    default:
      for (const UOp& s : u.src())
        if (Complaint c = is_of(s)) return c;
      return std::nullopt;
  }
}

Complaint const_arg(const UOp& u) {
  const DType& d = u.dtype();
  if (d.ptr || d.is_void()) return std::string("is not a value");
  const Arg& a = u.arg();
  const bool fits = d.is_float() ? a.is<double>() : d.is_bool() ? a.is<bool>() : a.is<int64_t>();
  if (!fits)
    return std::string("has an arg that is not ") + (d.is_float()  ? "a float"
                                                     : d.is_bool() ? "a bool"
                                                                   : "an integer");
  return std::nullopt;
}

// A constant's VIEW gives it a shape; the optimized AST also has the bare one a WMMA's
// accumulator starts from.
Complaint const_view(const UOp& u, bool required) {
  if (u.src().size() == 1 && is_bare_view(u.src(0))) return std::nullopt;
  if (u.src().empty() && !required) return std::nullopt;
  return "has " + std::to_string(u.src().size()) + " sources, not one VIEW without a source";
}

Complaint reduce_arg(const UOp& u) {
  const Arg& a = u.arg();
  const bool ok =
      a.is_tuple() && a.as_tuple().size() == 2 && a.as_tuple()[0].is<Ops>() &&
      OpSet{Ops::ADD, Ops::MUL, Ops::MAX}.contains(a.as_tuple()[0].as_op()) && a.as_tuple()[1].is_tuple() &&
      std::ranges::all_of(a.as_tuple()[1].as_tuple(), [](const Arg& x) { return x.is<int64_t>(); });
  if (ok) return std::nullopt;
  return std::string("has an arg that is not (ADD|MUL|MAX, (axis, ...))");
}

// The lanes a CONTRACT or UNROLL arg ((axis, size), ...) names: the product of the sizes; 0 for an
// arg of another form.
int64_t lanes(const Arg& a) {
  if (!a.is_tuple()) return 0;
  int64_t n = 1;
  for (const Arg& x : a.as_tuple()) {
    if (!x.is_tuple() || x.as_tuple().size() != 2 || !x.as_tuple()[1].is<int64_t>()) return 0;
    n *= x.as_tuple()[1].as_int();
  }
  return n;
}

// A symbolic size, stride, offset or mask bound of a VIEW: an integer expression of DEFINE_VARs
// (tinygrad's sint). The tinygrad text parser takes any UOp there, and codegen indexes with it.
Complaint int_expression(const UOp& root) {
  for (const UOp& x : root.toposort()) {
    const bool scalar_int =
        !x.dtype().ptr && x.dtype().count == 1 && (x.dtype().is_int() || x.dtype().is_bool());
    const bool ok =
        scalar_int && (x.op() == Ops::CONST ? !const_arg(x)
                       : x.op() == Ops::DEFINE_VAR
                           ? x.src().empty()
                           : GroupOp::ALU.contains(x.op()) &&
                                 static_cast<int>(x.src().size()) == arity(x.op()) && !alu_dtypes(x));
    if (!ok) return "has a symbolic size with a " + describe(x) + ", not an integer expression";
  }
  return std::nullopt;
}

Complaint view_symbols(const UOp& u) {
  for (const View& v : u.arg().as_object<ShapeTracker>().views()) {
    std::vector<sint> sizes = v.shape();
    sizes.insert(sizes.end(), v.strides().begin(), v.strides().end());
    sizes.push_back(v.offset());
    if (v.mask())
      for (const auto& [begin, end] : *v.mask()) sizes.insert(sizes.end(), {begin, end});
    for (const sint& s : sizes)
      if (!s.is_int())
        if (Complaint c = int_expression(s.uop())) return c;
  }
  return std::nullopt;
}

// The structure and dtype rules: both forms. Each table puts its op rule first, so that a foreign
// op is named as such rather than by whichever structure rule it also breaks.
const PatternMatcher& structure_rules() {
  static const PatternMatcher pm = {
      rule("root-is-sink", UPat(),
           [](const UOp& u, SpecContext& ctx) -> Complaint {
             if (u == ctx.root && u.op() != Ops::SINK) return std::string("is the root, not a SINK");
             return std::nullopt;
           }),
      rule("sink-of-stores", UPat(Ops::SINK),
           [](const UOp& u, SpecContext& ctx) -> Complaint {
             if (!(u == ctx.root)) return std::string("is not the root");
             if (!u.dtype().is_void()) return std::string("is not void");
             if (u.src().empty()) return std::string("has no STOREs");
             for (const UOp& s : u.src())
               if (s.op() != Ops::STORE) return "has a " + name(s.op()) + " source; it holds only STOREs";
             return std::nullopt;
           }),
      rule("store-has-view", UPat(Ops::STORE),
           [](const UOp& u) -> Complaint {
             if (u.src().size() != 2)
               return "has " + std::to_string(u.src().size()) + " sources, not (VIEW of a buffer, value)";
             if (!is_buffer_view(u.src(0)))
               return "writes through a " + name(u.src(0).op()) + ", not a VIEW of a buffer";
             if (!u.dtype().is_void()) return std::string("is not void");
             return std::nullopt;
           }),
      // A grouped reduce's local buffer is read after its STORE: LOAD(VIEW, STORE).
      rule("load-has-view", UPat(Ops::LOAD),
           [](const UOp& u) -> Complaint {
             const size_t n = u.src().size();
             if (n == 0 || n > 2 || (n == 2 && u.src(1).op() != Ops::STORE))
               return "has " + std::to_string(n) + " sources, not (VIEW of a buffer[, STORE])";
             if (!is_buffer_view(u.src(0)))
               return "reads through a " + name(u.src(0).op()) + ", not a VIEW of a buffer";
             if (u.dtype() != u.src(0).dtype().base()) return "reads a " + to_string(u.src(0).dtype());
             return std::nullopt;
           }),
      rule("view-arg-is-shapetracker", UPat(Ops::VIEW),
           [](const UOp& u) -> Complaint {
             if (u.arg().try_object<ShapeTracker>()) return std::nullopt;
             return std::string("has no ShapeTracker arg");
           }),
      rule("view-sizes-are-int-expressions", UPat(Ops::VIEW), view_symbols),
      // tinygrad's "VIEW can only exist in the edges": a swizzle inside the kernel is the
      // scheduler's to push away.
      rule("view-only-on-buffers", UPat(Ops::VIEW),
           [](const UOp& u) -> Complaint {
             if (is_bare_view(u) && u.dtype().is_void()) return std::nullopt;
             if (is_buffer_view(u))
               return u.dtype() == u.src(0).dtype() ? Complaint() : "views a " + to_string(u.src(0).dtype());
             if (u.src().empty()) return std::string("has no source and is not void");
             return "views a " + name(u.src(0).op()) + " " + to_string(u.src(0).dtype()) +
                    "; views belong only on buffers and constants";
           }),
      // The other end of an edge: a VIEW is read only as the first source of a buffer op.
      rule(
          "views-under-buffer-ops", UPat(),
          [](const UOp& u) -> Complaint {
            static constexpr OpSet takes_view{Ops::LOAD, Ops::STORE, Ops::CONST, Ops::VALID, Ops::DEFINE_VAR};
            for (size_t i = 0; i < u.src().size(); i++)
              if (u.src(i).op() == Ops::VIEW && (i > 0 || !takes_view.contains(u.op())))
                return "has a VIEW as source " + std::to_string(i) +
                       "; a VIEW is only the first source of LOAD, STORE, CONST, VALID or DEFINE_VAR";
            return std::nullopt;
          }),
      rule("valid-of-view", UPat(Ops::VALID),
           [](const UOp& u) -> Complaint {
             if (u.dtype().is_bool() && u.src().size() == 1 && is_bare_view(u.src(0))) return std::nullopt;
             return std::string("is not a bool of one VIEW without a source");
           }),
      rule("const-arg-matches-dtype", UPat(Ops::CONST), const_arg),
      rule("buffer-is-pointer", UPat::ops({Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL}),
           [](const UOp& u) -> Complaint {
             const AddrSpace space = u.op() == Ops::DEFINE_GLOBAL ? AddrSpace::Global : AddrSpace::Local;
             if (!u.dtype().ptr || u.dtype().addrspace != space)
               return std::string("is not a pointer to its memory");
             if (!u.src().empty()) return std::string("has sources");
             if (u.op() == Ops::DEFINE_GLOBAL && !(u.arg().is<int64_t>() && u.arg().as_int() >= 0))
               return std::string("is not numbered");
             return std::nullopt;
           }),
      // (UOp::make refuses min > max already.)
      rule("define-var-arg", UPat(Ops::DEFINE_VAR),
           [](const UOp& u) -> Complaint {
             const Arg& a = u.arg();
             const bool ok = a.is_tuple() && a.as_tuple().size() == 3 && a.as_tuple()[0].is<std::string>() &&
                             a.as_tuple()[1].is<int64_t>() && a.as_tuple()[2].is<int64_t>() &&
                             u.dtype().is_int();
             if (ok) return std::nullopt;
             return std::string("is not an integer variable (name, min, max)");
           }),
      rule("src-count", UPat::ops(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::REDUCE_AXIS}),
           [](const UOp& u) -> Complaint {
             if (static_cast<int>(u.src().size()) == arity(u.op())) return std::nullopt;
             return "has " + std::to_string(u.src().size()) + " sources, not " +
                    std::to_string(arity(u.op()));
           }),
      rule("alu-dtypes-agree", UPat::ops(GroupOp::ALU | OpSet{Ops::REDUCE_AXIS}), alu_dtypes),
      rule("idiv-mod-on-ints", UPat::ops({Ops::IDIV, Ops::MOD}),
           [](const UOp& u) -> Complaint {
             if (u.dtype().is_int()) return std::nullopt;
             return std::string("is not on integers");
           }),
      rule("reduce-axis-arg", UPat(Ops::REDUCE_AXIS), reduce_arg),
  };
  return pm;
}

}  // namespace

const PatternMatcher& kernel_ast_spec() {
  static const OpSet ops =
      GroupOp::ALU | OpSet{Ops::SINK,        Ops::STORE, Ops::LOAD,          Ops::VIEW,
                           Ops::VALID,       Ops::CONST, Ops::DEFINE_GLOBAL, Ops::DEFINE_VAR,
                           Ops::REDUCE_AXIS, Ops::CAST,  Ops::BITCAST};
  static const PatternMatcher pm =
      PatternMatcher({
          rule("op-in-kernel-ast", UPat(), [](const UOp& u) { return op_not_in(u, ops, "kernel AST"); }),
          // Vectors are what UPCAST and UNROLL make of a kernel, after the opts.
          rule("scalar-dtypes", UPat(),
               [](const UOp& u) -> Complaint {
                 if (u.dtype().count == 1 && u.dtype().v == 1) return std::nullopt;
                 return std::string("is a vector");
               }),
      }) +
      structure_rules() +
      PatternMatcher({
          rule("const-has-view", UPat(Ops::CONST), [](const UOp& u) { return const_view(u, true); }),
          // tinygrad's "all parent UOps must have the same shape" (ast_spec): a STORE's value
          // has its VIEW's shape, an ALU's sources one shape.
          rule("sources-agree-on-shape", UPat(),
               [](const UOp& u, SpecContext& ctx) -> Complaint {
                 if (u.op() == Ops::SINK) return std::nullopt;
                 std::optional<SymShape> first;
                 for (const UOp& s : u.src()) {
                   std::optional<SymShape> shape = ctx.shapes(s);
                   if (!shape) continue;
                   if (first && !(*first == *shape))
                     return "has sources of shapes " + to_string(*first) + " and " + to_string(*shape);
                   first = shape;
                 }
                 return std::nullopt;
               }),
          rule("reduce-axes-in-range", UPat(Ops::REDUCE_AXIS),
               [](const UOp& u, SpecContext& ctx) -> Complaint {
                 const std::optional<SymShape> shape = ctx.shapes(u.src(0));
                 if (!shape) return std::string("reduces a value without a shape");
                 std::vector<int64_t> axes = u.arg().as_tuple()[1].as_ints();
                 for (int64_t a : axes)
                   if (a < 0 || a >= static_cast<int64_t>(shape->size()))
                     return "reduces axis " + std::to_string(a) + " of a shape " + to_string(*shape);
                 std::ranges::sort(axes);
                 if (std::ranges::adjacent_find(axes) != axes.end())
                   return std::string("reduces an axis twice");
                 return std::nullopt;
               }),
          // tinygrad's verify_sink_dims: the outputs have one shape, and each axis is one loop:
          // across the VIEWs a size is 1 (broadcast, or reduced) or the loop's n.
          rule("stores-agree-on-shape", UPat(Ops::SINK),
               [](const UOp& u, SpecContext& ctx) -> Complaint {
                 const std::optional<SymShape> first = ctx.shapes(u.src(0));
                 for (const UOp& s : u.src())
                   if (!(ctx.shapes(s) == first))
                     return "stores shapes " + to_string(*first) + " and " + to_string(*ctx.shapes(s));
                 return std::nullopt;
               }),
          rule("views-agree-on-full-shape", UPat(Ops::SINK),
               [](const UOp&, SpecContext& ctx) -> Complaint {
                 std::optional<SymShape> full;  // per axis the first size that is not 1
                 for (const UOp& v : ctx.topo) {
                   if (v.op() != Ops::VIEW) continue;
                   const SymShape& shape = v.arg().as_object<ShapeTracker>().shape();
                   if (!full) full = SymShape(shape.size(), sint(1));
                   if (shape.size() != full->size())
                     return "has VIEWs of ranks " + std::to_string(full->size()) + " and " +
                            std::to_string(shape.size());
                   for (size_t i = 0; i < shape.size(); i++) {
                     if (shape[i] == sint(1)) continue;
                     if ((*full)[i] != sint(1) && !((*full)[i] == shape[i]))
                       return "has sizes " + to_string((*full)[i]) + " and " + to_string(shape[i]) +
                              " on axis " + std::to_string(i);
                     (*full)[i] = shape[i];
                   }
                 }
                 return std::nullopt;
               }),
      });
  return pm;
}

const PatternMatcher& optimized_ast_spec() {
  static const OpSet ops =
      GroupOp::ALU | OpSet{Ops::SINK,       Ops::STORE,       Ops::LOAD,          Ops::VIEW,
                           Ops::VALID,      Ops::CONST,       Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL,
                           Ops::DEFINE_VAR, Ops::REDUCE_AXIS, Ops::CAST,          Ops::BITCAST,
                           Ops::WMMA,       Ops::CONTRACT,    Ops::UNROLL};
  static const PatternMatcher pm =
      PatternMatcher({
          rule("op-in-optimized-ast", UPat(),
               [](const UOp& u) { return op_not_in(u, ops, "optimized AST"); }),
      }) +
      structure_rules() +
      PatternMatcher({
          rule("const-has-view", UPat(Ops::CONST), [](const UOp& u) { return const_view(u, false); }),
          // The tensor core's form (tinygrad's WMMA, CONTRACT and UNROLL rules).
          rule("wmma-sources", UPat(Ops::WMMA),
               [](const UOp& u) -> Complaint {
                 if (u.src().size() == 3 && u.arg().is_tuple()) return std::nullopt;
                 return "has " + std::to_string(u.src().size()) + " sources, not (A, B, accumulator)";
               }),
          rule("contract-unroll-lanes", UPat::ops({Ops::CONTRACT, Ops::UNROLL}),
               [](const UOp& u) -> Complaint {
                 const int vector = u.op() == Ops::CONTRACT ? u.dtype().count
                                    : u.src().size() == 1   ? u.src(0).dtype().count
                                                            : 0;
                 if (vector == lanes(u.arg())) return std::nullopt;
                 return "has " + std::to_string(vector) + " lanes where its arg names " +
                        std::to_string(lanes(u.arg()));
               }),
      });
  return pm;
}

namespace {

Complaint violation(const PatternMatcher& spec, const char* form, const UOp& sink) {
  const std::vector<UOp> topo = sink.toposort();
  SpecContext ctx{sink, topo, {}};
  for (const UOp& u : topo) {
    const PatternMatcher::Applied a = spec.apply(u, &ctx, &typeid(SpecContext));
    if (a.rule)
      return std::string(form) + " rule " + a.rule->name + ": " + describe(u) + " " + a.out.arg().as_string();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> kernel_ast_violation(const UOp& sink) {
  return violation(kernel_ast_spec(), "kernel AST", sink);
}
std::optional<std::string> optimized_ast_violation(const UOp& sink) {
  return violation(optimized_ast_spec(), "optimized AST", sink);
}

void verify_kernel_ast(const UOp& sink) {
  if (Complaint c = kernel_ast_violation(sink)) throw KernelAstError(*c);
}
void verify_optimized_ast(const UOp& sink) {
  if (Complaint c = optimized_ast_violation(sink)) throw KernelAstError(*c);
}

}  // namespace tunebed
