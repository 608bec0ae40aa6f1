// WMMA: a tensor core's matrix multiply-accumulate in code generation (tinygrad's Ops.WMMA).
//
// core/opt's TC opt leaves the reduce of a matmul as
//   REDUCE_AXIS(ADD, K)  UNROLL(WMMA(CONTRACT(A), CONTRACT(B), 0), C's sub-axes)
// with the arg (name, dims (N, M, K), dtype_in, dtype_out, device, threads,
// (A's, B's, C's contracted sub-axes), the TC's reduce axes). The passes carry it through:
//   lowerer    its operands are indexed like any load; the CONTRACTs name kernel axes already
//   expander   the CONTRACTs make its operands vectors, the UNROLL spreads its result over C's
//              sub-axes, the REDUCE of it becomes one vector REDUCE
//   pm_reduce  that REDUCE keeps one vector accumulator per WMMA of the tensor core's size (more
//              upcasts make the expander's WMMA several), and acc + WMMA(a, b, 0) folds into
//              WMMA(a, b, acc) (wmma_accumulate: tinygrad's "tensor core built in accumulate")
//   render     a call of a helper function per WMMA name, defined before the kernel
// Internal to core/codegen.
#pragma once

#include <string>
#include <vector>

#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed::codegen_detail {

// WMMA's arg, read back.
struct WmmaArg {
  std::string name;  // "WMMA_32_8_1_float32_float32"
  int n, m, k;
  DType dtype_in, dtype_out;
  std::string device;
  int threads;
  explicit WmmaArg(const UOp& wmma);
};

// The kernel axes a WMMA works across: the sub-axes of its operands and result, its reduce axes.
std::vector<int64_t> wmma_axes(const UOp& wmma);

// A WMMA the expander made n times wider (more upcasts than the tensor core's) as the n WMMAs of
// the tensor core's size it stands for, in lane order; {wmma} when it is one.
std::vector<UOp> split_wmma(const UOp& wmma);

// A WMMA as the renderer takes it: one the expander made n times wider (more upcasts than the
// tensor core's) becomes n WMMAs of the tensor core's size, its lanes concatenated (tinygrad's
// no_vectorized_wmma), and a constant zero accumulator becomes a VECTORIZE of zeros. Null when
// it already is.
UOp devectorize_wmma(const UOp& wmma);

// acc + WMMA(a, b, c) -> WMMA(a, b, c + acc), and WMMA(a, b, 0) + acc -> WMMA(a, b, acc).
UOp wmma_accumulate(const UOp& wmma, const UOp& acc);

// The call of a WMMA in C-style source: "__WMMA_32_8_1_float32_float32(a, b, c)".
std::string wmma_call(const UOp& wmma, const std::vector<std::string>& operands);

class CStyleLanguage;

// The CUDA helper for an mma.sync WMMA (wmma_cuda.cpp): m16n8k16 and m16n8k8, half or bfloat16
// in, float or half out, in inline PTX. `lang` spells the operand vector types, which must be
// defined before it (the CUDA dialect's prelude defines every vector type a kernel uses).
std::string wmma_cuda_prelude(const UOp& wmma, const CStyleLanguage& lang);

// The C helper for a CPU register-block WMMA (threads 1, K 1): C[m][n] += A[m] * B[n], one vector
// FMA per row of C and N/16 zmm-sized pieces. Needs the floatN typedefs of its three dtypes.
std::string wmma_c_helper(const UOp& wmma);

}  // namespace tunebed::codegen_detail
