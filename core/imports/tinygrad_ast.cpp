#include "core/imports/tinygrad_ast.hpp"

#include <algorithm>

#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/shape/shapetracker.hpp"
#include "core/spec/verify_kernel_ast.hpp"

namespace tunebed::imports {
namespace {

const ShapeTracker& view_st(const UOp& view) {
  const ShapeTracker* st = view.arg().try_object<ShapeTracker>();
  if (!st) throw ImportError("a VIEW's arg is not a ShapeTracker: " + print_arg(view.arg()));
  return *st;
}

// A view with padding; over a CONST, it is the dataset's form of a padded constant.
bool has_mask(const UOp& view) {
  const auto& views = view_st(view).views();
  return std::any_of(views.begin(), views.end(), [](const View& v) { return v.mask().has_value(); });
}

Arg zero_of(const DType& d) {
  if (d.is_float()) return Arg(0.0);
  if (d.is_bool()) return Arg(false);
  return Arg(int64_t{0});
}

// CONST c (VIEW st) → WHERE(VALID(VIEW st), CONST c (VIEW z), CONST 0 (VIEW z)), z = st's shape
// with stride 0: what the seed's fix_kernel_ops makes of a masked VIEW of a constant. (Its
// merge_views folds an unmasked one into the CONST's own VIEW, which is the dataset's form too.)
UOp valid_masked(const UOp& c) {
  if (c.dtype().ptr || c.dtype().count != 1)
    throw ImportError("a CONST of dtype " + to_string(c.dtype()) + " (a constant is one scalar)");
  const ShapeTracker& st = view_st(c.src(0));
  const SymShape& shape = st.shape();
  const UOp z = UOp::make(Ops::VIEW, dtypes::void_, {},
                          ShapeTracker::from_shape(shape, SymShape(shape.size(), sint(0))).to_arg());
  const UOp valid =
      UOp::make(Ops::VALID, dtypes::bool_, {UOp::make(Ops::VIEW, dtypes::void_, {}, st.to_arg())});
  return valid.where(UOp::make(Ops::CONST, c.dtype(), {z}, c.arg()),
                     UOp::make(Ops::CONST, c.dtype(), {z}, zero_of(c.dtype())));
}

bool is_kernel_info(const UOp& sink) {
  return sink.arg().is_record() && sink.arg().as_record().name == "KernelInfo";
}

// A kernel that breaks a rule of the kernel AST (core/spec) is an import failure with its message.
void verify(const UOp& ast) {
  if (std::optional<std::string> violation = kernel_ast_violation(ast)) throw ImportError(*violation);
}

std::string opt_item(const Arg& a, const std::string& where) {
  if (a.is_none()) return "None";
  if (a.is<int64_t>()) return std::to_string(a.as_int());
  if (a.is_tuple()) {
    std::string s = "(";
    for (const Arg& x : a.as_tuple()) s += (s.size() > 1 ? "," : "") + opt_item(x, where);
    return s + ")";
  }
  throw ImportError(where + ": expected an integer, None or a tuple, found " + print_arg(a));
}

}  // namespace

const PatternMatcher& tinygrad_to_tunebed() {
  static const PatternMatcher pm({
      {"masked-const-to-valid", UPat(Ops::CONST, {UPat(Ops::VIEW).where(has_mask)}).named("c"),
       [](const Match& m) { return valid_masked(m["c"]); }},
      {"strip-kernel-info", UPat(Ops::SINK).named("sink").where(is_kernel_info),
       [](const Match& m) { return m["sink"].with_arg(None{}); }},
  });
  return pm;
}

std::string opts_text(const Arg& applied_opts) {
  if (applied_opts.is_none()) return "";
  if (!applied_opts.is_tuple()) throw ImportError("applied_opts is not a tuple: " + print_arg(applied_opts));
  std::string out;
  for (const Arg& o : applied_opts.as_tuple()) {
    if (!o.is_record() || o.as_record().name != "Opt")
      throw ImportError("applied_opts holds " + print_arg(o) + ", not an Opt(...)");
    const Record& r = o.as_record();
    const Arg* op = r.find("op");
    if (!op || !op->is<std::string>()) throw ImportError("an Opt without op=OptOps.X: " + print_arg(o));
    std::string item = op->as_string();
    const Arg* axis = r.find("axis");
    const Arg* arg = r.find("arg");
    const bool bare = (!axis || axis->is_none()) && (!arg || arg->is_none());
    if (!bare) item += ":" + opt_item(axis ? *axis : Arg(), item) + ":" + opt_item(arg ? *arg : Arg(), item);
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

ImportedKernel from_tinygrad(const UOp& parsed) {
  ImportedKernel k;
  if (parsed.op() == Ops::SINK && is_kernel_info(parsed)) {
    if (const Arg* opts = parsed.arg().as_record().find("applied_opts")) k.tinygrad_opts = opts_text(*opts);
  }
  k.ast = graph_rewrite(parsed, tinygrad_to_tunebed());
  if (k.ast.op() == Ops::SINK && !k.ast.arg().is_none())
    throw ImportError("the SINK's arg is " + print_arg(k.ast.arg()) + ", not None or a KernelInfo(...)");
  verify(k.ast);
  return k;
}

ImportedKernel parse_tinygrad_kernel(std::string_view text) {
  return from_tinygrad(parse_tinygrad_uop(text));
}

ImportedKernel parse_kernel_text(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && text.substr(start, 4) == "UOp(") return parse_tinygrad_kernel(text);
  const UOp ast = parse_uop(text);
  verify(ast);
  return {ast, "", false};
}

}  // namespace tunebed::imports
