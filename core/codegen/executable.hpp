// Executable: a kernel AST compiled for a device and run on host buffers, so tests and the CLI
// can run an AST without knowing about sources, programs, device buffers and launch dims.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/runtime/device.hpp"

namespace tunebed {

// The Renderer record for a device: Renderer::cpu, ::opencl or ::cuda (for the device's sm_XX),
// with the launch limits and shared memory the device reports where they are tighter.
Renderer renderer_for(const Device& device);

class Executable {
 public:
  // Renders the AST for `renderer` (renderer_for(device) when not given) and compiles it on
  // `device`. Throws CodegenError for an AST codegen refuses or a renderer that does not match
  // the device, CompileError when the compiler rejects the source.
  Executable(const UOp& ast, std::shared_ptr<Device> device, const std::optional<Renderer>& renderer = {});

  const ProgramSpec& spec() const { return spec_; }
  Program& program() const { return *program_; }

  // Zero-filled buffers, one per DEFINE_GLOBAL in arg order, of its dtype and size.
  std::vector<HostBuffer> make_buffers() const;

  // Runs the kernel once on `bufs` (DEFINE_GLOBAL order; dtypes and sizes as make_buffers) with
  // the given value for every DEFINE_VAR, and returns the buffers as the kernel left them.
  // Throws std::invalid_argument naming a buffer or variable that does not fit.
  std::vector<HostBuffer> run(const std::vector<HostBuffer>& bufs,
                              const std::map<std::string, int32_t>& vars = {}) const;

  // The DEFINE_VAR values in spec().vars order, checked against their bounds.
  std::vector<int32_t> var_values(const std::map<std::string, int32_t>& vars) const;

 private:
  std::shared_ptr<Device> device_;
  ProgramSpec spec_;
  std::unique_ptr<Program> program_;
};

}  // namespace tunebed
