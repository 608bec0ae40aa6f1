// create_schedule: kernelize, then linearize the KERNELs into ScheduleItems in BFS order of their
// dependencies (tinygrad's engine/schedule.py create_schedule_with_vars).
#include "core/schedule/schedule.hpp"

#include <deque>
#include <unordered_map>

#include "core/ir/text.hpp"
#include "core/schedule/kernelize.hpp"
#include "core/schedule/swizzler.hpp"
#include "core/schedule/uop_st.hpp"
#include "core/spec/verify_kernel_ast.hpp"

namespace tunebed {
namespace {

using namespace sched;

std::vector<ScheduleItem> linearize(const UOp& sched_sink) {
  // the KERNEL graph: a kernel depends on the kernels whose ASSIGNs it reads
  std::vector<UOp> kernels;
  std::unordered_map<UOp, std::vector<UOp>, UOpHash> children;
  std::unordered_map<UOp, int, UOpHash> in_degree;
  for (const UOp& u : sched_sink.toposort()) {
    if (u.op() != Ops::ASSIGN) continue;
    const UOp& k = u.src(1);
    if (in_degree.emplace(k, 0).second) kernels.push_back(k);
    for (const UOp& s : k.src()) {
      if (s.op() == Ops::ASSIGN) {
        children[s.src(1)].push_back(k);
        in_degree[k]++;
      } else if (s.op() != Ops::BUFFER) {
        throw std::logic_error(std::string("input to kernel must be ASSIGN or BUFFER, not ") +
                               std::string(op_name(s.op())));
      }
    }
  }
  std::deque<UOp> queue;
  for (const UOp& k : kernels)
    if (in_degree[k] == 0) queue.push_back(k);
  std::vector<ScheduleItem> items;
  while (!queue.empty()) {
    const UOp k = queue.front();
    queue.pop_front();
    ScheduleItem item{fix_kernel_ast(k), {}};
    if (!item.is_copy()) verify_kernel_ast(item.ast);
    for (const UOp& s : k.src()) item.bufs.push_back(buf_uop(s));
    items.push_back(std::move(item));
    for (const UOp& c : children[k])
      if (--in_degree[c] == 0) queue.push_back(c);
  }
  return items;
}

// After the schedule runs, an output is its buffer seen through its view (tinygrad's
// "remove all ASSIGNs, after scheduling, the tensors are just buffers").
UOp output_after_schedule(const UOp& out) {
  static const PatternMatcher remove_assign =
      merge_views() +
      PatternMatcher({
          {"assign-is-its-buffer", UPat(Ops::ASSIGN, {UPat::var("t"), UPat(Ops::KERNEL)}).allow_any_len(),
           [](const Match& m) { return uop_base(m["t"]); }},
      });
  return graph_rewrite(out, remove_assign);
}

}  // namespace

Schedule create_schedule(const std::vector<UOp>& outputs) {
  StCacheScope scope;
  const UOp sink = get_kernelize_sink(UOp::make(Ops::SINK, dtypes::void_, outputs));
  Schedule s;
  s.items = linearize(sink);
  for (const UOp& o : sink.src()) s.outputs.push_back(output_after_schedule(o));
  return s;
}

std::string kernel_text(const UOp& ast) { return print_uop(ast); }

}  // namespace tunebed
