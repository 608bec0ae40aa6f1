// The scheduler's half of the independent check: a workload's schedule, run exactly by the AST
// interpreter (core/schedule: exact values with error bounds), against the Eigen reference that
// evaluates the tensor graph itself (core/reference). The tuner checks each root kernel against
// the AST interpreter (search/tune.hpp, step 1); together the two checks tie a compiled kernel to
// an oracle that shares no code with the scheduler, the optimizer or codegen.
#pragma once

#include "core/engine/check.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed::cli {

struct WorkloadCheck {
  Expected expected;  // what a correct run of the schedule leaves in the output
  Verdict eigen;      // the Eigen reference's output against it
};

// W's SCHEDULE (of w.output) run exactly on W's inputs, and the Eigen reference checked against it.
// Throws AstInterpreterError for a schedule the exact run cannot take (an earlier kernel past
// kExactRunBudget).
WorkloadCheck check_workload(const Workload& w, const Schedule& schedule);

}  // namespace tunebed::cli
