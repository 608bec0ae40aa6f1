// The scheduler: cut a tensor-level graph (core/tensor/README.md) into kernels, as tinygrad's
// schedule/grouper.py, schedule/kernelize.py, opt/swizzler.py and engine/schedule.py at the seed
// commit 7b16fadd.
//
//   tensor graph ─ merge_views + sym ─► views instead of movement ops
//                ─ group_realizes ───► which nodes get their own buffer (do_realize, reduce fusion)
//                ─ add_contiguous ───► a CONTIGUOUS on each of them
//                ─ create_kernels ───► ASSIGN(BUFFER, KERNEL) per CONTIGUOUS and per ASSIGN
//                ─ order_assigns ────► a buffer's readers sort before the ASSIGN that writes it
//                ─ fix_kernel_ast ───► each KERNEL's AST: replace_buffers, view_left, view_right,
//                                      then view_left + fix_kernel_ops bottom-up
//                ─ linearize ────────► ScheduleItems in dependency (BFS) order, each kernel
//                                      checked by verify_kernel_ast (core/spec)
//
// A kernel AST is SINK(STORE(VIEW(DEFINE_GLOBAL i), value), ...) with LOAD(VIEW(DEFINE_GLOBAL)),
// ALU ops, REDUCE_AXIS (arg (op, axes)) and constants WHERE(VALID(VIEW), CONST, 0); the rules in
// full are kernel_ast_spec (core/spec/verify_kernel_ast.hpp). Its canonical
// text is core/ir's print_uop and its key kernel_hash, the FNV-1a hash of that text (not the
// UOp's structural hash), so the same kernel has the same key wherever it comes from.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed {

// A graph that cannot be scheduled: a non-contiguous self operand of an augmented assign,
// buffers of one kernel on different devices. The message says which.
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScheduleItem {
  UOp ast;                // a kernel's SINK, or a COPY (copies are items of their own)
  std::vector<UOp> bufs;  // BUFFER UOps; bufs[i] is DEFINE_GLOBAL i (for a COPY: destination, source)
  bool is_copy() const { return ast.op() == Ops::COPY; }
};

struct Schedule {
  std::vector<ScheduleItem> items;
  // Per requested output, where its value is after the items ran: a BUFFER, a view of one
  // (VIEW(BUFFER) with a ShapeTracker), or a constant (CONST(VIEW(DEVICE))).
  std::vector<UOp> outputs;
};

// Schedules the graphs `outputs` (tensor-level UOps) together, as tinygrad's Tensor.schedule of
// several tensors. Throws ScheduleError for a graph that cannot be scheduled, and KernelAstError
// for a kernel that breaks the kernel AST's rules (a scheduler bug, not the graph's fault).
Schedule create_schedule(const std::vector<UOp>& outputs);

std::string kernel_text(const UOp& ast);  // the canonical text form; its key is kernel_hash (core/ir/text.hpp)

}  // namespace tunebed
