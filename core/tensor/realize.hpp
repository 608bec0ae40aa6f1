// The seam between the lazy Tensor and whatever computes it. realize() hands its graph to the
// current Backend; the default is the reference interpreter, and core/engine's compiled backend
// (schedule -> optimize -> render -> compile -> run, compiled_backend.hpp) installs itself here
// with set_backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Computes each of `outputs` (tensor-level graphs) from the host data of the buffers they read,
  // and returns their elements in C order. Every ASSIGN in the graphs writes its value into its
  // target's HostBuffer in `buffers` (shared with the tensors that hold it) before this returns;
  // reads inside the graphs see the data as it was before the call.
  virtual std::vector<HostBuffer> realize(const std::vector<UOp>& outputs, const BufferData& buffers) = 0;
};

// Evaluates with core/reference.
class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  std::vector<HostBuffer> realize(const std::vector<UOp>& outputs, const BufferData& buffers) override;
};

std::shared_ptr<Backend> current_backend();
// Installs `backend` for every later realize() and returns the one it replaces.
std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> backend);

}  // namespace tunebed
