// Renderer: what a code-generation target can do, as far as the optimizer needs to know.
//
// tinygrad keeps these capabilities as class attributes of its renderers (renderer/__init__.py,
// renderer/cstyle.py); tunebed keeps them as one plain record per target, so that core/opt can
// ask them without depending on code generation. The values follow tinygrad's at the seed:
//
//             has_local has_shared shared_max global_max            local_max         tensor cores
//   cpu       no        (yes)      32768      none                  -                 tc.hpp's register blocks
//   opencl    yes       yes        32768      0x8FFFFFFF x3         0x8FFFFFFF x3     none
//   cuda      yes       yes        49152      (2^31-1, 65535, 65535) (1024, 1024, 64) tc.py's cuda_sm80
//
// Beyond tinygrad: `threads`, the cores the THREAD OptOp may split a CPU loop across (0 where
// the target has no thread pool), and `vector_widths`, the float vector widths the target
// renders natively (clang vector extensions on the CPU: float4 and float8).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/opt/tc.hpp"

namespace tunebed {

struct Renderer {
  std::string device;  // "CPU", "GPU" (OpenCL, tinygrad's name), "CUDA"
  bool supports_float4 = true;
  bool has_local = true;
  bool has_shared = true;
  // Per launch dimension (x, y, z); nullopt: no limit (the CPU has no launch grid).
  std::optional<std::array<int64_t, 3>> global_max =
      std::array<int64_t, 3>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::optional<std::array<int64_t, 3>> local_max =
      std::array<int64_t, 3>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  int64_t shared_max = 32768;  // bytes of shared (local) memory per workgroup
  int upcast_max = 16;         // the largest UPCAST amount
  int unroll_max = 32;         // the largest UNROLL amount
  std::vector<TensorCore> tensor_cores;
  std::vector<int> vector_widths;  // native float vector widths, e.g. {4, 8}
  int threads = 0;                 // cores for THREAD; 0: THREAD is not available

  static Renderer cpu(int cores);  // cores >= 1
  static Renderer cpu();           // with the cores of this machine
  static Renderer opencl();
  static Renderer cuda(int sm = 80);  // sm: compute capability x10 (75, 80, 89, ...)

  // "cpu", "opencl" or "cuda" (tunebed's --device names); throws std::invalid_argument otherwise.
  static Renderer for_device(std::string_view name);
};

}  // namespace tunebed
