// CUDA's tensor cores compile: for each sm_80 tensor core, a half (or bfloat16) matmul gets the
// TC opt; the mma.sync helper of its WMMA, called from a small kernel, and the whole TC kernel as
// the CUDA renderer writes it go through NVRTC. Skipped, saying why, where libnvrtc is not
// installed. (Whether they compute the right numbers needs a GPU: scripts/gpu-check.)
#include <gtest/gtest.h>

#include "core/codegen/render_cstyle.hpp"
#include "core/codegen/wmma.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/cuda_device.hpp"
#include "tests/opt/matmul_ast.hpp"

namespace tunebed {
namespace {

using namespace codegen_detail;

// The struct the CUDA dialect's prelude declares for a vector CUDA does not have (half8, half4);
// half2, __nv_bfloat162 and float4 are CUDA's own.
std::string vector_struct(const CStyleLanguage& lang, const DType& vec) {
  if ((vec.scalar == Scalar::Float32 && vec.count <= 4) || vec.count == 2) return "";
  std::string fields;
  for (int i = 0; i < vec.count; i++) fields += std::string(i ? ", " : "") + "v" + std::to_string(i);
  return "struct __align__(" + std::to_string(vec.scalar_type().itemsize() * vec.count) + ") " +
         lang.vector_type(vec) + " { " + lang.scalar_type(vec.scalar_type()) + " " + fields + "; };\n";
}

UOp wmma_of(const UOp& ast) {
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::WMMA) return u;
  return {};
}

TEST(TensorCoreCuda, MmaSyncHelpersCompileWithNvrtc) {
  if (std::optional<std::string> why = nvrtc_unavailable_reason()) GTEST_SKIP() << *why;
  const Renderer cuda = Renderer::cuda(80);
  const CStyleLanguage& lang = cuda_language();
  for (int select = 0; select < static_cast<int>(cuda.tensor_cores.size()); select++) {
    const TensorCore& tc = cuda.tensor_cores[select];
    SCOPED_TRACE(tc.name());
    Kernel k(test::matmul_ast(64, 64, 64, tc.dtype_in, tc.dtype_out), cuda);
    k.apply_opt(Opt{OptOps::TC, 0, TCArg{select, 0, 1}});
    const UOp wmma = wmma_of(k.get_optimized_ast());
    ASSERT_TRUE(wmma);
    const std::string a = lang.vector_type(wmma.src(0).dtype()), b = lang.vector_type(wmma.src(1).dtype()),
                      c = lang.vector_type(wmma.dtype()), in = lang.scalar_type(tc.dtype_in),
                      out = lang.scalar_type(tc.dtype_out);
    std::string structs;
    for (const DType& d : {wmma.src(0).dtype(), wmma.src(1).dtype(), wmma.dtype()})
      if (structs.find(" " + lang.vector_type(d) + " {") == std::string::npos)
        structs += vector_struct(lang, d);
    const std::string source =
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n" + structs + wmma_cuda_prelude(wmma, lang) +
        "extern \"C\" __global__ void wmma_check(" + out + "* out, const " + in + "* a, const " + in +
        "* b) {\n  const int t = threadIdx.x;\n  ((" + c + "*)out)[t] = __" + tc.name() + "(((const " + a +
        "*)a)[t], ((const " + b + "*)b)[t], ((" + c + "*)out)[t]);\n}\n";
    EXPECT_NE(source.find("mma.sync.aligned.m16n8k" + std::to_string(tc.dims[2])), std::string::npos)
        << source;
    try {
      CudaBinary bin = nvrtc_compile(source, "wmma_check", "sm_80");
      EXPECT_NE(bin.ptx.find("mma.sync.aligned"), std::string::npos);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(TensorCoreCuda, TcKernelsRenderToCudaThatNvrtcCompiles) {
  if (std::optional<std::string> why = nvrtc_unavailable_reason()) GTEST_SKIP() << *why;
  const Renderer cuda = Renderer::cuda(80);
  for (int select = 0; select < static_cast<int>(cuda.tensor_cores.size()); select++) {
    const TensorCore& tc = cuda.tensor_cores[select];
    SCOPED_TRACE(tc.name());
    Kernel k(test::matmul_ast(64, 64, 64, tc.dtype_in, tc.dtype_out), cuda);
    k.apply_opt(Opt{OptOps::TC, 0, TCArg{select, 0, 1}});
    try {
      const ProgramSpec p = get_program(k.get_optimized_ast(), cuda);
      EXPECT_NE(p.source.find("__" + tc.name() + "("), std::string::npos) << p.source;
      nvrtc_compile(p.source, p.name, "sm_80");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

}  // namespace
}  // namespace tunebed
