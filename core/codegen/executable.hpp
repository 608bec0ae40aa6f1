// Executable: a kernel AST compiled for the CPU device and run on host buffers, so tests and the
// CLI can run an AST without knowing about sources, programs and device buffers.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/runtime/device.hpp"

namespace tunebed {

class Executable {
 public:
  // Renders the AST and compiles it on `device` (the C renderer's target: a CPU device). Throws
  // CodegenError for an AST codegen refuses, CompileError when the compiler rejects the source.
  Executable(const UOp& ast, std::shared_ptr<Device> device, const Renderer& renderer = {});

  const ProgramSpec& spec() const { return spec_; }

  // Zero-filled buffers, one per DEFINE_GLOBAL in arg order, of its dtype and size.
  std::vector<HostBuffer> make_buffers() const;

  // Runs the kernel once on `bufs` (DEFINE_GLOBAL order; dtypes and sizes as make_buffers) with
  // the given value for every DEFINE_VAR, and returns the buffers as the kernel left them.
  // Throws std::invalid_argument naming a buffer or variable that does not fit.
  std::vector<HostBuffer> run(const std::vector<HostBuffer>& bufs,
                              const std::map<std::string, int32_t>& vars = {}) const;

 private:
  std::shared_ptr<Device> device_;
  ProgramSpec spec_;
  std::unique_ptr<Program> program_;
};

}  // namespace tunebed
