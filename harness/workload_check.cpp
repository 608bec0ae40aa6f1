#include "harness/workload_check.hpp"

#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"

namespace tunebed::cli {

WorkloadCheck check_workload(const Workload& w, const Schedule& schedule) {
  WorkloadCheck c{expect_output(schedule, w.output.buffers(), 0, kExactRunBudget), {}};
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

}  // namespace tunebed::cli
