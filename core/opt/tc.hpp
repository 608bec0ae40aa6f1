// TensorCore: one matrix-multiply-accumulate instruction of a target, as tinygrad's opt/tc.py.
//
// D(M x N) = A(M x K) * B(K x N) + C(M x N), computed cooperatively by `threads` threads that
// each hold elements_per_thread of A, B and C/D. `opts` is the order in which the N (dim 0) and
// M (dim 1) axes are split by 2 into locals ("lx") and upcasts ("ux"); the K axis is unrolled
// log2(K) times by 2. `swizzle` says, for A and B, which of those local/upcast/reduce sub-axes
// feed which register lane. Only the descriptions live here: applying TC to a kernel and
// lowering it to WMMA is the GPU-backends issue (issue 11).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/ir/dtype.hpp"

namespace tunebed {

struct TensorCore {
  std::array<int, 3> dims;                 // N, M, K
  int threads;                             // threads that make up the warp
  std::array<int, 3> elements_per_thread;  // of A, B and C
  DType dtype_in, dtype_out;
  std::vector<std::string> opts;  // "u0" "l0" ...
  // (local, upcast, reduce) sub-axis names, for A and for B
  std::array<std::array<std::vector<std::string>, 3>, 2> swizzle;

  // "WMMA_8_16_16_float16_float32": tinygrad's str(tc), with tunebed's dtype names.
  std::string name() const;
};

// NVIDIA mma.sync shapes for sm_80 and later (tinygrad's cuda_sm80: 8x16x16 half/bf16 inputs,
// 8x16x8 half inputs), and for sm_75 (cuda_sm75: the 8x16x8 half ones).
const std::vector<TensorCore>& cuda_sm80_tensor_cores();
const std::vector<TensorCore>& cuda_sm75_tensor_cores();

}  // namespace tunebed
