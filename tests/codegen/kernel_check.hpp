// The codegen tests' oracle: the AST interpreter's exact run of the plain kernel (float64 values
// with derived error bounds, core/engine/check.hpp), which shares nothing with codegen. A compiled
// or lowered form of the kernel is right when every buffer it leaves lies within those bounds.
#pragma once

#include <string>
#include <vector>

#include "core/engine/check.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "tests/test_scale.hpp"

namespace tunebed::testing {

// About a second of the exact run (a tenth of it under the sanitizers, tests/test_scale.hpp): a
// larger kernel is checked on a sample of its output elements (every k-th, k odd; sample_stride),
// the rest counted unverified.
inline constexpr int64_t kTestRunBudget = scaled(int64_t{1} << 20);

// One buffer per DEFINE_GLOBAL of AST, of its dtype and size, filled by fill_random (buffer i of
// seed s draws from seed 1000 s + i).
inline std::vector<HostBuffer> random_buffers(const UOp& ast, uint64_t seed) {
  std::vector<HostBuffer> bufs;
  for (const auto& [dtype, n] : ast_buffer_specs(ast)) {
    bufs.emplace_back(dtype.is_void() ? dtypes::uint8 : dtype, std::max<int64_t>(n, 1));
    fill_random(bufs.back(), 1000 * seed + bufs.size() - 1);
  }
  return bufs;
}

// "" when GOT, the buffers a form of a kernel left, lies within WANT, its exact run on the same
// inputs (every buffer: an input the kernel must not write stays as it was); else the first
// buffer and element that is wrong.
inline std::string wrong_output(const std::vector<Expected>& want, const std::vector<HostBuffer>& got) {
  if (got.size() != want.size())
    return "the run left " + std::to_string(got.size()) + " buffers, not " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); i++)
    if (const Verdict v = check_output(got[i], want[i]); !v.ok) return "buffer " + std::to_string(i) + ": " + v.message;
  return "";
}

// The same against the exact run of PLAIN on INPUTS.
inline std::string wrong_output(const UOp& plain, const std::vector<HostBuffer>& inputs,
                                const std::vector<HostBuffer>& got, const VarVals& vars = {},
                                int64_t max_iterations = kTestRunBudget) {
  return wrong_output(expect_kernel_ast(plain, inputs, vars, max_iterations), got);
}

}  // namespace tunebed::testing
