// The workload library (core/tensor/workloads.hpp) as kernels for the device tests: every
// workload at a small size, scheduled, and each of its kernels checked on a device against the
// AST interpreter's exact run (kernel_check.hpp) of the same kernel unoptimized.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/engine/compiled_program.hpp"

namespace tunebed::testing {

struct LibraryKernel {
  std::string label;  // "softmax:M=4,...#1": the workload spec and the kernel's place in its schedule
  UOp ast;            // the kernel as the scheduler made it (no KernelInfo)
};

// Every kernel of every workload of the library at a small size (PoCL compiles slowly), in
// `dtype`. Throws when a workload has no small size here: a new workload must be added.
std::vector<LibraryKernel> library_kernels(DType dtype = dtypes::float32);

// The kernels of the library's float workloads (those that list float16) built in `dtype`, which
// the library need not list: bfloat16, which it offers for no workload, but CUDA's tensor cores
// take. The same small sizes and the same labels ("matmul:M=16,...,dtype=bfloat16#0").
std::vector<LibraryKernel> library_float_kernels_in(DType dtype);

// The unoptimized form of a scheduled kernel: GLOBAL and REDUCE axes, the default name.
UOp no_opts(const UOp& ast);

// Compiles `optimized` for `device` (with `renderer`), runs it on seeded random inputs, and checks
// each output against the AST interpreter's exact run of `plain` (core/engine's check_output: the
// derived error bound of every element, whatever the dtype). "" when it is right, else what
// failed (the refusal, the compile error, or the first wrong element, with the source).
std::string check_on_device(const UOp& optimized, const UOp& plain, const std::shared_ptr<Device>& device,
                            const Renderer& renderer, uint32_t seed);

// The opts of an optimized AST, as text ("LOCAL:0:4 GROUP:0:8").
std::string opts_text(const UOp& optimized);

}  // namespace tunebed::testing
