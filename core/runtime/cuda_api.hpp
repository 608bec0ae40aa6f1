// The few entry points of the CUDA driver API and of NVRTC that the CUDA backend calls, declared
// here (no CUDA headers at build time) and resolved with dlopen/dlsym on first use. The types
// and enum values are those of cuda.h and nvrtc.h, which have been ABI-stable for a decade; where
// a function has versioned symbols (cuMemAlloc_v2) the table holds the one cuda.h maps to.
#pragma once

#include <cstddef>
#include <string>

namespace tunebed::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;
using CUjit_option = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;  // Y, Z follow
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;   // Y, Z follow
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

struct Driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options,
                                 CUjit_option* options, void** values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                             CUstream stream, void** params, void** extra);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
};

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct Nvrtc {
  nvrtcResult (*nvrtcVersion)(int* major, int* minor);
  const char* (*nvrtcGetErrorString)(nvrtcResult result);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name,
                                    int num_headers, const char* const* headers,
                                    const char* const* include_names);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int num_options, const char* const* options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, size_t* size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram program, size_t* size);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram program, char* ptx);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, size_t* size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin);
};

// The loaded tables, or DeviceError "CUDA is not available: libcuda.so could not be loaded (...)"
// (resp. "NVRTC is not available: ..."). Loaded once; a failure is remembered and rethrown.
const Driver& driver();
const Nvrtc& nvrtc();

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory"
std::string error_text(CUresult result);
// Throws DeviceError "<call> failed: <error_text>" unless result is CUDA_SUCCESS.
void check(CUresult result, const std::string& call);

}  // namespace tunebed::cuda
