// The C dialect, tinygrad's ClangRenderer: one function in the CPU ABI of core/runtime/device.hpp,
//   void NAME(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores)
// with clang's vector extensions for float2/4/8. Self-contained: no #include, only clang
// builtins, so the source compiles on its own.
#include "core/codegen/render_cstyle.hpp"

#include <set>
#include "core/codegen/wmma.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

class CLanguage final : public CStyleLanguage {
 public:
  std::string name() const override { return "C"; }

  std::string scalar_type(const DType& d) const override {
    if (d.scalar == Scalar::Bool) return "_Bool";
    if (d.scalar == Scalar::Float16) return "__fp16";
    return CStyleLanguage::scalar_type(d);
  }

  std::string nan(bool f64) const override { return f64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")"; }
  std::string infinity(bool f64) const override { return f64 ? "__builtin_inf()" : "__builtin_inff()"; }

  std::string vector_value(const DType& d, const std::vector<std::string>& lanes) const override {
    std::string e = "(" + vector_type(d) + "){";
    for (size_t i = 0; i < lanes.size(); i++) e += (i ? "," : "") + lanes[i];
    return e + "}";
  }
  std::string vector_zero(const DType& d) const override { return "(" + vector_type(d) + "){0}"; }

  std::string function(const std::string& fn, bool f64) const override {
    return "__builtin_" + fn + (f64 ? "" : "f");
  }
  // The operand is cast to its own type first: clang 14 bit-casts a vector element (v[1]) as if
  // it were element 0; the cast makes it a plain scalar value.
  std::string bitcast(const DType& to, const DType& from, const std::string& x) const override {
    return "__builtin_bit_cast(" + scalar_type(to) + ",(" + scalar_type(from) + ")(" + x + "))";
  }
  bool reads_gated_loads_unconditionally() const override { return true; }
  std::string special(const std::string& id) const override {
    throw CodegenError("the C renderer's target has no launch id " + id + " (only core_id)");
  }

  std::string kernel(const KernelParts& k) const override {
    std::string prelude, head;
    // aligned(4): a vector access needs only the alignment of its floats.
    std::set<int> widths;  // float vectors only (has_vector), by width
    for (const DType& d : k.vector_types) widths.insert(d.count);
    for (int w : widths)
      prelude += "typedef float float" + std::to_string(w) + " __attribute__((aligned(4),vector_size(" +
                 std::to_string(4 * w) + ")));\n";
    for (const auto& [name, wmma] : k.wmmas) prelude += wmma_c_helper(wmma);
    for (const auto& [arg, ptr] : k.globals) {
      const std::string t = scalar_type(ptr.base()), i = std::to_string(arg);
      head += "  " + t + "* restrict data" + i + " = (" + t + "*)bufs[" + i + "];\n";
    }
    for (size_t i = 0; i < k.vars.size(); i++)
      head += "  const int " + k.vars[i] + " = vars[" + std::to_string(i) + "];\n";
    return prelude + "void " + k.name +
           "(void* const* bufs, const int* vars, int core_id, int num_cores) {\n" + head + k.body + "}\n";
  }
};

}  // namespace

const CStyleLanguage& codegen_detail::c_language() {
  static const CLanguage lang;
  return lang;
}

std::string render_c(const std::vector<UOp>& uops) { return render_cstyle(uops, c_language()); }

}  // namespace tunebed
