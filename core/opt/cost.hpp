// How much work a kernel does: its FLOPs and the bytes it moves, for GFLOP/s and GB/s figures
// (the tuning database stores both per kernel) and for roofline reasoning.
//
// tinygrad estimates these from the linearized uops (renderer/__init__.py's Estimates at
// 7b16fadd): each ALU op counts once per iteration of the loops around it, MULACC as 2, and the
// memory estimate counts the bytes of each global buffer once, however often it is read. Here
// the same count is read off the kernel AST, before any opt, so that every candidate of a kernel
// shares one figure:
//
//   flops  each ALU op counts the product of the shape it runs over: the full shape below a
//          REDUCE_AXIS, the output shape above it (core/spec/ast_shape.hpp), times 2 for MULACC and times
//          the vector width of its dtype. A REDUCE_AXIS counts as the ALU op that accumulates it,
//          over its input's shape. A constant's validity select, WHERE(VALID, CONST, 0), is the
//          form of a constant, not arithmetic, and counts nothing (as tinygrad, which leaves
//          indexing out).
//   bytes  each DEFINE_GLOBAL once: its size in elements times the element's itemsize.
//
// For a float32 M×N×K matmul that is 2·M·N·K flops (a MUL and the ADD that reduces it) and
// 4·(M·K + K·N + M·N) bytes. Symbolic sizes count at their maximum, so the figure is an upper bound.
#pragma once

#include <cstdint>

#include "core/ir/uop.hpp"

namespace tunebed {

struct KernelCost {
  int64_t flops = 0, bytes = 0;
};

// AST: a kernel's SINK (its KernelInfo, if any, is ignored). Throws std::invalid_argument for a
// DEFINE_GLOBAL of unknown size or a node whose sources disagree on their shape.
KernelCost kernel_cost(const UOp& ast);

}  // namespace tunebed
