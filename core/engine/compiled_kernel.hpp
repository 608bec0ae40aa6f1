// Compiling and running one kernel AST for real: the kernel-level API of core/engine. The
// compiled backend runs every kernel of a schedule through it; `tunebed run` (a workload's
// kernels, or one AST with --ast) and check-corpus use it directly.
//
//   kernel AST ─ Kernel(ast, renderer) ─ opts ─ get_optimized_ast ─ get_program ─ Device::compile
//
// The opts are one of four choices (KernelOpts): the optimizer's default (a tensor core where one
// fits, else tinygrad's hand-coded heuristics: what tinygrad runs when no search does), exactly the
// hand-coded heuristics, none at all, or a given list, applied in order with core/opt's legality
// checks (an illegal one throws KernelOptError with the rule's message).
//
// Programs are cached in-process by (device, entry, source): a kernel that appears twice in a
// schedule, or is realized again, is compiled once. compile_batch renders several kernels into
// ONE translation unit on the CPU, each function renamed to its own entry, so clang runs once for
// all of them; checking hundreds of opt sequences of a kernel is then bound by running, not compiling.
//
// A CompiledKernel runs and times itself as every compiled program does (compiled_program.hpp:
// the one runner and its rules for buffers and variables). Its report line gives the kernel's
// name, shape (coloured by axis type when stdout is a TTY), opts, time, GFLOP/s and GB/s.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/compiled_program.hpp"
#include "core/opt/cost.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"

namespace tunebed {

// Which opts a kernel gets: the optimizer's default (core/opt's default_opts: a tensor core where
// one fits, else tinygrad's hand-coded heuristics: what runs when no search does), exactly the
// hand-coded heuristics, none, or a given list.
struct KernelOpts {
  enum class Mode { default_opts, hand_coded, none, given };
  Mode mode = Mode::default_opts;
  std::vector<Opt> opts;  // for Mode::given

  static KernelOpts defaults() { return {}; }
  static KernelOpts hand_coded() { return {Mode::hand_coded, {}}; }
  static KernelOpts none() { return {Mode::none, {}}; }
  static KernelOpts given(std::vector<Opt> opts) { return {Mode::given, std::move(opts)}; }
};

// The Kernel of `ast` for `renderer` with the chosen opts applied. Throws KernelOptError for an
// illegal given opt, std::invalid_argument for an AST that is not a kernel.
Kernel optimize_kernel(const UOp& ast, const Renderer& renderer, const KernelOpts& opts);

// A kernel AST compiled with its opts: the runner (compiled_program.hpp) and what the opts made.
struct CompiledKernel : CompiledProgram {
  std::string name;               // Kernel::name() after the opts (tinygrad's): "r_16_64_4_16_4"
  std::string shape;              // the full shape after the opts, coloured when stdout is a TTY
  std::vector<Opt> applied_opts;  // what the opts choice resolved to
  KernelCost cost;                // core/opt/cost.hpp: FLOPs and bytes of one launch
};

// "r_64_64_64  64 16 4 64 16 4  UPCAST:1:4,UNROLL:0:4  0.123 ms  12.3 GFLOP/s  4.5 GB/s".
std::string report_line(const CompiledKernel& k, const Timing& timing);

class KernelCompiler {
 public:
  // Renders for renderer_for(*device) (compiled_program.hpp): OpenCL C, CUDA C; on the
  // CPU, C for Renderer::cpu with the device's cores (THREAD may split across all of them).
  explicit KernelCompiler(std::shared_ptr<Device> device);
  // Renders for RENDERER instead: check-corpus fixes the CPU's core count, so that its results do
  // not depend on the machine's.
  KernelCompiler(std::shared_ptr<Device> device, Renderer renderer)
      : device_(std::move(device)), renderer_(std::move(renderer)) {}

  const Renderer& renderer() const { return renderer_; }
  const std::shared_ptr<Device>& device() const { return device_; }

  // Throws KernelOptError (illegal opts), CodegenError, CompileError (the compiler's message and
  // the source).
  CompiledKernel compile(const UOp& ast, const KernelOpts& opts = {}) const;
  // The same for several kernels in one translation unit: kernel i's function is renamed to
  // "<its name>_b<i>". Any failure fails the batch.
  std::vector<CompiledKernel> compile_batch(const std::vector<std::pair<UOp, KernelOpts>>& kernels) const;

 private:
  std::shared_ptr<Program> program(const std::string& source, const std::string& entry) const;

  std::shared_ptr<Device> device_;
  Renderer renderer_;
};

}  // namespace tunebed
