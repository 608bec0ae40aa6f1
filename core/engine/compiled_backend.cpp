// CompiledBackend: create_schedule, then run_schedule with a runner that compiles each kernel.
#include "core/engine/compiled_backend.hpp"

#include "core/schedule/schedule.hpp"

namespace tunebed {

CompiledBackend::CompiledBackend(std::shared_ptr<Device> device, OptsPolicy policy)
    : compiler_(std::move(device)), policy_(std::move(policy)) {}

std::vector<HostBuffer> CompiledBackend::realize(const std::vector<UOp>& outputs, const BufferData& buffers) {
  const Schedule schedule = create_schedule(outputs);
  // A shallow copy: the schedule's new buffers join it, while the input and ASSIGN-target
  // HostBuffers stay shared with the tensors that hold them, so ASSIGNs write through.
  BufferData data = buffers;
  last_kernels_.clear();
  run_schedule(schedule, data, [&](const ScheduleItem& item, const std::vector<HostBuffer*>& bufs) {
    const int index = static_cast<int>(last_kernels_.size());
    const KernelOpts opts = policy_ ? policy_(index, item.ast) : KernelOpts::defaults();
    last_kernels_.push_back(compiler_.compile(item.ast, opts));
    last_kernels_.back().run(bufs);
  });
  std::vector<HostBuffer> out;
  for (const UOp& o : schedule.outputs) out.push_back(read_output(o, data));
  return out;
}

}  // namespace tunebed
