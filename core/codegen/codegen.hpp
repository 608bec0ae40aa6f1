// Code generation: from an optimized kernel AST to one self-contained kernel in C (the CPU),
// OpenCL C or CUDA C, as tinygrad's codegen/ (full_rewrite) and renderer/cstyle.py.
//
// full_rewrite runs these passes in order, each one PatternMatcher table (tinygrad's names) run by
// graph_rewrite; get_program then renders the list.
//
//   lowerer          every VIEW becomes index arithmetic: a LOAD/STORE through VIEW(buf) becomes
//                    one through INDEX(buf, idx[, valid]) over the kernel's loop variables. A
//                    GLOBAL/LOOP/REDUCE axis is a RANGE, an UPCAST/UNROLL axis an UNROLL of its
//                    lane numbers, a THREAD axis the core id (SPECIAL). A REDUCE_AXIS becomes a
//                    REDUCE over its ranges, CONTRACTing its unrolled axes into a vector. On a GPU
//                    (Renderer::has_local) GLOBAL axes are work-group ids and LOCAL and
//                    GROUP_REDUCE axes work-item ids (SPECIAL gidxN, lidxN: gpudims.cpp); a group
//                    reduce stores its partials to local memory, waits at a BARRIER, and folds
//                    them in a loop that every work-item runs, the first lanes storing the result.
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
//
// The renderers share one C-style core (render_cstyle.hpp); get_program picks the dialect from
// Renderer::device: "CPU" C, "GPU" OpenCL C, "CUDA" CUDA C.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/codegen/kernel_ast.hpp"
#include "core/opt/renderer.hpp"
#include "core/ir/launch_dims.hpp"

namespace tunebed {

// A code generation failure: an AST codegen does not handle (naming what), or a pass that left a
// form the next one cannot take. Bad input, never a crash.
class CodegenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The SINK's KernelInfo; throws CodegenError when its arg is not one.
KernelInfo kernel_info(const UOp& sink);

// The SINK after one pass of the list above, named as its table: "lowerer", "symbolic" (initial
// symbolic), "expander", "reduce" (remove_reduce), "devectorizer", "final" (final rewrite).
struct RewriteStage {
  std::string name;
  UOp sink;
};

// The passes above, up to and not including linearize, with the graph each one leaves, in order:
// so a check can run the kernel after every table and name the first that changed its value.
// The Renderer is core/opt's record of the target (Renderer::cpu for the C renderer). An AST that
// breaks a rule of optimized_ast_spec (core/spec/verify_kernel_ast.hpp) is a CodegenError with
// the rule's message, before any pass runs.
std::vector<RewriteStage> rewrite_stages(const UOp& ast, const Renderer& renderer = Renderer::cpu(1));

// The last of rewrite_stages: the rendered-ready SINK.
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
// OpenCL C: `__kernel void NAME(__global T* data0, ..., const int VAR, ...)`, buffers in arg
// order, then the variables sorted by name.
std::string render_opencl(const std::vector<UOp>& uops);
// CUDA C: `extern "C" __global__ void NAME(T* data0, ..., const int VAR, ...)`, with
// __launch_bounds__ of `local_size` (the work-group the kernel is launched with).
std::string render_cuda(const std::vector<UOp>& uops, const std::array<sint, 3>& local_size);

// Everything a runtime needs to run a kernel (tinygrad's ProgramSpec).
struct ProgramSpec {
  std::string name, source;
  std::vector<UOp> uops;
  std::vector<DType> globals;  // the DEFINE_GLOBAL pointer dtypes, in arg order (bufs[i])
  std::vector<UOp> vars;       // the DEFINE_VARs, sorted by name (vars[i])
  int64_t num_cores = 1;       // the THREAD axis's size, else 1 (the CPU launch's global[0])
  // The launch, as LaunchDims counts it: work-groups and work-items per group (the CPU's
  // global[0] is num_cores). Sizes may be symbolic in the variables.
  std::array<sint, 3> global_size{1, 1, 1}, local_size{1, 1, 1};

  // The launch dims for the variables' values (in `vars` order). Throws std::invalid_argument
  // when a value is missing or a size is not positive.
  LaunchDims launch_dims(const std::vector<int32_t>& var_values = {}) const;
};

// Renders in the dialect of renderer.device ("CPU", "GPU" for OpenCL, "CUDA").
ProgramSpec get_program(const UOp& ast, const Renderer& renderer = Renderer::cpu(1));

}  // namespace tunebed
