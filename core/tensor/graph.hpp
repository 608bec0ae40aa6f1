// The tensor-level graph: builders for its leaf nodes, and the shape rule of every op in it (the
// rules README.md states). Tensor uses them as it builds; anything holding a bare tensor-level UOp
// (the scheduler, a test) can ask for its shape here.
#pragma once

#include <string>
#include <vector>

#include "core/tensor/tensor.hpp"

namespace tunebed {

UOp device_uop(const std::string& device);
// BUFFER(UNIQUE(id), DEVICE(device)) of `size` elements, with a fresh process-wide id.
UOp new_buffer(const std::string& device, int64_t size, DType dtype);
int64_t buffer_id(const UOp& buffer);  // the id of a BUFFER's UNIQUE
// CONST(DEVICE) with arg `value` as dtype holds it: a 0-d tensor.
UOp const_uop(DType dtype, const ConstType& value, const std::string& device);

// The shape of a node with this op, dtype and arg over sources of `src_shapes`; throws ShapeError
// naming the op when the sources, arg or dtypes break the op's rule.
Shape infer_shape(Ops op, const DType& dtype, const Arg& arg, const std::vector<UOp>& src,
                  const std::vector<Shape>& src_shapes);
// The shape of any node of a tensor graph, inferring its sources first.
Shape tensor_shape(const UOp& u);

// The BUFFER nodes a graph reads, in toposort order.
std::vector<UOp> graph_buffers(const UOp& root);

std::string shape_to_string(const Shape& s);  // "(2, 3)", "(4,)", "()"

}  // namespace tunebed
