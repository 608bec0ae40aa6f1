// The OpenCL C dialect, tinygrad's OpenCLRenderer: a __kernel whose arguments are the buffers
// (__global, in arg order) and then the int variables (sorted by name), the order the OpenCL
// runtime sets them. Work-group and work-item ids are get_group_id/get_local_id (get_global_id
// under NOLOCALS), local memory is __local, vectors are floatN with (floatN)(...) literals.
#include "core/codegen/render_cstyle.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

class OpenCLLanguage final : public CStyleLanguage {
 public:
  std::string name() const override { return "OpenCL C"; }

  std::string scalar_type(const DType& d) const override {
    switch (d.scalar) {
      case Scalar::Int8:
        return "char";
      case Scalar::UInt8:
        return "uchar";
      case Scalar::UInt16:
        return "ushort";
      case Scalar::UInt32:
        return "uint";
      case Scalar::Int64:
        return "long";
      case Scalar::UInt64:
        return "ulong";
      default:
        return CStyleLanguage::scalar_type(d);
    }
  }
  // OpenCL C forbids bool in kernel arguments; a bool buffer is bytes.
  std::string buffer_type(const DType& base) const override {
    return base.scalar == Scalar::Bool ? "uchar" : scalar_type(base);
  }
  std::string pointer_type(const DType& ptr, int width) const override {
    return std::string(ptr.addrspace == AddrSpace::Local ? "__local " : "__global ") +
           CStyleLanguage::pointer_type(ptr, width);
  }

  std::string nan(bool f64) const override { return f64 ? "((double)NAN)" : "NAN"; }
  std::string infinity(bool f64) const override { return f64 ? "((double)INFINITY)" : "INFINITY"; }
  std::string int64_suffix(bool is_unsigned) const override { return is_unsigned ? "ul" : "l"; }

  std::string vector_value(const DType& d, const std::vector<std::string>& lanes) const override {
    std::string e = "(" + vector_type(d) + ")(";
    for (size_t i = 0; i < lanes.size(); i++) e += (i ? "," : "") + lanes[i];
    return e + ")";
  }
  std::string lane(const std::string& x, const DType& vec, int64_t i) const override {
    (void)vec;
    return x + ".s" + "0123456789abcdef"[i];
  }

  // The built-in math functions are overloaded on float, double and half.
  std::string function(const std::string& fn, bool) const override { return fn; }
  std::string bitcast(const DType& to, const DType&, const std::string& x) const override {
    return "as_" + scalar_type(to) + "(" + x + ")";
  }

  std::string special(const std::string& id) const override {
    const std::string dim = id.substr(id.size() - 1);
    if (id.starts_with("gidx")) return "get_group_id(" + dim + ")";
    if (id.starts_with("lidx")) return "get_local_id(" + dim + ")";
    return "get_global_id(" + dim + ")";
  }
  std::string barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  std::string define_local(const std::string& type, const std::string& name, int64_t size) const override {
    // 16-byte aligned, so that float4 accesses at multiples of 4 are aligned too.
    return "__local " + type + " " + name + "[" + std::to_string(size) + "] __attribute__((aligned(16)));";
  }

  std::string kernel(const KernelParts& k) const override {
    std::string prelude;
    if (k.uses_half) prelude += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
    if (k.uses_double) prelude += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    std::string params;
    for (const auto& [arg, ptr] : k.globals)
      params += std::string(params.empty() ? "" : ", ") + "__global " + buffer_type(ptr.base()) +
                "* restrict data" + std::to_string(arg);
    for (const std::string& v : k.vars) params += std::string(params.empty() ? "" : ", ") + "const int " + v;
    return prelude + "__kernel void " + k.name + "(" + params + ") {\n" + k.body + "}\n";
  }
};

}  // namespace

const CStyleLanguage& codegen_detail::opencl_language() {
  static const OpenCLLanguage lang;
  return lang;
}

std::string render_opencl(const std::vector<UOp>& uops) { return render_cstyle(uops, opencl_language()); }

}  // namespace tunebed
