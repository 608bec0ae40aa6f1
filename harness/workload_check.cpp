#include "harness/workload_check.hpp"

#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"

namespace tunebed::cli {

WorkloadCheck check_workload(const Workload& w, const Schedule& schedule, int64_t max_iterations) {
  WorkloadCheck c{expect_output(schedule, w.output.buffers(), 0, max_iterations), {}};
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

}  // namespace tunebed::cli
