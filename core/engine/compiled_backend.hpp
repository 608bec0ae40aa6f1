// The compiled backend behind Tensor::realize (core/tensor/realize.hpp's seam): the graph is
// scheduled (core/schedule), and run_schedule walks the items with this backend's kernel runner:
// every kernel is optimized, rendered, compiled and run on the device (compiled_kernel.hpp);
// COPY items copy. Install it with set_backend(std::make_shared<CompiledBackend>(...)).
//
// Which opts each kernel gets is a policy: the optimizer's default opts (compiled_kernel.hpp's
// KernelOpts), or a function of the kernel's index in the schedule and its AST (tests use it to
// run every kernel with no opts, or with random legal sequences).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/compiled_kernel.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/tensor/realize.hpp"

namespace tunebed {

class CompiledBackend final : public Backend {
 public:
  // kernel index in the schedule (COPY items not counted), the kernel's AST -> its opts
  using OptsPolicy = std::function<KernelOpts(int index, const UOp& ast)>;

  explicit CompiledBackend(std::shared_ptr<Device> device, OptsPolicy policy = {});

  std::string name() const override { return compiler_.device()->name() + " (compiled)"; }
  std::vector<HostBuffer> realize(const std::vector<UOp>& outputs, const BufferData& buffers) override;

  // The kernels of the latest realize, in schedule order, as they were compiled.
  const std::vector<CompiledKernel>& last_kernels() const { return last_kernels_; }

 private:
  KernelCompiler compiler_;
  OptsPolicy policy_;
  std::vector<CompiledKernel> last_kernels_;
};

}  // namespace tunebed
