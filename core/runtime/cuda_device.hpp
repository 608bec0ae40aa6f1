// The CUDA backend, with no CUDA at build time: libcuda (the driver API) and libnvrtc (the
// runtime compiler) are found with dlopen when first needed, trying the unversioned and the
// versioned names (libnvrtc.so.13, .12, ...) and /usr/local/cuda's lib64. tunebed builds and runs
// where CUDA is absent and says so when asked for it: open_device("cuda") throws
// "CUDA is not available: libcuda.so could not be loaded (...)".
//
// NVRTC compiles CUDA C for a real architecture (sm_90): the cubin is what the driver loads (it
// also loads on a driver older than NVRTC, which PTX would not), the PTX is kept for reading.
// nvrtc_compile needs no GPU, so kernels can be compile-checked on any machine with libnvrtc.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/device.hpp"

namespace tunebed {

struct CudaBinary {
  std::string ptx;
  std::string cubin;
};

// Why NVRTC cannot be used ("libnvrtc.so could not be loaded (...)"), or nothing when it can.
std::optional<std::string> nvrtc_unavailable_reason();
std::string nvrtc_version();  // "13.0"; throws DeviceError when NVRTC is not available

// Compiles `source` for `arch` ("sm_90"); `entry` names the kernel in error messages.
// Throws CompileError with NVRTC's log and the source, DeviceError when NVRTC is missing.
CudaBinary nvrtc_compile(const std::string& source, const std::string& entry, const std::string& arch,
                         const std::vector<std::string>& extra_options = {});

std::shared_ptr<Device> open_cuda_device(int index);

}  // namespace tunebed
