// The canonical text form of a UOp graph: one line per node, parents first, the root last.
//
//   u0 = DEFINE_GLOBAL float32.ptr(16) arg=0
//   u1 = CONST float32 arg=1.5
//   u2 = LOAD float32 src=(u0)
//   u3 = ADD float32 src=(u2, u1)
//   u4 = SINK void src=(u3)
//
// Nodes are numbered in a deterministic depth-first order, so the same graph always prints the
// same text, and parse(print(u)) is u itself (interning makes it the same object). UOps that
// appear inside args (a symbolic shape inside a ShapeTracker) are printed as nodes too and
// referenced by name. Arg syntax, in the style of Python literals:
//   None True False 3 -2 1.5 inf -inf nan "text" Ops.ADD dtypes.float32.ptr(16) u7
//   (a, b) (a,) ()  Name(field=arg, ...)
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/ir/uop.hpp"

namespace tunebed {

// A parse failure, with the 1-based line and column where it was found.
class ParseError : public std::runtime_error {
 public:
  ParseError(int line, int col, const std::string& msg);
  int line, col;
};

std::string print_uop(const UOp& root);
// The key of a kernel everywhere (schedule, tuning database, imports, fuzz findings): 16 lowercase
// hex digits of the FNV-1a hash (core/ir/hash.hpp) of print_uop(ast). The text, not the UOp's
// structural hash, is hashed so that anyone holding the stored text can recompute the key, and so
// that the key changes exactly when the canonical form does.
std::string kernel_hash(const UOp& ast);
UOp parse_uop(std::string_view text);

std::string print_arg(const Arg& a);       // args that hold no UOps
Arg parse_arg(std::string_view text);
DType parse_dtype(std::string_view text);  // "float32.ptr(16)", tinygrad aliases too

}  // namespace tunebed
