// The OpenCL device: one context and one profiling in-order queue per device, buffers as cl_mem,
// programs built from source for that one device.
#define CL_TARGET_OPENCL_VERSION 120
#include "core/runtime/opencl_device.hpp"

#include <CL/cl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <regex>

namespace tunebed {

namespace {

void check(cl_int err, const std::string& call) {
  if (err != CL_SUCCESS) throw DeviceError(call + " failed: " + opencl_error_name(err));
}

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string out(size, '\0');
  check(clGetDeviceInfo(device, what, size, out.data(), nullptr), "clGetDeviceInfo");
  out.resize(out.find('\0') == std::string::npos ? out.size() : out.find('\0'));
  return out;
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof value, &value, nullptr), "clGetDeviceInfo");
  return value;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string out(size, '\0');
  check(clGetPlatformInfo(platform, what, size, out.data(), nullptr), "clGetPlatformInfo");
  out.resize(out.find('\0') == std::string::npos ? out.size() : out.find('\0'));
  return out;
}

struct Found {
  OpenCLDeviceEntry entry;
  cl_platform_id platform;
  cl_device_id device;
};

std::vector<Found> enumerate() {
  cl_uint num_platforms = 0;
  const cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err != CL_SUCCESS || num_platforms == 0)
    throw DeviceError("OpenCL is not available: the ICD loader found no platform (clGetPlatformIDs: " +
                      opencl_error_name(err) + "; see /etc/OpenCL/vendors)");
  std::vector<cl_platform_id> platforms(num_platforms);
  check(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Found> found;
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_uint num_devices = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(num_devices);
    check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr),
          "clGetDeviceIDs");
    for (cl_uint d = 0; d < num_devices; ++d) {
      OpenCLDeviceEntry entry{static_cast<int>(found.size()), static_cast<int>(p), static_cast<int>(d),
                              platform_string(platforms[p], CL_PLATFORM_NAME),
                              device_string(devices[d], CL_DEVICE_NAME)};
      found.push_back({std::move(entry), platforms[p], devices[d]});
    }
  }
  if (found.empty()) throw DeviceError("OpenCL is not available: no platform has a device");
  return found;
}

std::string describe(const std::vector<Found>& found) {
  std::string out = std::to_string(found.size()) + " OpenCL device(s):";
  for (const Found& f : found)
    out += "\n  opencl:" + std::to_string(f.entry.index) + "  platform " + std::to_string(f.entry.platform) +
           " device " + std::to_string(f.entry.device) + ": " + f.entry.platform_name + " / " +
           f.entry.device_name;
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

class ClDevice final : public Device {
 public:
  ClDevice(Fingerprint fingerprint, Capabilities caps, cl_device_id device)
      : Device(std::move(fingerprint), caps), device_(device) {
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    check(err, "clCreateContext for " + name());
    queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) clReleaseContext(context_);
    check(err, "clCreateCommandQueue for " + name());
  }
  ~ClDevice() override {
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  cl_device_id id() const { return device_; }

 protected:
  std::unique_ptr<Buffer> do_allocate(DType dtype, int64_t n) override;
  std::unique_ptr<Program> do_compile(const std::string& source, const std::string& entry) override;

 private:
  cl_device_id device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

class ClBuffer final : public Buffer {
 public:
  ClBuffer(std::shared_ptr<const ClDevice> device, DType dtype, int64_t n)
      : Buffer(device, dtype, n), device_(std::move(device)) {
    cl_int err = CL_SUCCESS;
    // OpenCL has no empty buffers; an empty one gets a byte nobody reads.
    mem_ =
        clCreateBuffer(device_->context(), CL_MEM_READ_WRITE, std::max<size_t>(nbytes(), 1), nullptr, &err);
    check(err, "clCreateBuffer of " + std::to_string(nbytes()) + " bytes on " + device_->name());
  }
  ~ClBuffer() override { clReleaseMemObject(mem_); }
  cl_mem mem() const { return mem_; }

 protected:
  void do_copyin(std::span<const std::byte> host) override {
    check(clEnqueueWriteBuffer(device_->queue(), mem_, CL_TRUE, 0, host.size(), host.data(), 0, nullptr,
                               nullptr),
          "clEnqueueWriteBuffer on " + device_->name());
  }
  void do_copyout(std::span<std::byte> host) const override {
    check(clEnqueueReadBuffer(device_->queue(), mem_, CL_TRUE, 0, host.size(), host.data(), 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer on " + device_->name());
  }

 private:
  std::shared_ptr<const ClDevice> device_;
  cl_mem mem_ = nullptr;
};

class ClProgram final : public Program {
 public:
  ClProgram(std::shared_ptr<const ClDevice> device, const std::string& source, const std::string& entry);
  ~ClProgram() override {
    if (kernel_) clReleaseKernel(kernel_);
    clReleaseProgram(program_);
  }

 protected:
  double launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                const LaunchDims& dims) override;

 private:
  std::shared_ptr<const ClDevice> device_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_uint num_args_ = 0;
  std::mutex mutex_;  // clSetKernelArg + enqueue on one cl_kernel must not interleave
};

ClProgram::ClProgram(std::shared_ptr<const ClDevice> device, const std::string& source,
                     const std::string& entry)
    : Program(device, entry), device_(std::move(device)) {
  const std::string compiler = device_->fingerprint().compiler;
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  program_ = clCreateProgramWithSource(device_->context(), 1, &text, &length, &err);
  check(err, "clCreateProgramWithSource on " + device_->name());
  const cl_device_id id = device_->id();
  err = clBuildProgram(program_, 1, &id, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (clGetProgramBuildInfo(program_, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) == CL_SUCCESS) {
      log.resize(size);
      clGetProgramBuildInfo(program_, id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    }
    clReleaseProgram(program_);
    throw CompileError(compiler, entry, "clBuildProgram: " + opencl_error_name(err) + "\n" + log, source);
  }
  kernel_ = clCreateKernel(program_, entry.c_str(), &err);
  if (err != CL_SUCCESS) {
    clReleaseProgram(program_);
    throw CompileError(
        compiler, entry,
        "clCreateKernel: " + opencl_error_name(err) + ": the program has no kernel '" + entry + "'", source);
  }
  err = clGetKernelInfo(kernel_, CL_KERNEL_NUM_ARGS, sizeof num_args_, &num_args_, nullptr);
  if (err != CL_SUCCESS) {
    clReleaseKernel(kernel_);
    clReleaseProgram(program_);
    check(err, "clGetKernelInfo of '" + entry + "'");
  }
}

double ClProgram::launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                         const LaunchDims& dims) {
  const std::string where = "launch of '" + entry() + "' on " + device_->name();
  if (bufs.size() + vars.size() != num_args_)
    throw DeviceError(where + ": the kernel takes " + std::to_string(num_args_) + " arguments, got " +
                      std::to_string(bufs.size()) + " buffers and " + std::to_string(vars.size()) + " vars");
  const std::lock_guard lock(mutex_);
  cl_uint arg = 0;
  for (Buffer* buf : bufs) {
    // Program::run checked that every buffer lives on this device, so each is a ClBuffer.
    const cl_mem mem = static_cast<ClBuffer*>(buf)->mem();
    // The argument is the handle itself, so its size is the pointer's.
    check(clSetKernelArg(kernel_, arg, sizeof mem, &mem),  // NOLINT(bugprone-sizeof-expression)
          where + ": clSetKernelArg " + std::to_string(arg));
    ++arg;
  }
  for (const int32_t var : vars) {
    check(clSetKernelArg(kernel_, arg, sizeof var, &var), where + ": clSetKernelArg " + std::to_string(arg));
    ++arg;
  }
  size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    local[i] = static_cast<size_t>(dims.local[i]);
    global[i] = static_cast<size_t>(dims.global[i]) * local[i];  // OpenCL counts work-items, not groups
  }
  cl_event event = nullptr;
  check(clEnqueueNDRangeKernel(device_->queue(), kernel_, 3, nullptr, global, local, 0, nullptr, &event),
        where + ": clEnqueueNDRangeKernel");
  cl_int err = clWaitForEvents(1, &event);
  cl_ulong start = 0, end = 0;
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  clReleaseEvent(event);
  check(err, where + ": waiting for the kernel");
  return static_cast<double>(end - start) * 1e-9;
}

std::unique_ptr<Buffer> ClDevice::do_allocate(DType dtype, int64_t n) {
  return std::make_unique<ClBuffer>(std::static_pointer_cast<const ClDevice>(shared_from_this()), dtype, n);
}

std::unique_ptr<Program> ClDevice::do_compile(const std::string& source, const std::string& entry) {
  return std::make_unique<ClProgram>(std::static_pointer_cast<const ClDevice>(shared_from_this()), source,
                                     entry);
}

}  // namespace

std::vector<OpenCLDeviceEntry> list_opencl_devices() {
  std::vector<OpenCLDeviceEntry> out;
  for (Found& f : enumerate()) out.push_back(std::move(f.entry));
  return out;
}

int default_opencl_device() {
  const char* choice = std::getenv("TUNEBED_OPENCL_DEVICE");
  if (choice == nullptr || *choice == '\0') return 0;
  const std::vector<Found> found = enumerate();
  std::smatch numbers;
  const std::string wanted = choice;
  const bool by_position = std::regex_match(wanted, numbers, std::regex(R"((\d+):(\d+))"));
  for (const Found& f : found) {
    if (by_position ? f.entry.platform == std::stoi(numbers[1]) && f.entry.device == std::stoi(numbers[2])
                    : lower(f.entry.platform_name + " / " + f.entry.device_name).find(lower(wanted)) !=
                          std::string::npos)
      return f.entry.index;
  }
  throw DeviceError("TUNEBED_OPENCL_DEVICE='" + wanted +
                    "' matches no device (give P:D or part of a name); " + describe(found));
}

std::shared_ptr<Device> open_opencl_device(int index) {
  const std::vector<Found> found = enumerate();
  if (index < 0 || index >= static_cast<int>(found.size()))
    throw DeviceError("OpenCL device " + std::to_string(index) + " does not exist; " + describe(found));
  const Found& f = found[static_cast<size_t>(index)];
  const cl_device_id id = f.device;

  Capabilities caps;
  caps.compute_units = static_cast<int>(device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
  caps.max_local_size = static_cast<int64_t>(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  const auto item_dims = device_value<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<size_t> item_sizes(std::max<cl_uint>(item_dims, 3), 1);
  check(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * item_dims, item_sizes.data(),
                        nullptr),
        "clGetDeviceInfo");
  for (int i = 0; i < 3; ++i) {
    caps.max_local_dims[i] = static_cast<int64_t>(item_sizes[static_cast<size_t>(i)]);
    // OpenCL bounds only the work-item count (size_t); index arithmetic is int32, so is this.
    caps.max_global_dims[i] = (int64_t{1} << 31) - 1;
  }
  caps.shared_memory_bytes = static_cast<int64_t>(device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));

  Fingerprint fingerprint{
      "opencl:" + std::to_string(index), f.entry.device_name,
      device_string(id, CL_DRIVER_VERSION) + " (" + device_string(id, CL_DEVICE_VERSION) + ")",
      "OpenCL C (" + f.entry.platform_name + ")", device_string(id, CL_DEVICE_OPENCL_C_VERSION)};
  return std::make_shared<ClDevice>(std::move(fingerprint), caps, id);
}

}  // namespace tunebed

// LeakSanitizer reads its default suppressions from this hook (sanitizer interface, ignored in
// builds without LSan). PoCL and the LLVM it embeds keep compiled programs and compiler state
// alive until exit without freeing them; those leaks are theirs, not tunebed's.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpocl.so\nleak:libLLVM-15.so\n";
}

// AddressSanitizer's default options (same interface). clang 14's __tls_get_addr interceptor takes
// a dynamic TLS block that happens to start 16 bytes into a page for a pre-2.25 glibc header and
// reads its size from the words before it; PoCL's LLVM (dlopened, TLS-heavy) hits that by chance,
// and LeakSanitizer's tracer then dies with "Tracer caught signal 11" after every test passed
// (google/sanitizers#1322, fixed in LLVM 17). Not intercepting it only means LSan does not scan
// dynamic TLS blocks, which hold nothing of tunebed's.
extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
