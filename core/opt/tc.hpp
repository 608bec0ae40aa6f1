// TensorCore: one matrix-multiply-accumulate instruction of a target, as tinygrad's opt/tc.py.
//
// D(M x N) = A(M x K) * B(K x N) + C(M x N), computed cooperatively by `threads` threads that
// each hold elements_per_thread of A, B and C/D. `opts` is the order in which the N (dim 0) and
// M (dim 1) axes are split by 2 into locals ("lx") and upcasts ("ux"); the K axis is unrolled
// log2(K) times by 2. After those splits the kernel's shape names each 2-sized sub-axis by its
// shape_str ("l0", "u1", "r2"); `swizzle` says, for A and for B, which of them feeds which
// register lane: the operand's view is permuted so that sub-axis "u0" of the list reads what the
// named sub-axis held. The WMMA then CONTRACTs the last upcast/unroll sub-axes into its operand
// vectors (base_upcast_axes).
//
// ## The CPU tensor core
//
// tunebed's CPU target has no matrix instruction, but a register block is one: with K = 1 and
// threads = 1 the "instruction" is the outer product C[m][n] += A[m] * B[n] of an M-vector of A
// (a column strip) and an N-vector of B (a row strip), which the C renderer emits as N/16-wide
// vector FMAs on M*N/16 accumulator registers (core/codegen/wmma.cpp). Its opts upcast N
// ("u0", log2 N times) and then M ("u1", log2 M times), so u0.. are the N bits, lowest first,
// and the M bits follow. A reads M bits naturally; B's swizzle moves its N bits onto the
// highest upcast positions, the ones its CONTRACT takes (tinygrad's AMX layout, generalised).
#pragma once

#include <array>
#include <optional>
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
  // The K axis as log2(K) unrolls by 2 (tinygrad's get_reduce_axes: (i, 2) pairs; the sizes).
  int reduce_axes() const;
  int upcast_axes() const;  // opts that upcast
  int local_axes() const;   // opts that localise
  // "u1", "u0", "r1", "r0", ...: the sub-axes the WMMA contracts, operand lanes slowest first.
  std::vector<std::string> base_upcast_axes() const;
  // For A and B: the permutation of the kernel's axes (given as shape_str) that puts each operand's
  // swizzled sub-axes where the WMMA reads them.
  std::array<std::vector<int64_t>, 2> permutes_for_shape_str(const std::vector<std::string>& shape_str) const;
  // tinygrad's __post_init__ checks; throws std::logic_error naming the one that fails.
  void check() const;
};

// Where the TC's N, M and K axes are in the kernel after the TC opt (tinygrad's
// TensorCoreOptions). An axis that a later opt removes (split to size 1) stops existing.
struct TensorCoreOptions {
  std::array<int, 3> axes{};                   // N, M, K
  std::array<bool, 2> axes_exist{true, true};  // N and M are still in the shape
  std::vector<std::pair<int, int>> axis_pads;  // (axis, tc dim) that PADTO must round up
  // The axis `removed` was dropped from the shape: renumber N and M.
  void fix_axes(int removed);
  bool operator==(const TensorCoreOptions&) const = default;
};

// NVIDIA mma.sync shapes for sm_80 and later (tinygrad's cuda_sm80: 8x16x16 half/bf16 inputs,
// 8x16x8 half inputs), and for sm_75 (cuda_sm75: the 8x16x8 half ones).
const std::vector<TensorCore>& cuda_sm80_tensor_cores();
const std::vector<TensorCore>& cuda_sm75_tensor_cores();

// The CPU's register-block tensor cores, float32 in and out: 32x8 (16 zmm accumulators on
// AVX-512), then 16x4 for what 32x8 does not divide.
const std::vector<TensorCore>& cpu_tensor_cores();

}  // namespace tunebed
