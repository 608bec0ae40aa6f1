// What a worker process is asked to do, what it answers, and how both cross the pipe.
//
// A Job is everything needed to try one candidate without the parent's help: the device spec,
// the rendered source and its entry point, the launch, every buffer's initial contents as a
// HostBuffer (the output's contents are ignored: the worker poisons it, core/engine/check.hpp, so
// an element the kernel never writes shows up as wrong), which buffer is the output, what a correct output
// is (exact values with error bounds, from the AST interpreter: core/engine/check.hpp), and the
// timing parameters. A job without an expectation is not verified and can return its output
// instead: that is how the unoptimized kernel's output is read for the independent check.
//
// A RetimeJob re-times several already verified candidates on the same buffers, interleaved, and
// decides which is fastest (decide.hpp), inside one worker so that they share one clock.
//
// Both cross the worker's socket as frames of wire.hpp's fields, the first byte a MessageKind.
#pragma once

#include <cstdint>
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

struct Job {
  std::string device = "cpu";  // an open_device spec
  KernelSource kernel;
  std::vector<int32_t> vars;
  std::vector<HostBuffer> buffers;  // every buffer, in argument order
  int output = 0;                   // index into buffers
  std::optional<Expected> expected;
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
  job = 1,       // parent -> worker: a Job
  retime = 2,    // parent -> worker: a RetimeJob
  compiled = 3,  // worker -> parent: compiled, waiting for the turn to run (carries compile_ms)
  go = 4,        // parent -> worker: run and time now
  result = 5,    // worker -> parent: a JobResult
  retimed = 6,   // worker -> parent: a RetimeResult
};

Message encode(const Job& job);
Message encode(const RetimeJob& job);
Message encode(const JobResult& result);
Message encode(const RetimeResult& result);
Message encode_compiled(double compile_ms);
Message encode_go();

// Each decodes a whole payload whose kind was already read by the caller (kind<MessageKind>()).
Job decode_job(WireReader& r);
RetimeJob decode_retime_job(WireReader& r);
JobResult decode_result(WireReader& r);
RetimeResult decode_retime_result(WireReader& r);
double decode_compiled(WireReader& r);

}  // namespace tunebed::search
