// The C-style renderer core, tinygrad's renderer/cstyle.py (CStyleLanguage): one walk over a
// linearized kernel that prints C statements, shared by the three dialects tunebed renders:
//
//                C (render_c.cpp)         OpenCL C (render_opencl.cpp)   CUDA C (render_cuda.cpp)
//   function     CPU ABI, bufs[]/vars[]   __kernel, __global params      extern "C" __global__
//   ids          core_id                  get_group_id / get_local_id    blockIdx / threadIdx
//   local memory -                        __local                        __shared__
//   barrier      -                        barrier(CLK_LOCAL_MEM_FENCE)   __syncthreads()
//   float4       clang vector extension   (float4)(a,b,c,d)              make_float4(a,b,c,d)
//   half         __fp16                   half (cl_khr_fp16)             half (cuda_fp16.h)
//
// Values get a variable when they have to (loads, and anything used twice) and are written
// inline otherwise; constants and addresses are always inline. A variable's name says what made
// it (data, ridx, val, alu, acc, cast), numbered in order, so the same list prints the same text.
// A dialect is a CStyleLanguage: the spelling of types, constants, ids, vector values, math
// functions and the function around the body.
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/codegen/codegen.hpp"

namespace tunebed::codegen_detail {

// What the body of a kernel used, for the dialect's prelude and signature.
struct KernelParts {
  std::string name;                                // the function name (to_function_name)
  std::vector<std::pair<int64_t, DType>> globals;  // DEFINE_GLOBALs: arg and pointer dtype, by arg
  std::vector<std::string> vars;                   // DEFINE_VAR names, sorted (the vars[] order)
  std::vector<DType> vector_types;                 // vector dtypes used, in order of first use
  bool uses_half = false, uses_double = false, uses_bfloat16 = false;
  std::map<std::string, UOp> wmmas;         // the WMMAs called, by name: each needs its helper (wmma.hpp)
  std::array<sint, 3> local_size{1, 1, 1};  // the work-group (CUDA's __launch_bounds__)
  std::string body;                         // the statements, indented for the function
};

class CStyleLanguage {
 public:
  virtual ~CStyleLanguage() = default;
  virtual std::string name() const = 0;  // "C", "OpenCL C", "CUDA C": for error messages

  // Types. scalar_type is the C spelling; a dialect overrides what it spells differently.
  virtual std::string scalar_type(const DType& d) const;
  // Which vector dtypes the dialect has (float32 ones unless it says more).
  virtual bool has_vector(const DType& d) const { return d.scalar == Scalar::Float32; }
  virtual std::string vector_type(const DType& d) const {
    return scalar_type(d.scalar_type()) + std::to_string(d.count);
  }
  // The element type of a global buffer (OpenCL has no bool buffers: uchar).
  virtual std::string buffer_type(const DType& base) const { return scalar_type(base); }
  // The pointer type that reads `width` elements of `ptr` at once ("__global float4*").
  virtual std::string pointer_type(const DType& ptr, int width) const;

  // Values.
  virtual std::string nan(bool f64) const = 0;
  virtual std::string infinity(bool f64) const = 0;
  virtual std::string int64_suffix(bool is_unsigned) const { return is_unsigned ? "ull" : "ll"; }
  virtual std::string vector_value(const DType& d, const std::vector<std::string>& lanes) const = 0;
  virtual std::string vector_zero(const DType& d) const;
  virtual std::string lane(const std::string& x, const DType& vec, int64_t i) const {
    (void)vec;
    return x + "[" + std::to_string(i) + "]";
  }

  // Arithmetic. 16-bit floats compute in float: an operand is widened, the result rounded back.
  virtual std::string widen(const std::string& x, const DType& d) const {
    (void)d;
    return x;
  }
  virtual std::string round_to(const std::string& e, const DType& d) const;
  virtual std::string function(const std::string& fn, bool f64) const = 0;  // "sqrt" -> its spelling
  virtual std::string cast(const DType& to, const DType& from, const std::string& x) const;
  virtual std::string bitcast(const DType& to, const DType& from, const std::string& x) const = 0;

  // Whether a gated load reads unconditionally, at index 0 when the gate is off, and then selects:
  // for a CPU, where a branch per gated load (PADTO, padded convolutions) costs more than a read,
  // and where clang -O2 took over 15 min on one 224-way upcast kernel of 4,000 conditional loads
  // (9 s read unconditionally). GPUs predicate the load and keep the conditional form.
  virtual bool reads_gated_loads_unconditionally() const { return false; }

  // GPU parts: what a SPECIAL id reads, the barrier, a local buffer's declaration.
  virtual std::string special(const std::string& id) const = 0;
  virtual std::string barrier() const;
  virtual std::string define_local(const std::string& type, const std::string& name, int64_t size) const;

  // The whole source: prelude, signature, body.
  virtual std::string kernel(const KernelParts& parts) const = 0;

  // Constants and ALU ops in this dialect (shared, through the hooks above).
  std::string constant(const UOp& c) const;
  std::string alu(Ops op, const DType& d, const std::vector<std::string>& a,
                  const std::vector<DType>& src_dtypes) const;
};

// Renders a linearized kernel (ending with its SINK) in the dialect `lang`; `local_size` is the
// work-group the kernel is launched with (1s on the CPU).
std::string render_cstyle(const std::vector<UOp>& uops, const CStyleLanguage& lang,
                          const std::array<sint, 3>& local_size = {1, 1, 1});

// The three dialects.
const CStyleLanguage& c_language();
const CStyleLanguage& opencl_language();
const CStyleLanguage& cuda_language();

}  // namespace tunebed::codegen_detail
