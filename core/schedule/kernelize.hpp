// The passes of kernelize (tinygrad's schedule/grouper.py and schedule/kernelize.py), internal
// to core/schedule. This header speaks UOps only, so it can meet core/tensor's headers.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed::sched {

// The set of UOps that get a buffer of their own, in the order they were chosen.
class Realizes {
 public:
  bool contains(const UOp& u) const { return set_.count(u) != 0; }
  void add(const UOp& u) {
    if (set_.insert(u).second) order_.push_back(u);
  }
  const std::vector<UOp>& order() const { return order_; }

 private:
  std::vector<UOp> order_;
  std::unordered_set<UOp, UOpHash> set_;
};

// grouper.py: tinygrad's default choices (no DONT_GROUP_REDUCES, FUSE_CONV_BW or
// DONT_REALIZE_EXPAND).
const PatternMatcher& do_realize();
Realizes group_realizes(const UOp& sink);

// kernelize.py's tables.
const PatternMatcher& tensor_graph_rules();  // merge_views + the scheduler's share of `sym`
const PatternMatcher& create_kernels();
const PatternMatcher& replace_buffers();

// The tensor graph `sink` (a SINK of outputs) with every realized node replaced by
// ASSIGN(BUFFER, KERNEL) (reshaped to its shape); KERNEL's arg is its unfinished AST.
UOp get_kernelize_sink(const UOp& sink);
// The finished AST of one KERNEL: replace_buffers, view_left, view_right, then view_left +
// fix_kernel_ops bottom-up. Throws ScheduleError for buffers on different devices.
UOp fix_kernel_ast(const UOp& kernel);
// The BUFFER a kernel writes or reads through one of its sources (ASSIGN or BUFFER).
UOp buf_uop(const UOp& u);

// A fresh BUFFER (core/tensor's new_buffer), for a realized node without one.
UOp new_buffer_uop(const std::string& device, int64_t size, DType dtype);

}  // namespace tunebed::sched
