// The OpenCL backend, through the ICD loader (libOpenCL), so any installed platform works: PoCL
// on a CPU in tests and CI, a vendor driver on a GPU. Devices of all platforms form one list in
// platform order; `opencl:N` is entry N of it. Programs build from OpenCL C source; a build
// failure is a CompileError carrying the build log. The queue profiles, and a launch's time is
// its event's START..END.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/device.hpp"

namespace tunebed {

// "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL error -9999" for a code OpenCL does not define.
std::string opencl_error_name(int32_t code);

struct OpenCLDeviceEntry {
  int index;             // N of opencl:N
  int platform, device;  // positions in clGetPlatformIDs and that platform's clGetDeviceIDs
  std::string platform_name, device_name;
};

// Every device of every platform. Throws DeviceError "OpenCL is not available: ..." when the ICD
// loader finds no platform or no device.
std::vector<OpenCLDeviceEntry> list_opencl_devices();

// The index `opencl` (without :N) means: 0, or what TUNEBED_OPENCL_DEVICE chooses, as `P:D` or
// as a case-insensitive substring of "<platform name> / <device name>".
int default_opencl_device();

std::shared_ptr<Device> open_opencl_device(int index);

}  // namespace tunebed
