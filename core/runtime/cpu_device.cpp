// The CPU device: host memory, clang-compiled kernels, a thread pool for the THREAD OptOp.
#include "core/runtime/cpu_device.hpp"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>

#include "core/runtime/thread_pool.hpp"

namespace tunebed {

namespace {

constexpr size_t kAlignment = 64;  // a cache line, and enough for any vector load the C renderer emits

// "x86_64 AMD EPYC 7B13": the machine, and the CPU model where /proc/cpuinfo names one.
std::string cpu_arch(const utsname& os) {
  std::string arch = os.machine;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) arch += " " + line.substr(colon + 2);
    break;
  }
  return arch;
}

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

class CpuDevice;

class CpuBuffer final : public Buffer {
 public:
  CpuBuffer(std::shared_ptr<const Device> device, DType dtype, int64_t n)
      : Buffer(std::move(device), dtype, n),
        // never null, even for zero elements: a kernel may be handed the pointer without using it
        data_(static_cast<std::byte*>(
            ::operator new(std::max(kAlignment, (nbytes() + kAlignment - 1) / kAlignment * kAlignment),
                           std::align_val_t(kAlignment)))) {}
  ~CpuBuffer() override { ::operator delete(data_, std::align_val_t(kAlignment)); }
  void* data() const { return data_; }

 protected:
  void do_copyin(std::span<const std::byte> host) override { std::memcpy(data_, host.data(), host.size()); }
  void do_copyout(std::span<std::byte> host) const override { std::memcpy(host.data(), data_, host.size()); }

 private:
  std::byte* data_;
};

class CpuDevice final : public Device {
 public:
  CpuDevice(Fingerprint fingerprint, Capabilities caps, ClangCompiler compiler)
      : Device(std::move(fingerprint), caps), compiler_(std::move(compiler)), pool_(caps.compute_units - 1) {}
  ThreadPool& pool() { return pool_; }

 protected:
  std::unique_ptr<Buffer> do_allocate(DType dtype, int64_t n) override {
    return std::make_unique<CpuBuffer>(shared_from_this(), dtype, n);
  }
  std::unique_ptr<Program> do_compile(const std::string& source, const std::string& entry) override;

 private:
  ClangCompiler compiler_;
  ThreadPool pool_;  // compute_units - 1 workers: the launching thread is the last core
};

// Owns the dlopen handle: the kernel's code lives as long as the Program.
class CpuProgram final : public Program {
 public:
  CpuProgram(std::shared_ptr<CpuDevice> device, std::string entry, void* library, CpuKernelFn fn)
      : Program(device, std::move(entry)), device_(std::move(device)), library_(library), fn_(fn) {}
  ~CpuProgram() override { dlclose(library_); }

 protected:
  double launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                const LaunchDims& dims) override {
    return launches(bufs, vars, dims, 1);
  }
  // Under one clock pair: the host clock's steps are a kernel's whole time when it is short.
  double launches(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars, const LaunchDims& dims,
                  int n) override {
    std::vector<void*> pointers;
    pointers.reserve(bufs.size());
    // Program::run checked that every buffer lives on this device, so each is a CpuBuffer.
    for (Buffer* buf : bufs) pointers.push_back(static_cast<CpuBuffer*>(buf)->data());
    const auto num_cores = static_cast<int32_t>(dims.global[0]);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) {
      if (num_cores == 1) {
        fn_(pointers.data(), vars.data(), 0, 1);
      } else {
        device_->pool().parallel_for(num_cores,
                                     [&](int core) { fn_(pointers.data(), vars.data(), core, num_cores); });
      }
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / n;
  }

 private:
  std::shared_ptr<CpuDevice> device_;
  void* library_;
  CpuKernelFn fn_;
};

std::unique_ptr<Program> CpuDevice::do_compile(const std::string& source, const std::string& entry) {
  const std::filesystem::path object = compiler_.compile(source, entry);
  void* library = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    throw DeviceError("cannot load the compiled kernel " + object.string() + ": " + dlerror() +
                      " (delete it to recompile)");
  auto fn = reinterpret_cast<CpuKernelFn>(dlsym(library, entry.c_str()));
  if (fn == nullptr) {
    dlclose(library);
    throw CompileError("clang", entry, "the compiled source defines no function '" + entry + "'", source);
  }
  return std::make_unique<CpuProgram>(std::static_pointer_cast<CpuDevice>(shared_from_this()), entry, library,
                                      fn);
}

}  // namespace

std::shared_ptr<Device> open_cpu_device() {
  ClangCompiler compiler;  // throws, saying why, when clang cannot be run
  utsname os{};
  uname(&os);
  Capabilities caps;
  caps.compute_units = hardware_threads();
  caps.max_global_dims = {kMaxCpuSlices, 1, 1};
  Fingerprint fingerprint{"cpu", cpu_arch(os), std::string(os.sysname) + " " + os.release, "clang",
                          compiler.version()};
  return std::make_shared<CpuDevice>(std::move(fingerprint), caps, std::move(compiler));
}

}  // namespace tunebed
