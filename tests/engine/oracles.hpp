// Both oracles of a tensor graph's output, for the engine's tests: the schedule's exact run by the
// AST interpreter (values with derived error bounds, core/engine/check.hpp) and the Eigen
// reference, which evaluates the graph itself and must agree with that run too.
#pragma once

#include <string>

#include "core/engine/check.hpp"
#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"

namespace tunebed::testing {

// "" when OUT, the output of OUTPUT's graph on BUFFERS, is right by both oracles; else which
// disagrees and where.
inline std::string disagreement(const HostBuffer& out, const UOp& output, const BufferData& buffers) {
  const Expected want = expect_output(create_schedule({output}), buffers);
  const Verdict eigen = check_output(reference::to_host(reference::evaluate(output, buffers)), want);
  if (!eigen.ok) return "Eigen reference: " + eigen.message;
  const Verdict v = check_output(out, want);
  return v.ok ? "" : v.message;
}

}  // namespace tunebed::testing
