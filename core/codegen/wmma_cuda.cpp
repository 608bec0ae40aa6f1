// The CUDA helper of a WMMA: mma.sync in inline PTX, as tinygrad's CUDARenderer writes it.
//
// mma.sync.aligned.m{M}n{N}k{K}.row.col takes each operand as 32-bit registers: a thread's A
// fragment (8 halves for m16n8k16: 4 registers), its B fragment (2 registers) and its C/D
// fragment (4 floats, or 4 halves in 2 registers), D written over C. The helper reinterprets the
// operand vectors as ints, which is how the fragments are laid out, and returns D. The vector
// types it takes (half8, half4, float4) are the CUDA dialect's: its prelude defines them.
#include "core/codegen/render_cstyle.hpp"
#include "core/codegen/wmma.hpp"

namespace tunebed::codegen_detail {

namespace {

std::string ptx_type(const DType& d) {
  if (d == dtypes::float16) return "f16";
  if (d == dtypes::bfloat16) return "bf16";
  if (d == dtypes::float32) return "f32";
  throw CodegenError("mma.sync has no " + to_string(d) + " operands");
}

std::string registers(int from, int count) {
  std::string s = "{";
  for (int i = 0; i < count; i++) s += std::string(i ? ", " : "") + "%" + std::to_string(from + i);
  return s + "}";
}

}  // namespace

std::string wmma_cuda_prelude(const UOp& wmma, const CStyleLanguage& lang) {
  const WmmaArg w(wmma);
  if (w.threads != 32) throw CodegenError(w.name + " is not a warp-wide mma.sync (32 threads)");
  const std::array<DType, 3> vecs = {wmma.src(0).dtype(), wmma.src(1).dtype(), wmma.dtype()};
  std::array<int, 3> regs{};  // 32-bit registers per operand fragment
  for (int i = 0; i < 3; i++) {
    if ((vecs[i].scalar_type().itemsize() * vecs[i].count) % 4 != 0)
      throw CodegenError(w.name + ": operand " + std::to_string(i) + " does not fill whole registers");
    regs[i] = static_cast<int>(vecs[i].scalar_type().itemsize() * vecs[i].count / 4);
  }
  std::string out;
  const std::string a = lang.vector_type(vecs[0]), b = lang.vector_type(vecs[1]),
                    c = lang.vector_type(vecs[2]);
  std::string constraints_out, constraints_in;
  for (int i = 0; i < regs[2]; i++)
    constraints_out += std::string(i ? ", " : "") + "\"+r\"(c_pk[" + std::to_string(i) + "])";
  for (int i = 0; i < regs[0]; i++)
    constraints_in += std::string(i ? ", " : "") + "\"r\"(a_pk[" + std::to_string(i) + "])";
  for (int i = 0; i < regs[1]; i++) constraints_in += ", \"r\"(b_pk[" + std::to_string(i) + "])";
  const std::string shape = "m" + std::to_string(w.m) + "n" + std::to_string(w.n) + "k" + std::to_string(w.k);
  const std::string types = ptx_type(w.dtype_out) + "." + ptx_type(w.dtype_in) + "." + ptx_type(w.dtype_in) +
                            "." + ptx_type(w.dtype_out);
  out += "__device__ __forceinline__ " + c + " __" + w.name + "(" + a + " a, " + b + " b, " + c + " c) {\n" +
         "  int *a_pk = (int *)(&a), *b_pk = (int *)(&b), *c_pk = (int *)(&c);\n" +
         "  asm(\"mma.sync.aligned." + shape + ".row.col." + types + " " + registers(0, regs[2]) + ", " +
         registers(regs[2], regs[0]) + ", " + registers(regs[2] + regs[0], regs[1]) + ", " +
         registers(0, regs[2]) + ";\"\n      : " + constraints_out + "\n      : " + constraints_in +
         ");\n  return c;\n}\n";
  return out;
}

}  // namespace tunebed::codegen_detail
