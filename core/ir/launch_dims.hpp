// The shape of a kernel launch: what code generation computes for a program and a runtime
// launches it with. Here, below both, so that codegen (IR to text) need not link a runtime.
#pragma once

#include <array>
#include <cstdint>

namespace tunebed {

struct LaunchDims {
  std::array<int64_t, 3> global{1, 1, 1};  // work-groups (CPU: global[0] is num_cores)
  std::array<int64_t, 3> local{1, 1, 1};   // work-items per group
};

}  // namespace tunebed
