// Running a whole schedule with the AST interpreter, and reading its outputs back.
#include <memory>
#include <optional>

#include "core/ir/exec_alu.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed {
namespace {

int64_t unique_id(const UOp& buffer) { return buffer.src(0).arg().as_int(); }

// BUFFER's data, created zero-filled (in DTYPE, by default its own) the first time it is asked for.
HostBuffer& host_buffer(const UOp& buffer, BufferData& buffers, std::optional<DType> dtype = {}) {
  std::shared_ptr<HostBuffer>& b = buffers[unique_id(buffer)];
  if (!b) b = std::make_shared<HostBuffer>(dtype.value_or(buffer.dtype()), buffer.arg().as_int());
  return *b;
}

void copy_item(const std::vector<HostBuffer*>& bufs) {
  if (bufs.size() != 2 || bufs[0]->bytes.size() != bufs[1]->bytes.size())
    throw AstInterpreterError("COPY: expected a destination and a source of the same size");
  bufs[0]->bytes = bufs[1]->bytes;
}

// OUTPUT's elements read from BUFFERS, held in dtype AS; where its view is not valid they are 0.
HostBuffer read_positions(const UOp& output, const BufferData& buffers, const DType& as) {
  sched::StCacheScope scope;
  const UOp base = sched::uop_base(output);
  const std::vector<int64_t> positions = sched::st_of(output).buffer_positions();
  HostBuffer out(as, static_cast<int64_t>(positions.size()));
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

}  // namespace

void run_schedule(const Schedule& schedule, BufferData& buffers, const KernelRunner& run_kernel) {
  for (const ScheduleItem& item : schedule.items) {
    std::vector<HostBuffer*> bufs;
    for (const UOp& b : item.bufs) bufs.push_back(&host_buffer(b, buffers));
    if (item.is_copy()) {
      copy_item(bufs);
    } else if (run_kernel) {
      run_kernel(item, bufs);
    } else {
      run_kernel_ast(item.ast, bufs);
    }
  }
}

HostBuffer read_output(const UOp& output, const BufferData& buffers) {
  return read_positions(output, buffers, output.dtype());
}

void run_schedule_exact(const Schedule& schedule, BufferData& values, BufferData& bounds,
                        int64_t max_iterations, int threads) {
  for (const ScheduleItem& item : schedule.items) {
    const bool last = &item == &schedule.items.back();
    std::vector<HostBuffer*> v, e;
    for (const UOp& b : item.bufs) {
      v.push_back(&host_buffer(b, values, b.dtype().is_float() ? dtypes::float64 : b.dtype()));
      e.push_back(&host_buffer(b, bounds, dtypes::float64));
    }
    if (item.is_copy()) {
      copy_item(v);
      copy_item(e);
    } else {
      const int64_t stride = sample_stride(ast_iterations(item.ast), max_iterations);
      if (stride > 1 && !last)
        throw AstInterpreterError("kernel " + std::to_string(&item - schedule.items.data()) + " of " +
                                  std::to_string(schedule.items.size()) +
                                  " is past the exact run's budget of " + std::to_string(max_iterations) +
                                  " iterations, and later kernels read it");
      run_kernel_ast_exact(item.ast, v, e, {}, stride, threads);
    }
  }
}

Expected read_expected(const UOp& output, const BufferData& values, const BufferData& bounds) {
  const DType d = output.dtype();
  Expected out{d, read_positions(output, values, d.is_float() ? dtypes::float64 : d), {}};
  out.bound.assign(static_cast<size_t>(out.numel()), 0.0);
  const UOp base = sched::uop_base(output);
  if (base.op() != Ops::BUFFER || !bounds.contains(unique_id(base))) return out;  // constants, inputs: exact
  const HostBuffer e = read_positions(output, bounds, dtypes::float64);
  for (int64_t k = 0; k < e.numel(); k++) out.bound[static_cast<size_t>(k)] = e.get_float(k);
  return out;
}

Expected expect_output(const Schedule& schedule, const BufferData& buffers, size_t output,
                       int64_t max_iterations, int threads) {
  BufferData values, bounds;
  for (const auto& [id, b] : buffers) values[id] = std::make_shared<HostBuffer>(widened(*b));
  run_schedule_exact(schedule, values, bounds, max_iterations, threads);
  return read_expected(schedule.outputs.at(output), values, bounds);
}

}  // namespace tunebed
