// The CPU backend: C source compiled by clang into a cached shared object, loaded with dlopen and
// run on a persistent thread pool in the kernel ABI of device.hpp.
//
// The compiler is `clang` unless TUNEBED_CLANG names another (say clang-17); its version is part
// of the fingerprint and of the cache key, so upgrading clang never reuses an old object.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/device.hpp"

namespace tunebed {

// The signature every CPU kernel has (see device.hpp).
using CpuKernelFn = void (*)(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores);

// The most slices a CPU launch may split into (global[0]); the pool queues those beyond its threads.
inline constexpr int64_t kMaxCpuSlices = 1024;

class ClangCompiler {
 public:
  // Runs `clang --version` and finds clang's linker, once per process and clang; throws
  // DeviceError when either cannot be run.
  ClangCompiler();

  const std::string& executable() const { return executable_; }
  const std::string& version() const { return version_; }  // "14.0.6"
  const std::vector<std::string>& flags() const { return flags_; }

  // The path of a shared object built from `source`: from the cache when an earlier compile
  // (in any process) left it there, else from a fresh clang run. Throws CompileError.
  std::filesystem::path compile(const std::string& source, const std::string& entry) const;

 private:
  std::string executable_, version_, version_line_, linker_;
  std::vector<std::string> flags_;
};

// $TUNEBED_CACHE_DIR, else $XDG_CACHE_HOME/tunebed, else ~/.cache/tunebed; read on every call.
std::filesystem::path cache_dir();

// How many times this process has run clang to compile a kernel: a cache hit leaves it as it is.
int64_t clang_invocations();

std::shared_ptr<Device> open_cpu_device();

}  // namespace tunebed
