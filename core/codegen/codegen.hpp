// Code generation: from an optimized kernel AST to one self-contained C function, as tinygrad's
// codegen/ (full_rewrite) and renderer/cstyle.py (ClangRenderer).
//
// full_rewrite runs these passes in order, each one PatternMatcher table (tinygrad's names) run by
// graph_rewrite; get_program then renders the list.
//
//   lowerer          every VIEW becomes index arithmetic: a LOAD/STORE through VIEW(buf) becomes
//                    one through INDEX(buf, idx[, valid]) over the kernel's loop variables. A
//                    GLOBAL/LOOP/REDUCE axis is a RANGE, an UPCAST/UNROLL axis an UNROLL of its
//                    lane numbers, a THREAD axis the core id (SPECIAL). A REDUCE_AXIS becomes a
//                    REDUCE over its ranges, CONTRACTing its unrolled axes into a vector.
//   initial symbolic simplify the index arithmetic (core/symbolic) and GEP/VECTORIZE forms;
//                    decompose what the target has no instruction for (THREEFRY).
//   expander         UNROLL and CONTRACT disappear: an op with UNROLLed sources becomes one op on
//                    vectors, wrapped in an UNROLL that names the lanes; a CONTRACT picks lanes.
//   remove_reduce    REDUCE becomes an accumulator (DEFINE_REG): set to the identity before its
//                    loops, updated inside them, read after them. Vector REDUCEs split per lane.
//   devectorize      what the target cannot do on vectors goes scalar: every ALU (clang's SLP
//                    vectorizer rebuilds vector math from the scalar code), and every LOAD/STORE
//                    that is not a contiguous float run of a width in Renderer::vector_widths.
//   final rewrite    the forms the C renderer prints (pm_render).
//   linearize        the graph as an ordered list with RANGE ... ENDRANGE around loop bodies.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/codegen/kernel_ast.hpp"
#include "core/opt/renderer.hpp"

namespace tunebed {

// A code generation failure: an AST codegen does not handle (naming what), or a pass that left a
// form the next one cannot take. Bad input, never a crash.
class CodegenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The SINK's KernelInfo; throws CodegenError when its arg is not one.
KernelInfo kernel_info(const UOp& sink);

// The passes above, up to and not including linearize: the rendered-ready SINK. The Renderer is
// core/opt's record of the target (Renderer::cpu for the C renderer).
UOp full_rewrite_to_sink(const UOp& ast, const Renderer& renderer = Renderer::cpu(1));

// The passes and linearize: the kernel as an ordered list of UOps, ending with its SINK.
std::vector<UOp> full_rewrite(const UOp& ast, const Renderer& renderer = Renderer::cpu(1));

// The ordered list (RANGE before its body, ENDRANGE after it) of a rendered-ready SINK.
std::vector<UOp> linearize(const UOp& sink);

// The C source of a linearized kernel: one function in the CPU ABI of core/runtime/device.hpp,
//   void NAME(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores)
// named by the SINK's KernelInfo (through to_function_name). Deterministic: the same list
// renders to the same text.
std::string render_c(const std::vector<UOp>& uops);

// Everything a runtime needs to run a kernel (tinygrad's ProgramSpec).
struct ProgramSpec {
  std::string name, source;
  std::vector<UOp> uops;
  std::vector<DType> globals;  // the DEFINE_GLOBAL pointer dtypes, in arg order (bufs[i])
  std::vector<UOp> vars;       // the DEFINE_VARs, sorted by name (vars[i])
  int64_t num_cores = 1;       // the THREAD axis's size, else 1 (the CPU launch's global[0])
};

ProgramSpec get_program(const UOp& ast, const Renderer& renderer = Renderer::cpu(1));

}  // namespace tunebed
