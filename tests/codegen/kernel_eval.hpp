// The test oracle: a kernel AST evaluated directly, one whole array per node. Independent of the
// code under test: buffer positions come from ShapeTracker::buffer_positions (the views read
// directly, not their index UOps), arithmetic from exec_alu, and nothing of core/codegen is used.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed::testing {

// Runs every STORE of the kernel on `bufs` (DEFINE_GLOBAL order), with `vars` giving each
// DEFINE_VAR's value. Throws std::invalid_argument for what it cannot evaluate (local buffers).
void eval_kernel(const UOp& ast, std::vector<HostBuffer>& bufs,
                 const std::map<std::string, int32_t>& vars = {});

// The DEFINE_GLOBAL args the kernel stores to.
std::vector<int64_t> output_buffers(const UOp& ast);

// Seeded random contents: floats in [-2, 2], nonzero integers in [-8, 8] (a load may divide),
// unsigned in [1, 16], bools either way.
void fill_random(HostBuffer& b, std::mt19937& rng);

// "" when a and b agree (floats within a tolerance for the dtype, NaN equal to NaN; others
// exactly), else a message naming the first element that differs.
std::string compare_buffers(const HostBuffer& got, const HostBuffer& want);

}  // namespace tunebed::testing
