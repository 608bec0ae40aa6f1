// What code generation reads off a kernel AST besides its KernelInfo (core/opt/kernel_info.hpp)
// and its shapes (core/spec/ast_shape.hpp): the reduced axes and the plain kernel's KernelInfo.
//
// `no_opts_info` gives the unoptimized kernel: GLOBAL for every axis no REDUCE_AXIS reduces,
// REDUCE for the others, named as tinygrad names kernels ("r_16_4", "E_3").
#pragma once

#include <string>
#include <vector>

#include "core/opt/kernel_info.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed {

// The ShapeTracker of a VIEW node (throws std::invalid_argument when its arg is not one).
const ShapeTracker& view_st(const UOp& view);

// The axes reduced by some REDUCE_AXIS of the AST, ascending.
std::vector<int64_t> reduced_axes(const UOp& ast);

// tinygrad's kernel name: 'r' for a kernel with a reduce, 'E' otherwise, then the full shape
// ("r_16_4", "E_3"); a symbolic size prints as its variables' names. A function of the AST.
std::string default_kernel_name(const UOp& ast);

// The unoptimized kernel's info: GLOBAL and REDUCE axes, the default name.
KernelInfo no_opts_info(const UOp& ast);

// The AST with its SINK arg replaced by `info`.
UOp with_kernel_info(const UOp& ast, const KernelInfo& info);

}  // namespace tunebed
