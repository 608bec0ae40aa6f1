// The backend-independent half of device.hpp: spec parsing, the registry of open devices, and
// the checks every backend would otherwise repeat (buffer sizes, launch dims, timing statistics).
#include "core/runtime/device.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "core/runtime/cpu_device.hpp"
#include "core/runtime/cuda_device.hpp"
#include "core/runtime/opencl_device.hpp"

namespace tunebed {

CompileError::CompileError(const std::string& compiler, const std::string& entry, std::string log,
                           std::string source)
    : std::runtime_error(compiler + " failed to compile '" + entry + "':\n" + log),
      log_(std::move(log)),
      source_(std::move(source)) {}

std::string CompileError::numbered_source() const {
  std::ostringstream out;
  std::istringstream in(source_);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string number = std::to_string(n);
    out << std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') << number << " | " << line << '\n';
  }
  return out.str();
}

DeviceSpec parse_device_spec(const std::string& spec) {
  const std::string usage = "expected cpu, opencl[:N] or cuda[:N]";
  const size_t colon = spec.find(':');
  std::string backend = spec.substr(0, colon);
  std::transform(backend.begin(), backend.end(), backend.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  DeviceSpec out;
  if (backend == "cpu")
    out.kind = DeviceKind::Cpu;
  else if (backend == "opencl")
    out.kind = DeviceKind::OpenCL;
  else if (backend == "cuda")
    out.kind = DeviceKind::Cuda;
  else
    throw DeviceError("unknown device '" + spec + "': " + usage);
  if (colon == std::string::npos) return out;

  if (out.kind == DeviceKind::Cpu) throw DeviceError("bad device '" + spec + "': cpu takes no index");
  const std::string digits = spec.substr(colon + 1);
  int index = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0)
    throw DeviceError("bad device index '" + digits + "' in '" + spec + "': " + usage);
  out.index = index;
  return out;
}

std::shared_ptr<Device> open_device(const std::string& spec) {
  const DeviceSpec parsed = parse_device_spec(spec);
  // One live object per device name. Weak, so a device (and its OpenCL context or CUDA context)
  // goes away with its last user rather than during static destruction, when drivers may be gone.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Device>> open;
  const std::lock_guard lock(mutex);
  std::shared_ptr<Device> device;
  switch (parsed.kind) {
    case DeviceKind::Cpu:
      if ((device = open["cpu"].lock())) return device;
      device = open_cpu_device();
      break;
    case DeviceKind::OpenCL: {
      const int index = parsed.index ? *parsed.index : default_opencl_device();
      if ((device = open["opencl:" + std::to_string(index)].lock())) return device;
      device = open_opencl_device(index);
      break;
    }
    case DeviceKind::Cuda:
      if ((device = open["cuda:" + std::to_string(parsed.index.value_or(0))].lock())) return device;
      device = open_cuda_device(parsed.index.value_or(0));
      break;
  }
  open[device->name()] = device;
  return device;
}

// ---- Buffer ----

Buffer::Buffer(std::shared_ptr<const Device> device, DType dtype, int64_t size)
    : device_(std::move(device)), dtype_(dtype), size_(size) {}

static void check_host_size(const Buffer& buf, size_t host_bytes, const char* what) {
  if (host_bytes != buf.nbytes())
    throw DeviceError(std::string(what) + " of " + std::to_string(host_bytes) + " bytes into a buffer of " +
                      std::to_string(buf.size()) + " " + to_string(buf.dtype()) + " (" +
                      std::to_string(buf.nbytes()) + " bytes) on " + buf.device().name());
}

void Buffer::copyin(std::span<const std::byte> host) {
  check_host_size(*this, host.size(), "copyin");
  if (!host.empty()) do_copyin(host);
}

void Buffer::copyout(std::span<std::byte> host) const {
  check_host_size(*this, host.size(), "copyout");
  if (!host.empty()) do_copyout(host);
}

void Buffer::copyin(const HostBuffer& host) {
  if (host.dtype != dtype_)
    throw DeviceError("copyin of " + to_string(host.dtype) + " data into a " + to_string(dtype_) + " buffer");
  copyin(std::span<const std::byte>(host.bytes));
}

HostBuffer Buffer::to_host() const {
  HostBuffer host(dtype_, size_);
  copyout(std::span<std::byte>(host.bytes));
  return host;
}

// ---- Program ----

Program::Program(std::shared_ptr<const Device> device, std::string entry)
    : device_(std::move(device)), entry_(std::move(entry)) {}

static std::string dims_text(const std::array<int64_t, 3>& d) {
  return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

static void check_launch(const Program& program, const std::vector<Buffer*>& bufs, const LaunchDims& dims) {
  const Device& device = program.device();
  const Capabilities& caps = device.capabilities();
  const std::string where = "launch of '" + program.entry() + "' on " + device.name() + ": ";
  int64_t local_size = 1;
  for (int i = 0; i < 3; ++i) {
    if (dims.global[i] < 1 || dims.local[i] < 1)
      throw DeviceError(where + "launch dims must be >= 1, got global " + dims_text(dims.global) + " local " +
                        dims_text(dims.local));
    if (dims.global[i] > caps.max_global_dims[i])
      throw DeviceError(where + "global " + dims_text(dims.global) + " exceeds the device's limit " +
                        dims_text(caps.max_global_dims));
    if (dims.local[i] > caps.max_local_dims[i])
      throw DeviceError(where + "local " + dims_text(dims.local) + " exceeds the device's limit " +
                        dims_text(caps.max_local_dims));
    local_size *= dims.local[i];
  }
  if (local_size > caps.max_local_size)
    throw DeviceError(where + "local size " + std::to_string(local_size) + " exceeds the device's limit of " +
                      std::to_string(caps.max_local_size) + " work-items per group");
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i] == nullptr) throw DeviceError(where + "buffer " + std::to_string(i) + " is null");
    if (&bufs[i]->device() != &device)
      throw DeviceError(where + "buffer " + std::to_string(i) + " lives on " + bufs[i]->device().name());
  }
}

double Program::run(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars, const LaunchDims& dims,
                    int launches) {
  if (launches < 1) throw DeviceError("a run needs at least one launch, got " + std::to_string(launches));
  check_launch(*this, bufs, dims);
  return launch_n(bufs, vars, dims, launches);
}

double Program::launch_n(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                         const LaunchDims& dims, int n) {
  return n == 1 ? launch(bufs, vars, dims) : launches(bufs, vars, dims, n);
}

double Program::launches(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                         const LaunchDims& dims, int n) {
  double total = 0;
  for (int i = 0; i < n; i++) total += launch(bufs, vars, dims);
  return total / n;
}

Timing Program::time(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                     const LaunchDims& dims, const TimingOptions& options) {
  if (options.warmup < 0 || options.runs < 1)
    throw DeviceError("timing needs warmup >= 0 and runs >= 1, got " + std::to_string(options.warmup) +
                      " and " + std::to_string(options.runs));
  check_launch(*this, bufs, dims);
  LaunchSampler sample([&](int n) { return launch_n(bufs, vars, dims, n); });
  sample.warm_up(std::max(1, options.warmup), kWarmupSpan);
  Timing timing;
  for (int i = 0; i < options.runs; ++i) timing.samples.push_back(sample());
  std::vector<double> sorted = timing.samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  timing.median = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return timing;
}

// ---- Device ----

std::unique_ptr<Buffer> Device::allocate(DType dtype, int64_t n) {
  if (dtype.ptr || dtype.count != 1 || dtype.is_void())
    throw DeviceError("cannot allocate a buffer of " + to_string(dtype) + " on " + name() +
                      ": buffers hold scalars");
  if (n < 0) throw DeviceError("cannot allocate " + std::to_string(n) + " elements on " + name());
  return do_allocate(dtype, n);
}

std::unique_ptr<Program> Device::compile(const std::string& source, const std::string& entry) {
  if (entry.empty()) throw DeviceError("compile on " + name() + ": the entry name is empty");
  return do_compile(source, entry);
}

}  // namespace tunebed
