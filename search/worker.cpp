#include "search/worker.hpp"

#include <chrono>
#include <exception>
#include <functional>
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

// Device buffers holding BUFFERS.
struct DeviceArgs {
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<Buffer*> bufs;
};

DeviceArgs upload(Device& device, const std::vector<HostBuffer>& buffers) {
  DeviceArgs args;
  for (const HostBuffer& host : buffers) {
    auto buf = device.allocate(host.dtype, host.numel());
    buf->copyin(host);
    args.bufs.push_back(buf.get());
    args.owned.push_back(std::move(buf));
  }
  return args;
}

// The device buffers of the data the worker holds, allocated once per data and device (fresh
// ones per job cost page faults: 3 MB of them took milliseconds). Every job starts from the data
// again: the inputs copied in, so that nothing a candidate left in a buffer reaches the next, and
// the output poisoned (check.hpp), so that an element the kernel never stores cannot pass
// verification by inheriting a correct value, sampled or not.
class Staging {
 public:
  const std::vector<Buffer*>& stage(Device& device, const JobData& data) {
    const auto output = static_cast<size_t>(data.output);
    if (output >= data.buffers.size())
      throw std::invalid_argument("output index " + std::to_string(data.output) + " is not one of the " +
                                  std::to_string(data.buffers.size()) + " buffers");
    if (&device != device_ || data.id != data_id_) {
      args_ = upload(device, data.buffers);
      const HostBuffer& out = data.buffers[output];
      poison_ = poisoned(out.dtype, out.numel());
      out_ = HostBuffer(out.dtype, out.numel());
      device_ = &device;
      data_id_ = data.id;
    } else {
      for (size_t i = 0; i < data.buffers.size(); i++)
        if (i != output) args_.bufs[i]->copyin(data.buffers[i]);
    }
    args_.bufs[output]->copyin(poison_);
    return args_.bufs;
  }

  // The output buffer's contents after a launch.
  const HostBuffer& output(const JobData& data) {
    args_.bufs[static_cast<size_t>(data.output)]->copyout(out_.bytes);
    return out_;
  }

 private:
  const Device* device_ = nullptr;
  uint64_t data_id_ = 0;
  DeviceArgs args_;
  HostBuffer poison_, out_;
};

JobResult failure(CandidateStatus status, std::string message) {
  JobResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

// The verification launch, bracketed by `launching` and `launched` where the job has a stop line,
// so that the pool stops the launch and not the staging before it; nullopt: the parent is gone.
std::optional<double> verification_launch(int fd, const Job& job, const std::function<double()>& launch) {
  if (!job.timing.stop_s) return launch();
  if (!write_frame(fd, encode_launching())) return std::nullopt;
  const double seconds = launch();
  if (!write_frame(fd, encode_launched())) return std::nullopt;
  return seconds;
}

JobResult run_and_verify(int fd, Program& program, Device& device, Staging& staging, const Job& job) {
  const JobData& data = *job.data;
  const std::vector<Buffer*>& bufs = staging.stage(device, data);
  JobResult r;
  SampleLauncher launch([&](int n) { return program.run(bufs, data.vars, job.kernel.dims, n); }, job.kernel.source);
  const std::optional<double> verified = verification_launch(fd, job, std::ref(launch));
  if (!verified) return failure(CandidateStatus::crash, "the parent went away");
  const double verified_s = *verified;
  const HostBuffer& out = staging.output(data);
  if (data.expected) {
    Verdict v = check_output(out, *data.expected);
    r.max_error = v.max_error;
    if (!v.ok) {
      r.status = CandidateStatus::wrong;
      r.message = "wrong output: " + v.message;
      return r;
    }
  }
  if (job.return_output) r.output = out;
  if (job.timing.runs > 0) {
    r.samples = measure_samples(launch, job.timing, verified_s);  // each call calibrates the next
    r.median = median(r.samples);
  }
  return r;
}

// The job's answer, and whether the worker should go on (false: the parent is gone).
std::optional<JobResult> serve_job(int fd, Staging& staging, const Job& job) {
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
    r = run_and_verify(fd, *program, *device, staging, job);
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
    DeviceArgs args = upload(*device, job.buffers);
    std::vector<SampleLauncher> launchers;  // decide's untimed round calibrates each
    for (size_t i = 0; i < programs.size(); i++)
      launchers.emplace_back([&, i](int n) { return programs[i]->run(args.bufs, job.vars, job.kernels[i].dims, n); },
                             job.kernels[i].source);
    r.decision = decide(static_cast<int>(programs.size()), job.incumbent, job.policy,
                        [&](int i) { return launchers[static_cast<size_t>(i)](); });
  } catch (const std::exception& e) {
    r.status = CandidateStatus::crash;
    r.message = std::string("re-timing failed: ") + e.what();
  }
  return r;
}

}  // namespace

void serve_jobs(int fd, std::shared_ptr<const JobData> inherited) {
  std::shared_ptr<const JobData> held = std::move(inherited);  // the data the parent sent last
  Staging staging;
  while (auto frame = read_frame(fd)) {
    WireReader reader(std::move(*frame));
    MessageKind kind = reader.kind<MessageKind>();
    if (kind == MessageKind::data) {
      held = std::make_shared<const JobData>(decode_data(reader));
    } else if (kind == MessageKind::job) {
      std::optional<JobResult> r = serve_job(fd, staging, decode_job(reader, held));
      if (!r || !write_frame(fd, encode(*r))) return;
    } else if (kind == MessageKind::retime) {
      if (!write_frame(fd, encode(serve_retime(decode_retime_job(reader))))) return;
    } else {
      throw std::runtime_error("worker got an unexpected message kind");
    }
  }
}

}  // namespace tunebed::search
