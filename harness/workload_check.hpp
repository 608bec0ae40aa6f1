// The scheduler's half of the independent check: a workload's schedule, run exactly by the AST
// interpreter (core/schedule: exact values with error bounds), against the Eigen reference that
// evaluates the tensor graph itself (core/reference). The tuner checks each root kernel against
// the AST interpreter (search/tune.hpp, step 1); together the two checks tie a compiled kernel to
// an oracle that shares no code with the scheduler, the optimizer or codegen.
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>

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
// Each kernel's exact run is sampled past MAX_ITERATIONS (expect_kernel_ast). Throws
// AstInterpreterError for a schedule the exact run cannot take (an earlier kernel past the budget).
WorkloadCheck check_workload(const Workload& w, const Schedule& schedule, int64_t max_iterations = kExactRunBudget);

// The Eigen half of the tuner's independent check for the workload SPEC (inputs from SEED): "" when
// the Eigen reference agrees with the schedule's exact run, else why not; nullopt when the exact
// run cannot take the schedule (its kernels are then checked one by one only).
std::optional<std::string> eigen_disagreement(const std::string& spec, uint64_t seed, int64_t max_iterations);

// The same check for a workload that is one kernel, on that kernel's own BUFFERS (by
// DEFINE_GLOBAL) and their exact run's EXPECTED output (buffer OUTPUT), waited for once the
// Eigen reference, which takes the buffers as the workload's inputs, is done: no exact run of its
// own. "" when they agree, else why not; nullopt when SPEC is not one kernel whose output buffer
// is the workload's output as it is (or the reference cannot take these inputs): then only
// eigen_disagreement can check it.
std::optional<std::string> eigen_disagreement_on(const std::string& spec, const std::vector<HostBuffer>& buffers,
                                                 int output, const std::shared_future<Expected>& expected);

}  // namespace tunebed::cli
