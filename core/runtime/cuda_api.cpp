#include "core/runtime/cuda_api.hpp"

#include <dlfcn.h>

#include <initializer_list>
#include <variant>

#include "core/runtime/device.hpp"

namespace tunebed::cuda {

namespace {

// The first of `names` that dlopen accepts; else DeviceError listing why each was refused.
void* open_library(std::initializer_list<const char*> names, const std::string& what,
                   const std::string& shown) {
  std::string reasons;
  for (const char* name : names) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + std::string(why ? why : name);
  }
  throw DeviceError(what + " is not available: " + shown + " could not be loaded (" + reasons + ")");
}

// Fills `slot` with the first of `names` the library exports; notes it as missing otherwise.
template <typename Fn>
void bind(void* lib, Fn& slot, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names) {
    if (void* symbol = dlsym(lib, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return;
    }
  }
  missing += std::string(missing.empty() ? "" : ", ") + *names.begin();
}

Driver load_driver() {
  void* lib = open_library({"libcuda.so.1", "libcuda.so"}, "CUDA", "libcuda.so");
  Driver d{};
  std::string missing;
  bind(lib, d.cuInit, {"cuInit"}, missing);
  bind(lib, d.cuDriverGetVersion, {"cuDriverGetVersion"}, missing);
  bind(lib, d.cuDeviceGetCount, {"cuDeviceGetCount"}, missing);
  bind(lib, d.cuDeviceGet, {"cuDeviceGet"}, missing);
  bind(lib, d.cuDeviceGetName, {"cuDeviceGetName"}, missing);
  bind(lib, d.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing);
  bind(lib, d.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing);
  bind(lib, d.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
       missing);
  bind(lib, d.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing);
  bind(lib, d.cuCtxSynchronize, {"cuCtxSynchronize"}, missing);
  bind(lib, d.cuMemAlloc, {"cuMemAlloc_v2"}, missing);
  bind(lib, d.cuMemFree, {"cuMemFree_v2"}, missing);
  bind(lib, d.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing);
  bind(lib, d.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing);
  bind(lib, d.cuModuleLoadDataEx, {"cuModuleLoadDataEx"}, missing);
  bind(lib, d.cuModuleUnload, {"cuModuleUnload"}, missing);
  bind(lib, d.cuModuleGetFunction, {"cuModuleGetFunction"}, missing);
  bind(lib, d.cuLaunchKernel, {"cuLaunchKernel"}, missing);
  bind(lib, d.cuEventCreate, {"cuEventCreate"}, missing);
  bind(lib, d.cuEventRecord, {"cuEventRecord"}, missing);
  bind(lib, d.cuEventSynchronize, {"cuEventSynchronize"}, missing);
  // _v2 since CUDA 12.8; older drivers have only the first version, with the same signature.
  bind(lib, d.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  bind(lib, d.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, missing);
  bind(lib, d.cuGetErrorName, {"cuGetErrorName"}, missing);
  bind(lib, d.cuGetErrorString, {"cuGetErrorString"}, missing);
  if (!missing.empty())
    throw DeviceError("CUDA is not available: libcuda has no " + missing + " (driver too old?)");
  return d;
}

Nvrtc load_nvrtc() {
  void* lib = open_library({"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                            "/usr/local/cuda/lib64/libnvrtc.so"},
                           "NVRTC", "libnvrtc.so");
  Nvrtc n{};
  std::string missing;
  bind(lib, n.nvrtcVersion, {"nvrtcVersion"}, missing);
  bind(lib, n.nvrtcGetErrorString, {"nvrtcGetErrorString"}, missing);
  bind(lib, n.nvrtcCreateProgram, {"nvrtcCreateProgram"}, missing);
  bind(lib, n.nvrtcDestroyProgram, {"nvrtcDestroyProgram"}, missing);
  bind(lib, n.nvrtcCompileProgram, {"nvrtcCompileProgram"}, missing);
  bind(lib, n.nvrtcGetProgramLogSize, {"nvrtcGetProgramLogSize"}, missing);
  bind(lib, n.nvrtcGetProgramLog, {"nvrtcGetProgramLog"}, missing);
  bind(lib, n.nvrtcGetPTXSize, {"nvrtcGetPTXSize"}, missing);
  bind(lib, n.nvrtcGetPTX, {"nvrtcGetPTX"}, missing);
  bind(lib, n.nvrtcGetCUBINSize, {"nvrtcGetCUBINSize"}, missing);
  bind(lib, n.nvrtcGetCUBIN, {"nvrtcGetCUBIN"}, missing);
  if (!missing.empty())
    throw DeviceError("NVRTC is not available: libnvrtc has no " + missing + " (older than 11.1?)");
  return n;
}

// The table, or the message of the failure to load it, computed once.
template <typename Table>
const Table& loaded(Table (*load)()) {
  using Outcome = std::variant<Table, std::string>;
  static const Outcome outcome = [&]() -> Outcome {
    try {
      return load();
    } catch (const DeviceError& e) {
      return std::string(e.what());
    }
  }();
  if (const auto* error = std::get_if<std::string>(&outcome)) throw DeviceError(*error);
  return std::get<Table>(outcome);
}

}  // namespace

const Driver& driver() { return loaded(load_driver); }
const Nvrtc& nvrtc() { return loaded(load_nvrtc); }

std::string error_text(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  const Driver& d = driver();
  d.cuGetErrorName(result, &name);
  d.cuGetErrorString(result, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(result)) +
         (text ? std::string(": ") + text : "");
}

void check(CUresult result, const std::string& call) {
  if (result != CUDA_SUCCESS) throw DeviceError(call + " failed: " + error_text(result));
}

}  // namespace tunebed::cuda
