// Hand-coded optimisations and the optimizer's entry point, as tinygrad's opt/heuristic.py and
// opt/__init__.py.
#pragma once

#include <vector>

#include "core/opt/kernel.hpp"

namespace tunebed {

// tinygrad's hand_coded_optimizations (matvec grouping, GROUPTOP for small outputs, upcasts of
// masked and broadcast axes, unrolling a small reduce, locals), then, on a target with more than
// one core, thread_opt. The opts are returned, not applied: `k` is not changed. tinygrad's image
// and DSP branches and its MV_*/NOLOCALS environment knobs are left out (no such targets here).
std::vector<Opt> hand_coded_optimizations(const Kernel& k);

// tunebed's THREAD rule. A kernel is worth splitting across the cores when its loop nest has at
// least kThreadMinWork iterations (about 0.1 ms of scalar work, so the few microseconds a thread
// pool needs to start the slices stay in the noise). The split goes on the LOOP axis that
// divides into the most slices, at most the core count; ties go to the outermost axis. nullopt
// when the kernel is small, has symbolic sizes or no loop axis divides by at least 2.
inline constexpr int64_t kThreadMinWork = int64_t{1} << 17;
std::optional<Opt> thread_opt(const Kernel& k);

// The opts a kernel gets when nobody chose any (tinygrad's opt/__init__.py): a tensor core where
// one fits (Kernel::apply_tensor_cores, then thread_opt on the CPU), else the hand-coded ones.
// Returned, not applied.
std::vector<Opt> default_opts(const Kernel& k);

// The optimized AST for a kernel AST (tinygrad's get_optimized_ast(ast, renderer)): the opts of
// the SINK's KernelInfo opts_to_apply when it has some, else default_opts.
UOp get_optimized_ast(const UOp& ast, const Renderer& renderer);

}  // namespace tunebed
