#include "harness/workload_check.hpp"

#include <algorithm>
#include <thread>

#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed::cli {

WorkloadCheck check_workload(const Workload& w, const Schedule& schedule, int64_t max_iterations) {
  // The exact run on every core (in tune it shares them with the kernel's own: the same work).
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  WorkloadCheck c{expect_output(schedule, w.output.buffers(), 0, max_iterations, threads), {}};
  try {
    c.eigen =
        check_output(reference::to_host(reference::evaluate(w.output.uop(), w.output.buffers())), c.expected);
    if (!c.eigen.ok)
      c.eigen.message = "the Eigen reference disagrees with the scheduled kernels: " + c.eigen.message;
  } catch (const reference::ReferenceError& e) {
    c.eigen = {.ok = false, .message = std::string("the Eigen reference cannot evaluate it: ") + e.what()};
  }
  return c;
}

std::optional<std::string> eigen_disagreement(const std::string& spec, uint64_t seed, int64_t max_iterations) {
  const Workload w = make_workload(spec, seed);
  try {
    const WorkloadCheck c = check_workload(w, create_schedule({w.output.uop()}), max_iterations);
    return c.eigen.ok ? "" : c.eigen.message;
  } catch (const AstInterpreterError&) {
    return std::nullopt;
  }
}

std::optional<std::string> eigen_disagreement_on(const std::string& spec, const std::vector<HostBuffer>& buffers,
                                                 int output, const std::shared_future<Expected>& expected) {
  const Workload w = make_workload(spec);
  const Schedule schedule = create_schedule({w.output.uop()});
  if (schedule.items.size() != 1 || schedule.items[0].is_copy()) return std::nullopt;
  const ScheduleItem& kernel = schedule.items[0];
  if (kernel.bufs.size() != buffers.size() || static_cast<size_t>(output) >= buffers.size()) return std::nullopt;
  // The workload's output is the kernel's output buffer, or a reshape of it: the same elements
  // in the same order.
  const UOp& out = schedule.outputs.at(0);
  const UOp& stored = kernel.bufs[static_cast<size_t>(output)];
  const ShapeTracker* st = out.op() == Ops::VIEW ? out.arg().try_object<ShapeTracker>() : nullptr;
  if (out != stored && !(st && st->contiguous() && out.src(0) == stored)) return std::nullopt;
  BufferData inputs = w.output.buffers();
  for (size_t i = 0; i < buffers.size(); i++) {
    auto it = inputs.find(kernel.bufs[i].src(0).arg().as_int());  // keyed by the BUFFER's UNIQUE
    if (it == inputs.end()) continue;                             // the output, made by the kernel
    if (it->second->dtype != buffers[i].dtype || it->second->numel() != buffers[i].numel()) return std::nullopt;
    it->second = std::make_shared<HostBuffer>(buffers[i]);
  }
  HostBuffer eigen;
  try {
    eigen = reference::to_host(reference::evaluate(w.output.uop(), inputs));
  } catch (const reference::ReferenceError&) {
    return std::nullopt;
  }
  const Verdict v = check_output(eigen, expected.get());
  return v.ok ? "" : "the Eigen reference disagrees with the kernel: " + v.message;
}

}  // namespace tunebed::cli
