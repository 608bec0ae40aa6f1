// The one kernel runner: a compiled program, bound to host buffers and variable values under one
// set of rules, run or timed on its device. Every caller runs kernels through it: the tuner
// (its targets bind with these rules and its workers launch what they bound), check-corpus,
// `tunebed run`, Tensor::realize's compiled backend, the tests and the fuzzers.
//
// The rules:
//   - buffers: one per DEFINE_GLOBAL, in arg order, each exactly of its pointer dtype's base type
//     and element count (a buffer of another size is a caller's mistake, not something to run);
//   - variables: by name, 64-bit (VarVals). A DEFINE_VAR given no value takes its minimum, the
//     AST interpreter's default, so that the runner and the oracle run the same kernel; a value
//     outside the variable's [min, max] is refused. The kernel ABI passes int32, and a range that
//     does not fit it is refused too.
// A buffer or variable that breaks a rule throws std::invalid_argument naming it.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/ir/var_vals.hpp"
#include "core/runtime/device.hpp"

namespace tunebed {

// The Renderer record for a device: Renderer::cpu (one core), ::opencl or ::cuda (for the
// device's sm_XX), with the launch limits and shared memory the device reports where they are
// tighter.
Renderer renderer_for(const Device& device);

// The DEFINE_VARs' values in spec.vars order, as the kernel ABI takes them (rules above).
std::vector<int32_t> bind_vars(const ProgramSpec& spec, const VarVals& vars);
// Zero-filled host buffers, one per DEFINE_GLOBAL, of its dtype and size.
std::vector<HostBuffer> make_buffers(const ProgramSpec& spec);

struct CompiledProgram {
  ProgramSpec spec;
  std::shared_ptr<Device> device;
  std::shared_ptr<Program> program;

  std::vector<HostBuffer> make_buffers() const { return tunebed::make_buffers(spec); }
  // Runs once on device copies of bufs and writes every buffer back.
  void run(const std::vector<HostBuffer*>& bufs, const VarVals& vars = {}) const;
  // Runs once on copies of bufs and returns them as the kernel left them.
  std::vector<HostBuffer> run_on_copies(std::vector<HostBuffer> bufs, const VarVals& vars = {}) const;
  // Program::time on device copies of bufs (left unchanged).
  Timing time(const std::vector<HostBuffer*>& bufs, const VarVals& vars = {},
              const TimingOptions& options = {}) const;
};

// Renders an optimized kernel AST (get_optimized_ast's) for `renderer` (renderer_for(*device)
// when not given) and compiles it on `device`. Throws CodegenError for an AST codegen refuses or
// a renderer whose kernels do not run on the device, CompileError when the compiler rejects the
// source.
CompiledProgram compile_program(const UOp& optimized_ast, std::shared_ptr<Device> device,
                                const std::optional<Renderer>& renderer = std::nullopt);

}  // namespace tunebed
