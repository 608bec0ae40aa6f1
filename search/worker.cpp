#include "search/worker.hpp"

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>

namespace tunebed::search {

namespace {

// Devices stay open for the worker's life: opening one (an OpenCL context, a CUDA context) costs
// far more than a job, and the CPU device's thread pool is created once.
std::shared_ptr<Device> device_for(const std::string& spec) {
  static std::map<std::string, std::shared_ptr<Device>> open;
  auto& dev = open[spec];
  if (!dev) dev = open_device(spec);
  return dev;
}

// Device buffers holding the job's data, the output poisoned (check.hpp) so that an element the
// kernel never stores cannot pass verification by inheriting a correct value, sampled or not.
struct DeviceArgs {
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<Buffer*> bufs;
};

DeviceArgs upload(Device& device, const std::vector<HostBuffer>& buffers, std::optional<int> output) {
  DeviceArgs args;
  for (size_t i = 0; i < buffers.size(); i++) {
    const HostBuffer& host = buffers[i];
    auto buf = device.allocate(host.dtype, host.numel());
    if (output && static_cast<int>(i) == *output) {
      buf->copyin(poisoned(host.dtype, host.numel()));
    } else {
      buf->copyin(host);
    }
    args.bufs.push_back(buf.get());
    args.owned.push_back(std::move(buf));
  }
  return args;
}

JobResult failure(CandidateStatus status, std::string message) {
  JobResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

JobResult run_and_verify(Program& program, Device& device, const Job& job) {
  if (job.output < 0 || job.output >= static_cast<int>(job.buffers.size()))
    throw std::invalid_argument("output index " + std::to_string(job.output) + " is not one of the " +
                                std::to_string(job.buffers.size()) + " buffers");
  DeviceArgs args = upload(device, job.buffers, job.output);
  JobResult r;
  const auto launch = [&] { return launch_seconds(job.kernel.source, program.run(args.bufs, job.vars, job.kernel.dims)); };
  const double verified_s = launch();
  HostBuffer out = args.bufs[job.output]->to_host();
  if (job.expected) {
    Verdict v = check_output(out, *job.expected);
    r.max_error = v.max_error;
    if (!v.ok) {
      r.status = CandidateStatus::wrong;
      r.message = "wrong output: " + v.message;
      return r;
    }
  }
  if (job.return_output) r.output = std::move(out);
  if (job.timing.runs > 0) {
    r.samples = measure_samples(launch, job.timing, verified_s);
    r.median = median(r.samples);
  }
  return r;
}

// The job's answer, and whether the worker should go on (false: the parent is gone).
std::optional<JobResult> serve_job(int fd, const Job& job) {
  std::unique_ptr<Program> program;
  std::shared_ptr<Device> device;
  double compile_ms = 0;
  try {
    device = device_for(job.device);
    auto start = std::chrono::steady_clock::now();
    program = device->compile(job.kernel.source, job.kernel.entry);
    compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  } catch (const CompileError& e) {
    return failure(CandidateStatus::compile_error, e.what());
  } catch (const std::exception& e) {
    // A device that cannot be opened or a program that cannot be loaded: the candidate never ran.
    return failure(CandidateStatus::compile_error, e.what());
  }
  if (!write_frame(fd, encode_compiled(compile_ms))) return std::nullopt;
  auto go = read_frame(fd);
  if (!go) return std::nullopt;
  JobResult r;
  try {
    r = run_and_verify(*program, *device, job);
  } catch (const std::exception& e) {
    // A launch the device refused (bad dims, a driver error): the candidate is broken, not the
    // worker. A segfault does not come here; the pool sees the signal.
    r = failure(CandidateStatus::crash, std::string("launch failed: ") + e.what());
  }
  r.compile_ms = compile_ms;
  return r;
}

RetimeResult serve_retime(const RetimeJob& job) {
  RetimeResult r;
  try {
    std::shared_ptr<Device> device = device_for(job.device);
    std::vector<std::unique_ptr<Program>> programs;
    for (const KernelSource& k : job.kernels) programs.push_back(device->compile(k.source, k.entry));
    DeviceArgs args = upload(*device, job.buffers, std::nullopt);
    r.decision = decide(static_cast<int>(programs.size()), job.incumbent, job.policy, [&](int i) {
      return launch_seconds(job.kernels[i].source,
                            programs[i]->run(args.bufs, job.vars, job.kernels[i].dims));
    });
  } catch (const std::exception& e) {
    r.status = CandidateStatus::crash;
    r.message = std::string("re-timing failed: ") + e.what();
  }
  return r;
}

}  // namespace

void serve_jobs(int fd) {
  while (auto frame = read_frame(fd)) {
    WireReader reader(std::move(*frame));
    MessageKind kind = reader.kind<MessageKind>();
    if (kind == MessageKind::job) {
      std::optional<JobResult> r = serve_job(fd, decode_job(reader));
      if (!r || !write_frame(fd, encode(*r))) return;
    } else if (kind == MessageKind::retime) {
      if (!write_frame(fd, encode(serve_retime(decode_retime_job(reader))))) return;
    } else {
      throw std::runtime_error("worker got an unexpected message kind");
    }
  }
}

}  // namespace tunebed::search
