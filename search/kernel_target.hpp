// A kernel AST as a tuning target: what tune() (tune.hpp) needs of a real kernel, built from
// core/opt (the Kernel and its search space) and core/codegen (the source of each state).
//
//   state (opts path) ─ KernelSpace::kernel ─► Kernel with those opts
//                     ─ get_optimized_ast ──► optimized AST (KernelInfo with axis types)
//                     ─ get_program ────────► C source in the CPU ABI, num_cores for THREAD
#pragma once

#include <memory>
#include <string>

#include "core/ir/uop.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "search/kernel_space.hpp"
#include "search/tune.hpp"

namespace tunebed::search {

// Owns the root Kernel and its space; `target` points into them, so a KernelTarget stays put.
class KernelTarget {
 public:
  // AST: a kernel's SINK (its KernelInfo, if any, is ignored). SOURCE says where it came from
  // (a workload spec, a file:line). DEVICE: "cpu" (the only target codegen renders for now).
  // CHECK_ITERATIONS: the budget of the independent check's exact run (expect_kernel_ast: a
  // larger kernel is checked on an odd-strided sample of its outputs).
  KernelTarget(const UOp& ast, const std::string& source, const std::string& device,
               ActionSpaceOptions options = {}, int64_t check_iterations = kExactRunBudget);
  ~KernelTarget();
  KernelTarget(const KernelTarget&) = delete;
  KernelTarget& operator=(const KernelTarget&) = delete;

  TuneTarget& target() { return target_; }
  KernelSpace& space() { return *space_; }
  // The opts tunebed runs this kernel with when nobody searched (core/opt's default_opts: a
  // tensor core where one fits, else tinygrad's hand-coded heuristics, and THREAD on the CPU), as
  // an opts string: what `tunebed run` and Tensor::realize run untuned, so the target's baseline.
  std::string default_opts() const;

 private:
  UOp ast_;
  std::unique_ptr<Kernel> root_;
  std::unique_ptr<KernelSpace> space_;
  TuneTarget target_;
};

// The AST without its KernelInfo: what the kernel computes, not how it was last optimized. The
// tuning database keys kernels by this AST's hash (tune, run --db and replay alike).
UOp strip_info(const UOp& ast);

// "512x512x512 float32": the kernel's full shape and the dtype it stores.
std::string shape_summary(const UOp& ast);

}  // namespace tunebed::search
