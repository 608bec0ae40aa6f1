// The runtime: where rendered source becomes a running kernel. It knows nothing about UOps or
// kernels; it takes source text, an entry name, buffers, int variables and launch dimensions.
// Code generation (core/codegen) writes the source; the optimizer builds its Renderer record from
// the Capabilities here; search/ measures with Program::time. It follows tinygrad's
// `device.py` (Device, Buffer/Allocator, Compiler, Program) and its runtime/ops_*.py backends.
//
// Device
//   `open_device(spec)` parses `cpu`, `opencl[:N]` or `cuda[:N]` (backend names case-insensitive)
//   and returns the device, shared: opening the same name twice while the first is alive gives
//   the same object, so buffers and programs of "opencl:0" all live in one context. A bad spec or
//   a backend that is not there throws DeviceError with the reason ("CUDA is not available:
//   libcuda.so could not be loaded (...)"). `opencl` without an index means device 0 of the
//   flattened (platform, device) list unless TUNEBED_OPENCL_DEVICE chooses: `P:D` (platform P,
//   its device D) or a case-insensitive substring of "<platform name> / <device name>".
//   `opencl:N` always means entry N. Every device has a Fingerprint (which hardware, driver and
//   compiler produced a timing: the tuning database stores it) and Capabilities (plain numbers).
//
// Buffer
//   `device->allocate(dtype, n)`: device memory for n elements of a scalar dtype, freed when the
//   Buffer goes. copyin/copyout move exactly nbytes() between host and device, blocking.
//
// Program
//   `device->compile(source, entry)`: the device's compiler turns the source into a runnable
//   entry point, or throws CompileError carrying the compiler's message and the source.
//   `run(bufs, vars, dims)` launches once, waits, and returns the seconds the device's clock saw;
//   `time(...)` warms up (`warmup` launches, and at least kWarmupSpan of them), then takes `runs`
//   samples and reports every sample and their median. The clocks: CPU, std::chrono::steady_clock
//   around the whole launch (thread-pool dispatch included); OpenCL, the event's profiling
//   START..END; CUDA, events before and after.
//
// Launch dimensions, as tinygrad's ProgramSpec: `global` counts work-groups (CUDA's grid, not
// OpenCL's global work size: the OpenCL backend multiplies by `local` itself), `local` counts the
// work-items of one group. Arguments go in order: every buffer, then every int32 variable.
//
// THE CPU KERNEL ABI (what the C renderer emits, compiled by clang into a shared object):
//     void NAME(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores);
//   Program::run calls it once for every core_id in [0, num_cores) on the device's persistent
//   thread pool and returns when all have finished. num_cores is dims.global[0]: the amount of
//   the THREAD OptOp when the kernel splits a GLOBAL axis across cores, else 1 (then the call runs
//   on the caller's thread). The CPU has no locals: local must be {1, 1, 1}.
//   Flags: clang -O2 -march=native -fPIC -shared -fno-math-errno -ffp-contract=on -lm. FP
//   contraction is the C default made explicit: a*b+c within one expression may become an FMA,
//   which rounds once instead of twice, so results stay within the tolerance against the
//   reference (the OpenCL and CUDA compilers contract too), and matmul needs the FMAs to be fast.
//   No -ffast-math: reassociation would change reduction results and NaN/inf handling.
//   Shared objects are cached under $TUNEBED_CACHE_DIR, else $XDG_CACHE_HOME/tunebed, else
//   ~/.cache/tunebed (in cpu/), keyed by a hash of the source, the flags and clang's version.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/dtype.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/ir/launch_dims.hpp"
#include "core/runtime/sampler.hpp"

namespace tunebed {

// A device that cannot be opened, a bad spec, a bad launch, a driver call that failed.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device's compiler rejected the source. what() is "<compiler> failed to compile '<entry>':
// <message>"; the source is kept beside it for whoever prints the failure (with line numbers).
class CompileError : public std::runtime_error {
 public:
  CompileError(const std::string& compiler, const std::string& entry, std::string log, std::string source);
  const std::string& log() const { return log_; }
  const std::string& source() const { return source_; }
  std::string numbered_source() const;  // "  1 | first line\n  2 | ..."

 private:
  std::string log_, source_;
};

enum class DeviceKind { Cpu, OpenCL, Cuda };

struct DeviceSpec {
  DeviceKind kind = DeviceKind::Cpu;
  std::optional<int> index;  // opencl:N, cuda:N; none for cpu
};
DeviceSpec parse_device_spec(const std::string& spec);  // throws DeviceError naming the spec

// Which machine, driver and compiler made a measurement (a key column of the tuning database).
struct Fingerprint {
  std::string name;              // "cpu", "opencl:0", "cuda:0"
  std::string arch;              // "x86_64 AMD EPYC 7B13", the OpenCL device name, "sm_90"
  std::string driver;            // "Linux 6.1.0", the OpenCL driver version, "CUDA driver 12.4"
  std::string compiler;          // "clang", "OpenCL C (Portable Computing Language)", "nvrtc"
  std::string compiler_version;  // "14.0.6", "OpenCL C 1.2 PoCL", "12.4"
};

// What the optimizer may ask of the device. Sizes count elements of the launch dims above.
struct Capabilities {
  int compute_units = 1;       // CPU cores, OpenCL compute units, CUDA SMs
  int64_t max_local_size = 1;  // work-items in one group, all dims together
  std::array<int64_t, 3> max_local_dims{1, 1, 1};
  std::array<int64_t, 3> max_global_dims{1, 1, 1};  // work-groups per dim (CPU: thread slices)
  int64_t shared_memory_bytes = 0;                  // __local / __shared__ memory of one group
  bool has_local() const { return max_local_size > 1; }
  bool has_shared() const { return shared_memory_bytes > 0; }
};

struct TimingOptions {
  int warmup = 2;
  int runs = 10;
};

struct Timing {
  double median = 0;            // seconds
  std::vector<double> samples;  // seconds, in the order they were measured
};

class Device;

class Buffer {
 public:
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  virtual ~Buffer() = default;

  const Device& device() const { return *device_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return size_; }  // elements
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_.itemsize(); }

  // Exactly nbytes() bytes each way; a size mismatch throws DeviceError.
  void copyin(std::span<const std::byte> host);
  void copyout(std::span<std::byte> host) const;
  void copyin(const HostBuffer& host);  // dtype and element count must match
  HostBuffer to_host() const;

 protected:
  Buffer(std::shared_ptr<const Device> device, DType dtype, int64_t size);
  virtual void do_copyin(std::span<const std::byte> host) = 0;
  virtual void do_copyout(std::span<std::byte> host) const = 0;

 private:
  std::shared_ptr<const Device> device_;  // kept alive: the buffer's memory belongs to its context
  DType dtype_;
  int64_t size_;
};

class Program {
 public:
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  virtual ~Program() = default;

  const Device& device() const { return *device_; }
  const std::string& entry() const { return entry_; }

  // LAUNCHES launches back to back (at least 1), waited for; returns the seconds per launch
  // measured by the device's clock. The dims are checked against the device's Capabilities and
  // every buffer must belong to this device.
  double run(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars, const LaunchDims& dims,
             int launches = 1);
  // Samples of a LaunchSampler (sampler.hpp), after a warm-up of at least `warmup` launches (and
  // at least one) spanning kWarmupSpan.
  Timing time(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars, const LaunchDims& dims,
              const TimingOptions& options = {});

 protected:
  Program(std::shared_ptr<const Device> device, std::string entry);
  virtual double launch(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                        const LaunchDims& dims) = 0;
  // N launches' seconds per launch. By default the mean of N timed launches; a device whose clock
  // is coarser than its short kernels (the CPU's) times them all under one clock pair.
  virtual double launches(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars,
                          const LaunchDims& dims, int n);

 private:
  double launch_n(const std::vector<Buffer*>& bufs, const std::vector<int32_t>& vars, const LaunchDims& dims,
                  int n);  // launch, or launches where N > 1

  std::shared_ptr<const Device> device_;
  std::string entry_;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  virtual ~Device() = default;

  const std::string& name() const { return fingerprint_.name; }
  const Fingerprint& fingerprint() const { return fingerprint_; }
  const Capabilities& capabilities() const { return capabilities_; }

  // dtype must be a scalar (not void, vector or pointer); n >= 0.
  std::unique_ptr<Buffer> allocate(DType dtype, int64_t n);
  std::unique_ptr<Program> compile(const std::string& source, const std::string& entry);

 protected:
  Device(Fingerprint fingerprint, Capabilities capabilities)
      : fingerprint_(std::move(fingerprint)), capabilities_(capabilities) {}
  virtual std::unique_ptr<Buffer> do_allocate(DType dtype, int64_t n) = 0;
  virtual std::unique_ptr<Program> do_compile(const std::string& source, const std::string& entry) = 0;

 private:
  Fingerprint fingerprint_;
  Capabilities capabilities_;
};

std::shared_ptr<Device> open_device(const std::string& spec);

}  // namespace tunebed
