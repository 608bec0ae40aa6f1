// What a worker process is asked to do, what it answers, and how both cross the pipe.
//
// A Job is everything needed to try one candidate without the parent's help: the device spec,
// the rendered source and its entry point, the launch, the kernel's JobData and the timing
// parameters. JobData is what every candidate of a kernel shares: every buffer's initial contents
// as a HostBuffer (the output's contents are ignored: the worker poisons it, core/engine/check.hpp,
// so an element the kernel never writes shows up as wrong), which buffer is the output, and what a
// correct output is (exact values with error bounds, from the AST interpreter:
// core/engine/check.hpp). It crosses to a worker once, before the first job that needs it, and
// jobs name it by id: a matmul 512's candidate would otherwise carry 7 MB through two copies and a
// socket each way (about 90 ms a candidate on this project's machine, most of it page faults of
// the fresh copies). A job without an expectation is not verified and can return its output
// instead: that is how the unoptimized kernel's output is read for the independent check.
//
// A RetimeJob re-times several already verified candidates on the same buffers, interleaved, and
// decides which is fastest (decide.hpp), inside one worker so that they share one clock.
//
// Both cross the worker's socket as frames of wire.hpp's fields, the first byte a MessageKind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/error_bound.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/runtime/device.hpp"
#include "results/records.hpp"
#include "search/decide.hpp"
#include "search/measure.hpp"
#include "search/wire.hpp"

namespace tunebed::search {

using results::CandidateStatus;

struct KernelSource {
  std::string source, entry;
  LaunchDims dims;
};

struct JobData {
  uint64_t id = 0;  // unique in the process that made it (share()); 0: not shared yet
  std::vector<int32_t> vars;
  std::vector<HostBuffer> buffers;  // every buffer, in argument order
  int output = 0;                   // index into buffers
  std::optional<Expected> expected;
};

// DATA, immutable from now on, under an id no other JobData of this process has.
std::shared_ptr<const JobData> share(JobData data);

struct Job {
  std::string device = "cpu";  // an open_device spec
  KernelSource kernel;
  std::shared_ptr<const JobData> data;
  bool return_output = false;
  TimingParams timing;
};

struct JobResult {
  CandidateStatus status = CandidateStatus::ok;
  std::string message;  // the compiler's message, the signal, the timeout, the mismatch
  std::optional<double> compile_ms;
  std::vector<double> samples;  // seconds, in measurement order
  std::optional<double> median;
  std::optional<double> max_error;
  std::optional<HostBuffer> output;  // when the job asked for it and the kernel ran
};

struct RetimeJob {
  std::string device = "cpu";
  std::vector<KernelSource> kernels;
  std::vector<int32_t> vars;
  std::vector<HostBuffer> buffers;
  DecisionPolicy policy;
  std::optional<int> incumbent;  // the index of the kernel that holds the title, if any
  double timeout_s = 30;
};

struct RetimeResult {
  CandidateStatus status = CandidateStatus::ok;  // ok, or what went wrong for all of them
  std::string message;
  Decision decision;
};

// Message kinds: the first payload byte.
enum class MessageKind : uint8_t {
  job = 1,       // parent -> worker: a Job (its data by id)
  retime = 2,    // parent -> worker: a RetimeJob
  compiled = 3,  // worker -> parent: compiled, waiting for the turn to run (carries compile_ms)
  go = 4,        // parent -> worker: run and time now
  result = 5,    // worker -> parent: a JobResult
  retimed = 6,   // worker -> parent: a RetimeResult
  data = 7,      // parent -> worker: a JobData, for the jobs after it that name it
  // worker -> parent, around the verification launch of a job with a stop line (TimingParams::
  // stop_s): the line covers the launch alone, not the staging or the check beside it.
  launching = 8,
  launched = 9,
};

Message encode(const JobData& data);
Message encode(const Job& job);
Message encode(const RetimeJob& job);
Message encode(const JobResult& result);
Message encode(const RetimeResult& result);
Message encode_compiled(double compile_ms);
Message encode_go();
Message encode_launching();
Message encode_launched();

// Each decodes a whole payload whose kind was already read by the caller (kind<MessageKind>()).
JobData decode_data(WireReader& r);
// HELD: the data the worker was sent last; a job naming any other is a protocol error (throws).
Job decode_job(WireReader& r, const std::shared_ptr<const JobData>& held);
RetimeJob decode_retime_job(WireReader& r);
JobResult decode_result(WireReader& r);
RetimeResult decode_retime_result(WireReader& r);
double decode_compiled(WireReader& r);

}  // namespace tunebed::search
