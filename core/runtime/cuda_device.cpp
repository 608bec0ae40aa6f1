// The CUDA device: the device's primary context, buffers from cuMemAlloc, modules from NVRTC's
// cubin, launches on the default stream timed by a pair of events.
#include "core/runtime/cuda_device.hpp"

#include <filesystem>

#include "core/runtime/cuda_api.hpp"

namespace tunebed {

using namespace cuda;

std::optional<std::string> nvrtc_unavailable_reason() {
  try {
    nvrtc();
    return std::nullopt;
  } catch (const DeviceError& e) {
    return e.what();
  }
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc().nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

CudaBinary nvrtc_compile(const std::string& source, const std::string& entry, const std::string& arch,
                         const std::vector<std::string>& extra_options) {
  const Nvrtc& api = nvrtc();
  std::vector<std::string> options{"--gpu-architecture=" + arch};
  // cuda_fp16.h and friends, for kernels on half and bfloat16, where the toolkit is installed.
  if (std::filesystem::exists("/usr/local/cuda/include/cuda_fp16.h"))
    options.emplace_back("-I/usr/local/cuda/include");
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> option_ptrs;
  option_ptrs.reserve(options.size());
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  nvrtcProgram program = nullptr;
  const std::string file = entry + ".cu";
  nvrtcResult result = api.nvrtcCreateProgram(&program, source.c_str(), file.c_str(), 0, nullptr, nullptr);
  if (result != 0)
    throw DeviceError(std::string("nvrtcCreateProgram failed: ") + api.nvrtcGetErrorString(result));
  struct Destroy {
    const Nvrtc& api;
    nvrtcProgram& program;
    ~Destroy() { api.nvrtcDestroyProgram(&program); }
  } destroy{api, program};

  result = api.nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  if (result != 0) {
    size_t size = 0;
    std::string log;
    if (api.nvrtcGetProgramLogSize(program, &size) == 0 && size > 0) {
      log.resize(size);
      api.nvrtcGetProgramLog(program, log.data());
      log.resize(size - 1);  // the size counts the terminating NUL
    }
    throw CompileError("nvrtc", entry, std::string(api.nvrtcGetErrorString(result)) + "\n" + log, source);
  }
  auto read = [&](auto get_size, auto get, const char* what) {
    size_t size = 0;
    if (get_size(program, &size) != 0)
      throw DeviceError(std::string("NVRTC has no ") + what + " for '" + entry + "'");
    std::string out(size, '\0');
    if (get(program, out.data()) != 0)
      throw DeviceError(std::string("NVRTC has no ") + what + " for '" + entry + "'");
    return out;
  };
  return {read(api.nvrtcGetPTXSize, api.nvrtcGetPTX, "PTX"),
          read(api.nvrtcGetCUBINSize, api.nvrtcGetCUBIN, "cubin")};
}

namespace {

int attribute(CUdevice device, int which) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

class CudaDevice final : public Device {
 public:
  CudaDevice(Fingerprint fingerprint, Capabilities caps, CUdevice device, std::string arch)
      : Device(std::move(fingerprint), caps), device_(device), arch_(std::move(arch)) {
    check(driver().cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain for " + name());
  }
  ~CudaDevice() override { driver().cuDevicePrimaryCtxRelease(device_); }

  // Driver calls act on the calling thread's current context; every entry point sets it first.
  void make_current() const { check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent for " + name()); }
  CUcontext context() const { return context_; }
  const std::string& arch() const { return arch_; }

 protected:
  std::unique_ptr<Buffer> do_allocate(DType dtype, int64_t n) override;
  std::unique_ptr<Program> do_compile(const std::string& source, const std::string& entry) override;

 private:
  CUdevice device_;
  CUcontext context_ = nullptr;
  std::string arch_;
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<const CudaDevice> device, DType dtype, int64_t n)
      : Buffer(device, dtype, n), device_(std::move(device)) {
    device_->make_current();
    check(driver().cuMemAlloc(&ptr_, std::max<size_t>(nbytes(), 1)),
          "cuMemAlloc of " + std::to_string(nbytes()) + " bytes on " + device_->name());
  }
  ~CudaBuffer() override {
    driver().cuCtxSetCurrent(device_->context());  // no throwing from a destructor: errors ignored
    driver().cuMemFree(ptr_);
  }
  CUdeviceptr ptr() const { return ptr_; }

 protected:
  void do_copyin(std::span<const std::byte> host) override {
    device_->make_current();
    check(driver().cuMemcpyHtoD(ptr_, host.data(), host.size()), "cuMemcpyHtoD on " + device_->name());
  }
  void do_copyout(std::span<std::byte> host) const override {
    device_->make_current();
    check(driver().cuMemcpyDtoH(host.data(), ptr_, host.size()), "cuMemcpyDtoH on " + device_->name());
  }

 private:
  std::shared_ptr<const CudaDevice> device_;
  CUdeviceptr ptr_ = 0;
};

class CudaProgram final : public Program {
 public:
  CudaProgram(std::shared_ptr<const CudaDevice> device, const std::string& source, const std::string& entry);
  ~CudaProgram() override {
    const Driver& d = driver();
    d.cuCtxSetCurrent(device_->context());  // the module belongs to it; errors ignored in a destructor
    d.cuEventDestroy(start_);
    d.cuEventDestroy(end_);
    d.cuModuleUnload(module_);
  }

 protected:
  double launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                const LaunchDims& dims) override;

 private:
  std::shared_ptr<const CudaDevice> device_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUevent start_ = nullptr, end_ = nullptr;
};

CudaProgram::CudaProgram(std::shared_ptr<const CudaDevice> device, const std::string& source,
                         const std::string& entry)
    : Program(device, entry), device_(std::move(device)) {
  const CudaBinary binary = nvrtc_compile(source, entry, device_->arch());
  const Driver& d = driver();
  device_->make_current();
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  // The driver takes every option value as a void*, integers included.
  void* values[] = {log, reinterpret_cast<void*>(sizeof log)};  // NOLINT(performance-no-int-to-ptr)
  if (const CUresult r = d.cuModuleLoadDataEx(&module_, binary.cubin.data(), 2, options, values);
      r != CUDA_SUCCESS)
    throw DeviceError("cuModuleLoadDataEx of '" + entry + "' on " + device_->name() +
                      " failed: " + error_text(r) + (log[0] ? std::string("\n") + log : ""));
  if (d.cuModuleGetFunction(&function_, module_, entry.c_str()) != CUDA_SUCCESS) {
    d.cuModuleUnload(module_);
    throw CompileError("nvrtc", entry, "the module has no kernel '" + entry + "' (missing extern \"C\"?)",
                       source);
  }
  check(d.cuEventCreate(&start_, 0), "cuEventCreate");
  check(d.cuEventCreate(&end_, 0), "cuEventCreate");
}

double CudaProgram::launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                           const LaunchDims& dims) {
  const Driver& d = driver();
  const std::string where = "launch of '" + entry() + "' on " + device_->name();
  device_->make_current();
  std::vector<CUdeviceptr> pointers;
  pointers.reserve(bufs.size());
  // Program::run checked that every buffer lives on this device, so each is a CudaBuffer.
  for (Buffer* buf : bufs) pointers.push_back(static_cast<CudaBuffer*>(buf)->ptr());
  std::vector<int32_t> values = vars;
  std::vector<void*> params;
  params.reserve(pointers.size() + values.size());
  for (CUdeviceptr& p : pointers) params.push_back(&p);
  for (int32_t& v : values) params.push_back(&v);
  auto u = [](int64_t x) { return static_cast<unsigned>(x); };
  check(d.cuEventRecord(start_, nullptr), where + ": cuEventRecord");
  check(d.cuLaunchKernel(function_, u(dims.global[0]), u(dims.global[1]), u(dims.global[2]), u(dims.local[0]),
                         u(dims.local[1]), u(dims.local[2]), 0, nullptr, params.data(), nullptr),
        where + ": cuLaunchKernel");
  check(d.cuEventRecord(end_, nullptr), where + ": cuEventRecord");
  check(d.cuEventSynchronize(end_), where);
  float ms = 0;
  check(d.cuEventElapsedTime(&ms, start_, end_), where + ": cuEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

std::unique_ptr<Buffer> CudaDevice::do_allocate(DType dtype, int64_t n) {
  return std::make_unique<CudaBuffer>(std::static_pointer_cast<const CudaDevice>(shared_from_this()), dtype,
                                      n);
}

std::unique_ptr<Program> CudaDevice::do_compile(const std::string& source, const std::string& entry) {
  return std::make_unique<CudaProgram>(std::static_pointer_cast<const CudaDevice>(shared_from_this()), source,
                                       entry);
}

}  // namespace

std::shared_ptr<Device> open_cuda_device(int index) {
  const Driver& d = driver();
  if (const CUresult r = d.cuInit(0); r != CUDA_SUCCESS)
    throw DeviceError("CUDA is not available: cuInit failed: " + error_text(r));
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (index < 0 || index >= count)
    throw DeviceError("CUDA device " + std::to_string(index) + " does not exist: " + std::to_string(count) +
                      " device(s) found");
  CUdevice device = 0;
  check(d.cuDeviceGet(&device, index), "cuDeviceGet");
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  int version = 0;
  check(d.cuDriverGetVersion(&version), "cuDriverGetVersion");

  const std::string arch = "sm_" +
                           std::to_string(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
                           std::to_string(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  Capabilities caps;
  caps.compute_units = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  caps.max_local_size = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  for (int i = 0; i < 3; ++i) {
    caps.max_local_dims[i] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i);
    caps.max_global_dims[i] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i);
  }
  // Static __shared__ arrays are capped at this (48 KiB); more needs dynamic shared memory.
  caps.shared_memory_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);

  Fingerprint fingerprint{
      "cuda:" + std::to_string(index), std::string(name) + " (" + arch + ")",
      "CUDA driver " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10), "nvrtc",
      nvrtc_version()};
  return std::make_shared<CudaDevice>(std::move(fingerprint), caps, device, arch);
}

}  // namespace tunebed
