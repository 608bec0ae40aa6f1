// What a worker process is asked to do, what it answers, and how both cross the pipe.
//
// A Job is everything needed to try one candidate without the parent's help: the device spec,
// the rendered source and its entry point, the launch, every buffer's initial contents as a
// HostBuffer (the output's contents are ignored: the worker poisons it with NaN, so an element
// the kernel never writes shows up as wrong), which buffer is the output, what a correct output
// is (exact values with error bounds, from the AST interpreter: core/engine/check.hpp), and the
// timing parameters. A job without an expectation is not verified and can return its output
// instead: that is how the unoptimized kernel's output is read for the independent check.
//
// A RetimeJob re-times several already verified candidates on the same buffers, interleaved
// (measure.hpp's interleaved_retime), inside one worker so that they share one clock.
//
// The wire format is a frame: a little-endian u32 payload length, then the payload, whose first
// byte is the message kind. Fields are fixed-width little-endian integers and doubles, strings
// and byte arrays as a u64 length then the bytes. Both ends are the same binary (the worker is
// forked), so the format needs no versioning, only to be unambiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/error_bound.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/runtime/device.hpp"
#include "results/records.hpp"
#include "search/measure.hpp"

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
  int rounds = 10;
  double timeout_s = 30;
};

struct RetimeResult {
  CandidateStatus status = CandidateStatus::ok;  // ok, or what went wrong for all of them
  std::string message;
  Retimed retimed;
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

// A payload under construction / being read. Reading past the end or a bad kind throws
// std::runtime_error naming the field: a torn frame from a dying worker is reported, not trusted.
class WireWriter {
 public:
  explicit WireWriter(MessageKind kind) { u8(static_cast<uint8_t>(kind)); }
  void u8(uint8_t v) { bytes_.push_back(static_cast<std::byte>(v)); }
  void i64(int64_t v);
  void f64(double v);
  void str(const std::string& s);
  void blob(const std::vector<std::byte>& b);
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

class WireReader {
 public:
  explicit WireReader(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  MessageKind kind();  // the first byte
  uint8_t u8(const char* what);
  int64_t i64(const char* what);
  double f64(const char* what);
  std::string str(const char* what);
  std::vector<std::byte> blob(const char* what);
  void expect_end();

 private:
  void need(size_t n, const char* what) const;
  std::vector<std::byte> bytes_;
  size_t pos_ = 0;
};

std::vector<std::byte> encode(const Job& job);
std::vector<std::byte> encode(const RetimeJob& job);
std::vector<std::byte> encode(const JobResult& result);
std::vector<std::byte> encode(const RetimeResult& result);
std::vector<std::byte> encode_compiled(double compile_ms);
std::vector<std::byte> encode_go();

// Each decodes a whole payload whose kind was already checked by the caller (via kind()).
Job decode_job(WireReader& r);
RetimeJob decode_retime_job(WireReader& r);
JobResult decode_result(WireReader& r);
RetimeResult decode_retime_result(WireReader& r);
double decode_compiled(WireReader& r);

// Frames on a stream socket (the pool's socketpairs): blocking, whole frames, EINTR retried. write_frame
// returns false when the other end is gone (EPIPE); read_frame returns nullopt on a clean EOF before a frame
// and throws std::runtime_error on a frame cut short.
bool write_frame(int fd, const std::vector<std::byte>& payload);
std::optional<std::vector<std::byte>> read_frame(int fd);

}  // namespace tunebed::search
