// tinygrad's kernel-AST text: `repr(UOp)` as tinygrad prints it, one kernel per line, e.g.
//   UOp(Ops.SINK, dtypes.void, arg=None, src=(x1:=UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(3), ...),))
// with Python literals, single-quoted strings, `xN:=` naming a shared subexpression and later
// `xN` referring to it, UOps inside args (symbolic shapes in a View), `OptOps.X` (read as the
// string "X"), and the older `local=True` pointer form that tinygrad's dataset uses.
// Records such as ShapeTracker(...) go through the same registry as tunebed's own text, so a
// ShapeTracker arg becomes tunebed's ShapeTracker when core/shape is linked.
#pragma once

#include <string_view>

#include "core/ir/uop.hpp"

namespace tunebed {

UOp parse_tinygrad_uop(std::string_view text);

}  // namespace tunebed
