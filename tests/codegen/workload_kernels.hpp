// The workload library (core/tensor/workloads.hpp) as kernels for the device tests: every
// workload at a small size, scheduled, and each of its kernels checked on a device against the
// direct evaluator (kernel_eval.hpp) of the same kernel unoptimized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/codegen/executable.hpp"

namespace tunebed::testing {

struct LibraryKernel {
  std::string label;  // "softmax:M=4,...#1": the workload spec and the kernel's place in its schedule
  UOp ast;            // the kernel as the scheduler made it (no KernelInfo)
};

// Every kernel of every workload of the library at a small size (PoCL compiles slowly), in
// `dtype`. Throws when a workload has no small size here: a new workload must be added.
std::vector<LibraryKernel> library_kernels(DType dtype = dtypes::float32);

// The unoptimized form of a scheduled kernel: GLOBAL and REDUCE axes, the default name.
UOp no_opts(const UOp& ast);

// Compiles `optimized` for `device` (with `renderer`), runs it on seeded random inputs, and
// compares each output with the direct evaluation of `plain`: "" when they agree, else what
// failed (the refusal, the compile error, or the first wrong element, with the source).
std::string check_on_device(const UOp& optimized, const UOp& plain, const std::shared_ptr<Device>& device,
                            const Renderer& renderer, uint32_t seed);

// The opts of an optimized AST, as text ("LOCAL:0:4 GROUP:0:8").
std::string opts_text(const UOp& optimized);

}  // namespace tunebed::testing
