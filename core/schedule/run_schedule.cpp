// Running a whole schedule with the AST interpreter, and reading its outputs back.
#include <memory>

#include "core/ir/exec_alu.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed {
namespace {

int64_t unique_id(const UOp& buffer) { return buffer.src(0).arg().as_int(); }

HostBuffer& host_buffer(const UOp& buffer, BufferData& buffers) {
  std::shared_ptr<HostBuffer>& b = buffers[unique_id(buffer)];
  if (!b) b = std::make_shared<HostBuffer>(buffer.dtype(), buffer.arg().as_int());
  return *b;
}

}  // namespace

void run_schedule(const Schedule& schedule, BufferData& buffers, const KernelRunner& run_kernel) {
  for (const ScheduleItem& item : schedule.items) {
    std::vector<HostBuffer*> bufs;
    for (const UOp& b : item.bufs) bufs.push_back(&host_buffer(b, buffers));
    if (item.is_copy()) {
      if (bufs.size() != 2 || bufs[0]->bytes.size() != bufs[1]->bytes.size())
        throw AstInterpreterError("COPY: expected a destination and a source of the same size");
      bufs[0]->bytes = bufs[1]->bytes;
    } else if (run_kernel) {
      run_kernel(item, bufs);
    } else {
      run_kernel_ast(item.ast, bufs);
    }
  }
}

HostBuffer read_output(const UOp& output, const BufferData& buffers) {
  sched::StCacheScope scope;
  const UOp base = sched::uop_base(output);
  const std::vector<int64_t> positions = sched::st_of(output).buffer_positions();
  HostBuffer out(output.dtype(), static_cast<int64_t>(positions.size()));
  if (base.op() == Ops::CONST) {
    const ConstValue c = ConstValue::of(base);
    for (size_t k = 0; k < positions.size(); k++)
      if (positions[k] >= 0)
        c.dtype.is_float() ? out.set_float(static_cast<int64_t>(k), c.f)
                           : out.set_int(static_cast<int64_t>(k), c.i);
    return out;
  }
  if (base.op() != Ops::BUFFER)
    throw AstInterpreterError(std::string("output is a ") + std::string(op_name(base.op())) +
                              ", not a buffer or a constant");
  auto it = buffers.find(unique_id(base));
  if (it == buffers.end())
    throw AstInterpreterError("output buffer " + std::to_string(unique_id(base)) + " has no data");
  const HostBuffer& b = *it->second;
  for (size_t k = 0; k < positions.size(); k++) {
    if (positions[k] < 0) continue;
    if (b.dtype.is_float())
      out.set_float(static_cast<int64_t>(k), b.get_float(positions[k]));
    else
      out.set_int(static_cast<int64_t>(k), b.get_int(positions[k]));
  }
  return out;
}

}  // namespace tunebed
