// Executable: get_program, Device::compile, and the copies in and out around Program::run.
#include "core/codegen/executable.hpp"

namespace tunebed {

Executable::Executable(const UOp& ast, std::shared_ptr<Device> device, const Renderer& renderer)
    : device_(std::move(device)), spec_(get_program(ast, renderer)) {
  if (device_->fingerprint().name != "cpu")
    throw CodegenError("the C renderer's kernels run on the CPU device, not on " + device_->name());
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
  LaunchDims dims;
  dims.global[0] = spec_.num_cores;
  program_->run(args, values, dims);
  std::vector<HostBuffer> out;
  out.reserve(device_bufs.size());
  for (const auto& b : device_bufs) out.push_back(b->to_host());
  return out;
}

}  // namespace tunebed
