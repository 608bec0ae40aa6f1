// Executable: get_program, Device::compile, and the copies in and out around Program::run.
#include "core/codegen/executable.hpp"

#include <algorithm>

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

Executable::Executable(const UOp& ast, std::shared_ptr<Device> device,
                       const std::optional<Renderer>& renderer)
    : device_(std::move(device)) {
  const Renderer r = renderer ? *renderer : renderer_for(*device_);
  if (kind_of(r) != parse_device_spec(device_->name()).kind)
    throw CodegenError("the " + r.device + " renderer's kernels do not run on " + device_->name());
  spec_ = get_program(ast, r);
  program_ = device_->compile(spec_.source, spec_.name);
}

std::vector<HostBuffer> Executable::make_buffers() const {
  std::vector<HostBuffer> out;
  for (size_t i = 0; i < spec_.globals.size(); i++) {
    const DType& d = spec_.globals[i];
    if (d.size < 0) throw std::invalid_argument("buffer " + std::to_string(i) + " has no size in its dtype");
    out.emplace_back(d.base(), d.size);
  }
  return out;
}

std::vector<int32_t> Executable::var_values(const std::map<std::string, int32_t>& vars) const {
  std::vector<int32_t> values;
  for (const UOp& v : spec_.vars) {
    const ArgTuple& t = v.arg().as_tuple();
    const std::string& name = t.at(0).as_string();
    auto it = vars.find(name);
    if (it == vars.end())
      throw std::invalid_argument("kernel " + spec_.name + " needs a value for variable " + name);
    if (it->second < t.at(1).as_int() || it->second > t.at(2).as_int())
      throw std::invalid_argument("variable " + name + " = " + std::to_string(it->second) + " is outside [" +
                                  std::to_string(t.at(1).as_int()) + ", " + std::to_string(t.at(2).as_int()) +
                                  "]");
    values.push_back(it->second);
  }
  return values;
}

std::vector<HostBuffer> Executable::run(const std::vector<HostBuffer>& bufs,
                                        const std::map<std::string, int32_t>& vars) const {
  if (bufs.size() != spec_.globals.size())
    throw std::invalid_argument("kernel " + spec_.name + " takes " + std::to_string(spec_.globals.size()) +
                                " buffers, not " + std::to_string(bufs.size()));
  std::vector<std::unique_ptr<Buffer>> device_bufs;
  std::vector<Buffer*> args;
  for (size_t i = 0; i < bufs.size(); i++) {
    const DType want = spec_.globals[i].base();
    if (bufs[i].dtype != want || bufs[i].numel() != spec_.globals[i].size)
      throw std::invalid_argument("buffer " + std::to_string(i) + " of kernel " + spec_.name + " must be " +
                                  std::to_string(spec_.globals[i].size) + " " + to_string(want) + ", not " +
                                  std::to_string(bufs[i].numel()) + " " + to_string(bufs[i].dtype));
    device_bufs.push_back(device_->allocate(want, bufs[i].numel()));
    device_bufs.back()->copyin(bufs[i]);
    args.push_back(device_bufs.back().get());
  }
  const std::vector<int32_t> values = var_values(vars);
  program_->run(args, values, spec_.launch_dims(values));
  std::vector<HostBuffer> out;
  out.reserve(device_bufs.size());
  for (const auto& b : device_bufs) out.push_back(b->to_host());
  return out;
}

}  // namespace tunebed
