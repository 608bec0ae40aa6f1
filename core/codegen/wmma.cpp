// WMMA's arg, its accumulate rule and its call (wmma.hpp).
#include "core/codegen/wmma.hpp"

#include <algorithm>
#include <array>

#include "core/codegen/passes.hpp"

namespace tunebed::codegen_detail {

WmmaArg::WmmaArg(const UOp& wmma) {
  if (wmma.op() != Ops::WMMA) throw CodegenError("not a WMMA: " + std::string(op_name(wmma.op())));
  try {
    const ArgTuple& t = wmma.arg().as_tuple();
    name = t.at(0).as_string();
    const std::vector<int64_t> dims = t.at(1).as_ints();
    n = static_cast<int>(dims.at(0)), m = static_cast<int>(dims.at(1)), k = static_cast<int>(dims.at(2));
    dtype_in = t.at(2).as_dtype();
    dtype_out = t.at(3).as_dtype();
    device = t.at(4).as_string();
    threads = static_cast<int>(t.at(5).as_int());
  } catch (const std::exception& e) {
    throw CodegenError(
        std::string("WMMA arg is not (name, dims, dtype_in, dtype_out, device, threads, ...): ") + e.what());
  }
}

namespace {

// The lanes of each operand and of the result in one tensor-core WMMA: the product of the sizes
// of its sub-axes.
std::array<int64_t, 3> wmma_sizes(const UOp& wmma) {
  std::array<int64_t, 3> sizes{};
  const ArgTuple& parts = wmma.arg().as_tuple().at(6).as_tuple();
  for (size_t i = 0; i < 3; i++) {
    sizes[i] = 1;
    for (const Arg& axis : parts.at(i).as_tuple()) sizes[i] *= axis.as_tuple().at(1).as_int();
  }
  return sizes;
}

std::vector<int64_t> iota(int64_t from, int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; i++) out.push_back(from + i);
  return out;
}

// A value whose every lane is the constant 0 (a vector CONST, its lanes, a VECTORIZE of them).
bool all_zero(const UOp& u) {
  if (u.is_const()) return u.const_value() == 0;
  if (u.op() != Ops::VECTORIZE && u.op() != Ops::GEP) return false;
  return std::all_of(u.src().begin(), u.src().end(), all_zero);
}

}  // namespace

std::vector<int64_t> wmma_axes(const UOp& wmma) {
  std::vector<int64_t> axes = wmma.arg().as_tuple().at(7).as_ints();
  for (const Arg& part : wmma.arg().as_tuple().at(6).as_tuple())
    for (const Arg& axis : part.as_tuple()) axes.push_back(axis.as_tuple().at(0).as_int());
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::vector<UOp> split_wmma(const UOp& wmma) {
  const std::array<int64_t, 3> sizes = wmma_sizes(wmma);
  const int64_t copies = wmma.dtype().count / sizes[2];
  if (copies <= 1) return {wmma};
  std::vector<UOp> parts;
  for (int64_t i = 0; i < copies; i++) {
    std::vector<UOp> srcs;
    for (size_t s = 0; s < 3; s++) srcs.push_back(gep(wmma.src(s), iota(i * sizes[s], sizes[s])));
    parts.push_back(
        UOp::make(Ops::WMMA, wmma.dtype().scalar_type().vec(static_cast<int>(sizes[2])), srcs, wmma.arg()));
  }
  return parts;
}

UOp devectorize_wmma(const UOp& wmma) {
  const std::vector<UOp> parts = split_wmma(wmma);
  if (parts.size() == 1) {
    // A zero accumulator no add folded into: spelled as lanes, as the renderer writes vectors.
    const UOp& c = wmma.src(2);
    UOp zero = UOp::const_float(c.dtype().scalar_type(), 0.0);
    if (!all_zero(c) || c == broadcast(zero, c.dtype().count)) return {};
    return wmma.with_src({wmma.src(0), wmma.src(1), broadcast(zero, c.dtype().count)});
  }
  std::vector<UOp> lanes;
  for (const UOp& one : parts)
    for (int64_t j = 0; j < one.dtype().count; j++) lanes.push_back(gep(one, {j}));
  return vectorize(lanes);
}

UOp wmma_accumulate(const UOp& wmma, const UOp& acc) {
  if (wmma.dtype() != acc.dtype()) return {};
  const UOp& c = wmma.src(2);
  return UOp::make(Ops::WMMA, wmma.dtype(), {wmma.src(0), wmma.src(1), all_zero(c) ? acc : c + acc},
                   wmma.arg());
}

std::string wmma_call(const UOp& wmma, const std::vector<std::string>& operands) {
  if (operands.size() != 3) throw CodegenError("a WMMA takes three operands (a, b, c)");
  return "__" + WmmaArg(wmma).name + "(" + operands[0] + ", " + operands[1] + ", " + operands[2] + ")";
}

// The FMA is `row += a[i] * b` in one statement, so -ffp-contract=on makes it one vector FMA; the
// union gives each row of C as a vector of N lanes without shuffles, and after inlining the
// whole block lives in registers.
std::string wmma_c_helper(const UOp& wmma) {
  const WmmaArg w(wmma);
  if (w.threads != 1 || w.k != 1 || w.dtype_in != dtypes::float32 || w.dtype_out != dtypes::float32)
    throw CodegenError("the C renderer has no " + w.name +
                       ": only float32 register blocks (K 1, one thread)");
  const std::string a = "float" + std::to_string(w.m), b = "float" + std::to_string(w.n),
                    c = "float" + std::to_string(w.m * w.n);
  return "static inline __attribute__((always_inline)) " + c + " __" + w.name + "(" + a + " a, " + b +
         " b, " + c + " c) {\n  union { " + c + " all; " + b + " row[" + std::to_string(w.m) +
         "]; } acc = {c};\n  for (int i = 0; i < " + std::to_string(w.m) +
         "; i++) acc.row[i] += a[i] * b;\n  return acc.all;\n}\n";
}

}  // namespace tunebed::codegen_detail
