// Shared by the runtime tests: float data in and out of buffers, a private kernel cache per test,
// and opening a backend that a machine may lack.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/device.hpp"

namespace tunebed::testing {

inline std::unique_ptr<Buffer> upload(Device& device, const std::vector<float>& data) {
  auto buf = device.allocate(dtypes::float32, static_cast<int64_t>(data.size()));
  buf->copyin(std::as_bytes(std::span(data)));
  return buf;
}

inline std::vector<float> download(const Buffer& buf) {
  std::vector<float> out(static_cast<size_t>(buf.size()));
  buf.copyout(std::as_writable_bytes(std::span(out)));
  return out;
}

// The environment variable NAME set to VALUE for the life of the scope, then as it was.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Points TUNEBED_CACHE_DIR at a fresh directory for the test's lifetime, so a test sees its own
// cache misses and hits, and nothing lands in the user's cache.
class ScopedCacheDir {
 public:
  ScopedCacheDir() : dir_(fresh_dir()), env_("TUNEBED_CACHE_DIR", dir_.string()) {}
  ~ScopedCacheDir() { std::filesystem::remove_all(dir_); }
  const std::filesystem::path& path() const { return dir_; }

 private:
  static std::filesystem::path fresh_dir() {
    static int counter = 0;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        ("tunebed-runtime-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir);
    return dir;
  }
  std::filesystem::path dir_;
  ScopedEnv env_;
};

// The device, or the reason it cannot be opened (for GTEST_SKIP).
struct Opened {
  std::shared_ptr<Device> device;
  std::string why_not;
};
inline Opened try_open(const std::string& spec) {
  try {
    return {open_device(spec), ""};
  } catch (const DeviceError& e) {
    return {nullptr, e.what()};
  }
}

}  // namespace tunebed::testing
