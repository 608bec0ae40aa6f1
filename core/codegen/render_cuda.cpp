// The CUDA C dialect, tinygrad's CUDARenderer: an extern "C" __global__ function whose
// parameters are the buffers (in arg order) and then the int variables (sorted by name), the
// order cuLaunchKernel passes them, with __launch_bounds__ of its work-group. Ids are blockIdx
// and threadIdx, local memory is __shared__, vectors are CUDA's float4 built by make_float4.
// 16-bit floats are cuda_fp16.h's half and cuda_bf16.h's __nv_bfloat16; arithmetic on them
// widens each operand to float and rounds each result back, as the C renderer's __fp16 does.
#include "core/codegen/render_cstyle.hpp"
#include "core/codegen/wmma.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

bool is_16bit_float(const DType& d) { return d.scalar == Scalar::Float16 || d.scalar == Scalar::BFloat16; }

constexpr const char* kLaneNames = "xyzwabcdefghijkl";

// float2..4, and cuda_fp16.h's half2 (with make_half2)
bool is_builtin_vector(const DType& d) {
  return (d.scalar == Scalar::Float32 && d.count <= 4) || (d.scalar == Scalar::Float16 && d.count == 2);
}

class CudaLanguage final : public CStyleLanguage {
 public:
  std::string name() const override { return "CUDA C"; }

  std::string scalar_type(const DType& d) const override {
    return d.scalar == Scalar::BFloat16 ? "__nv_bfloat16" : CStyleLanguage::scalar_type(d);
  }

  // float2/3/4 are CUDA's own; other vectors (half8, float8, ...) are structs made here, as
  // tinygrad's render_vector_prefix.
  bool has_vector(const DType& d) const override {
    return d.count <= 16 && (d.scalar == Scalar::Float32 || is_16bit_float(d));
  }
  std::string vector_type(const DType& d) const override {
    const std::string base = d.scalar == Scalar::BFloat16 ? "bf16_" : scalar_type(d.scalar_type());
    return base + std::to_string(d.count);
  }

  std::string nan(bool f64) const override {
    return f64 ? "__longlong_as_double(0x7ff8000000000000ll)" : "__int_as_float(0x7fc00000)";
  }
  std::string infinity(bool f64) const override {
    return f64 ? "__longlong_as_double(0x7ff0000000000000ll)" : "__int_as_float(0x7f800000)";
  }

  std::string vector_value(const DType& d, const std::vector<std::string>& lanes) const override {
    std::string e = "make_" + vector_type(d) + "(";
    for (size_t i = 0; i < lanes.size(); i++) e += (i ? "," : "") + lanes[i];
    return e + ")";
  }
  std::string lane(const std::string& x, const DType& vec, int64_t i) const override {
    (void)vec;
    return x + "." + kLaneNames[i];
  }

  std::string widen(const std::string& x, const DType& d) const override {
    if (d.scalar == Scalar::Float16) return "__half2float(" + x + ")";
    if (d.scalar == Scalar::BFloat16) return "__bfloat162float(" + x + ")";
    return x;
  }
  std::string round_to(const std::string& e, const DType& d) const override {
    if (d.scalar == Scalar::Float16) return "__float2half(" + e + ")";
    if (d.scalar == Scalar::BFloat16) return "__float2bfloat16(" + e + ")";
    return e;
  }
  std::string cast(const DType& to, const DType& from, const std::string& x) const override {
    if (is_16bit_float(to)) return round_to("((float)" + widen(x, from) + ")", to);
    return CStyleLanguage::cast(to, from, widen(x, from));
  }
  std::string function(const std::string& fn, bool f64) const override { return f64 ? fn : fn + "f"; }
  std::string bitcast(const DType& to, const DType&, const std::string& x) const override {
    return "tg_bitcast<" + scalar_type(to) + ">(" + x + ")";
  }

  std::string special(const std::string& id) const override {
    const std::string xyz(1, "xyz"[id.back() - '0']);
    if (id.starts_with("gidx")) return "blockIdx." + xyz;
    if (id.starts_with("lidx")) return "threadIdx." + xyz;
    return "(blockIdx." + xyz + "*blockDim." + xyz + "+threadIdx." + xyz + ")";
  }
  std::string barrier() const override { return "__syncthreads();"; }
  std::string define_local(const std::string& type, const std::string& name, int64_t size) const override {
    return "__shared__ __align__(16) " + type + " " + name + "[" + std::to_string(size) + "];";
  }

  std::string kernel(const KernelParts& k) const override {
    std::string prelude;
    if (k.uses_half) prelude += "#include <cuda_fp16.h>\n";
    if (k.uses_bfloat16) prelude += "#include <cuda_bf16.h>\n";
    for (const DType& d : k.vector_types) {
      if (is_builtin_vector(d)) continue;
      const std::string vec = vector_type(d), scalar = scalar_type(d.scalar_type());
      std::string fields, params, values;
      for (int i = 0; i < d.count; i++) {
        const std::string f(1, kLaneNames[i]);
        fields += (i ? ", " : "") + f;
        params += (i ? ", " : "") + scalar + " " + f;
      }
      const int align = d.itemsize() & -d.itemsize();  // a power of two: half3 aligns to 2
      prelude += "struct __align__(" + std::to_string(align) + ") " + vec + " { " + scalar + " " + fields +
                 "; };\n__device__ __forceinline__ " + vec + " make_" + vec + "(" + params + ") { " + vec +
                 " r = {" + fields + "}; return r; }\n";
    }
    prelude +=
        "template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) {\n"
        "  union { F f; T t; } u;\n  u.f = v;\n  return u.t;\n}\n";
    for (const auto& [name, wmma] : k.wmmas) prelude += wmma_cuda_prelude(wmma, *this);
    std::string params;
    for (const auto& [arg, ptr] : k.globals)
      params += std::string(params.empty() ? "" : ", ") + buffer_type(ptr.base()) + "* __restrict__ data" +
                std::to_string(arg);
    for (const std::string& v : k.vars) params += std::string(params.empty() ? "" : ", ") + "const int " + v;
    std::string bounds;
    int64_t threads = 1;
    bool known = true;
    for (const sint& s : k.local_size) {
      known = known && s.is_int();
      if (s.is_int()) threads *= s.to_int();
    }
    if (known) bounds = "__launch_bounds__(" + std::to_string(threads) + ") ";
    return prelude + "extern \"C\" __global__ void " + bounds + k.name + "(" + params + ") {\n" + k.body +
           "}\n";
  }
};

}  // namespace

const CStyleLanguage& codegen_detail::cuda_language() {
  static const CudaLanguage lang;
  return lang;
}

std::string render_cuda(const std::vector<UOp>& uops, const std::array<sint, 3>& local_size) {
  return render_cstyle(uops, cuda_language(), local_size);
}

}  // namespace tunebed
