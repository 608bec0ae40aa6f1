// The kernel runner's rules (compiled_program.hpp), and renderer_for.
#include "core/engine/compiled_program.hpp"

#include <algorithm>
#include <limits>

namespace tunebed {

namespace {

// The device kind a Renderer record renders for.
DeviceKind kind_of(const Renderer& r) {
  if (r.device == "CPU") return DeviceKind::Cpu;
  if (r.device == "GPU") return DeviceKind::OpenCL;
  if (r.device == "CUDA") return DeviceKind::Cuda;
  throw CodegenError("no device runs the renderer \"" + r.device + "\"");
}

// The compute capability of a CUDA device from its fingerprint's "... (sm_90)".
int cuda_sm(const Device& device) {
  const std::string& arch = device.fingerprint().arch;
  const size_t at = arch.rfind("sm_");
  if (at == std::string::npos) return 80;
  return std::atoi(arch.c_str() + at + 3);
}

// Device copies of bufs, each checked against its DEFINE_GLOBAL.
std::vector<std::unique_ptr<Buffer>> bind_buffers(const CompiledProgram& p, const std::vector<HostBuffer*>& bufs) {
  const ProgramSpec& spec = p.spec;
  if (bufs.size() != spec.globals.size())
    throw std::invalid_argument("kernel " + spec.name + " takes " + std::to_string(spec.globals.size()) +
                                " buffers, not " + std::to_string(bufs.size()));
  std::vector<std::unique_ptr<Buffer>> out;
  for (size_t i = 0; i < bufs.size(); i++) {
    const DType want = spec.globals[i].base();
    if (bufs[i]->dtype != want || bufs[i]->numel() != spec.globals[i].size)
      throw std::invalid_argument("buffer " + std::to_string(i) + " of kernel " + spec.name + " must be " +
                                  std::to_string(spec.globals[i].size) + " " + to_string(want) + ", not " +
                                  std::to_string(bufs[i]->numel()) + " " + to_string(bufs[i]->dtype));
    out.push_back(p.device->allocate(want, bufs[i]->numel()));
    out.back()->copyin(*bufs[i]);
  }
  return out;
}

std::vector<Buffer*> raw(const std::vector<std::unique_ptr<Buffer>>& bufs) {
  std::vector<Buffer*> out;
  for (const auto& b : bufs) out.push_back(b.get());
  return out;
}

}  // namespace

Renderer renderer_for(const Device& device) {
  const DeviceKind kind = parse_device_spec(device.name()).kind;
  if (kind == DeviceKind::Cpu) return Renderer::cpu(1);
  Renderer r = kind == DeviceKind::OpenCL ? Renderer::opencl() : Renderer::cuda(cuda_sm(device));
  const Capabilities& caps = device.capabilities();
  for (size_t i = 0; i < 3; i++) {
    (*r.local_max)[i] = std::min((*r.local_max)[i], caps.max_local_dims[i]);
    (*r.global_max)[i] = std::min((*r.global_max)[i], caps.max_global_dims[i]);
  }
  if (caps.shared_memory_bytes > 0) r.shared_max = std::min(r.shared_max, caps.shared_memory_bytes);
  return r;
}

std::vector<int32_t> bind_vars(const ProgramSpec& spec, const VarVals& vars) {
  std::vector<int32_t> values;
  for (const UOp& v : spec.vars) {
    const ArgTuple& t = v.arg().as_tuple();
    const std::string& name = t.at(0).as_string();
    const int64_t lo = t.at(1).as_int(), hi = t.at(2).as_int();
    if (lo < std::numeric_limits<int32_t>::min() || hi > std::numeric_limits<int32_t>::max())
      throw std::invalid_argument("variable " + name + " of kernel " + spec.name + " ranges over [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) +
                                  "], past the int32 the kernel takes");
    auto it = vars.find(name);
    const int64_t x = it == vars.end() ? lo : it->second;
    if (x < lo || x > hi)
      throw std::invalid_argument("variable " + name + " = " + std::to_string(x) + " is outside [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    values.push_back(static_cast<int32_t>(x));
  }
  return values;
}

std::vector<HostBuffer> make_buffers(const ProgramSpec& spec) {
  std::vector<HostBuffer> out;
  for (size_t i = 0; i < spec.globals.size(); i++) {
    const DType& d = spec.globals[i];
    if (d.size < 0) throw std::invalid_argument("buffer " + std::to_string(i) + " has no size in its dtype");
    out.emplace_back(d.base(), d.size);
  }
  return out;
}

void CompiledProgram::run(const std::vector<HostBuffer*>& bufs, const VarVals& vars) const {
  const std::vector<int32_t> values = bind_vars(spec, vars);
  std::vector<std::unique_ptr<Buffer>> device_bufs = bind_buffers(*this, bufs);
  program->run(raw(device_bufs), values, spec.launch_dims(values));
  for (size_t i = 0; i < bufs.size(); i++) *bufs[i] = device_bufs[i]->to_host();
}

std::vector<HostBuffer> CompiledProgram::run_on_copies(std::vector<HostBuffer> bufs, const VarVals& vars) const {
  std::vector<HostBuffer*> ptrs;
  for (HostBuffer& b : bufs) ptrs.push_back(&b);
  run(ptrs, vars);
  return bufs;
}

Timing CompiledProgram::time(const std::vector<HostBuffer*>& bufs, const VarVals& vars,
                             const TimingOptions& options) const {
  const std::vector<int32_t> values = bind_vars(spec, vars);
  std::vector<std::unique_ptr<Buffer>> device_bufs = bind_buffers(*this, bufs);
  return program->time(raw(device_bufs), values, spec.launch_dims(values), options);
}

CompiledProgram compile_program(const UOp& optimized_ast, std::shared_ptr<Device> device,
                                const std::optional<Renderer>& renderer) {
  const Renderer r = renderer ? *renderer : renderer_for(*device);
  if (kind_of(r) != parse_device_spec(device->name()).kind)
    throw CodegenError("the " + r.device + " renderer's kernels do not run on " + device->name());
  CompiledProgram p{.spec = get_program(optimized_ast, r), .device = std::move(device), .program = nullptr};
  p.program = p.device->compile(p.spec.source, p.spec.name);
  return p;
}

}  // namespace tunebed
