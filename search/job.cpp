#include "search/job.hpp"

#include <atomic>
#include <stdexcept>

namespace tunebed::search {

// --- field groups shared by several messages ---

static void put(WireWriter& w, const KernelSource& k) {
  w.str(k.source);
  w.str(k.entry);
  for (int64_t g : k.dims.global) w.i64(g);
  for (int64_t l : k.dims.local) w.i64(l);
}
static KernelSource get_kernel(WireReader& r) {
  KernelSource k;
  k.source = r.str("source");
  k.entry = r.str("entry");
  for (int64_t& g : k.dims.global) g = r.i64("global dims");
  for (int64_t& l : k.dims.local) l = r.i64("local dims");
  return k;
}

// A dtype crosses as its scalar kind: buffers hold scalars only (HostBuffer refuses the rest).
static void put(WireWriter& w, const HostBuffer& b) {
  w.u8(static_cast<uint8_t>(b.dtype.scalar));
  w.blob(b.bytes);
}
static Scalar get_scalar(WireReader& r) {
  uint8_t s = r.u8("buffer dtype");
  if (s >= kNumScalars) throw std::runtime_error("bad buffer dtype " + std::to_string(s));
  return static_cast<Scalar>(s);
}
static HostBuffer get_buffer(WireReader& r) {
  HostBuffer b;
  b.dtype = DType(get_scalar(r));
  b.bytes = r.blob("buffer bytes");
  return b;
}

static void put(WireWriter& w, const std::vector<int32_t>& vars, const std::vector<HostBuffer>& bufs) {
  w.i64(static_cast<int64_t>(vars.size()));
  for (int32_t v : vars) w.i64(v);
  w.i64(static_cast<int64_t>(bufs.size()));
  for (const HostBuffer& b : bufs) put(w, b);
}
static void get_args(WireReader& r, std::vector<int32_t>& vars, std::vector<HostBuffer>& bufs) {
  for (int64_t n = r.i64("var count"); n > 0; n--) vars.push_back(static_cast<int32_t>(r.i64("var")));
  for (int64_t n = r.i64("buffer count"); n > 0; n--) bufs.push_back(get_buffer(r));
}

static void put_optional(WireWriter& w, const std::optional<double>& v) {
  w.u8(v.has_value());
  if (v) w.f64(*v);
}
static std::optional<double> get_optional(WireReader& r, const char* what) {
  if (!r.u8(what)) return std::nullopt;
  return r.f64(what);
}

static void put_samples(WireWriter& w, const std::vector<double>& samples) {
  w.i64(static_cast<int64_t>(samples.size()));
  for (double s : samples) w.f64(s);
}
static std::vector<double> get_samples(WireReader& r) {
  std::vector<double> s;
  for (int64_t n = r.i64("sample count"); n > 0; n--) s.push_back(r.f64("sample"));
  return s;
}

static CandidateStatus get_status(WireReader& r) {
  uint8_t s = r.u8("status");
  if (s > static_cast<uint8_t>(CandidateStatus::stopped))
    throw std::runtime_error("bad status " + std::to_string(s));
  return static_cast<CandidateStatus>(s);
}

// --- messages ---

std::shared_ptr<const JobData> share(JobData data) {
  static std::atomic<uint64_t> next{1};
  data.id = next++;
  return std::make_shared<const JobData>(std::move(data));
}

Message encode(const JobData& data) {
  WireWriter w(MessageKind::data);
  w.i64(static_cast<int64_t>(data.id));
  put(w, data.vars, data.buffers);
  w.i64(data.output);
  w.u8(data.expected.has_value());
  if (data.expected) {
    put(w, data.expected->value);
    w.u8(static_cast<uint8_t>(data.expected->dtype.scalar));
    put_samples(w, data.expected->bound);
  }
  return w.bytes();
}

JobData decode_data(WireReader& r) {
  JobData data;
  data.id = static_cast<uint64_t>(r.i64("data id"));
  get_args(r, data.vars, data.buffers);
  data.output = static_cast<int>(r.i64("output index"));
  if (r.u8("has expected")) {
    Expected& e = data.expected.emplace();
    e.value = get_buffer(r);
    e.dtype = DType(get_scalar(r));
    e.bound = get_samples(r);
  }
  r.expect_end();
  return data;
}

Message encode(const Job& job) {
  WireWriter w(MessageKind::job);
  w.str(job.device);
  put(w, job.kernel);
  w.i64(static_cast<int64_t>(job.data->id));
  w.u8(job.return_output);
  w.i64(job.timing.warmup);
  w.i64(job.timing.runs);
  put_optional(w, job.timing.early_stop_s);
  w.f64(job.timing.max_seconds);
  w.f64(job.timing.timeout_s);
  w.f64(job.timing.compile_timeout_s);
  put_optional(w, job.timing.stop_s);
  return w.bytes();
}

Job decode_job(WireReader& r, const std::shared_ptr<const JobData>& held) {
  Job job;
  job.device = r.str("device");
  job.kernel = get_kernel(r);
  const auto id = static_cast<uint64_t>(r.i64("data id"));
  if (!held || held->id != id) throw std::runtime_error("a job names data " + std::to_string(id) + " the worker was not sent");
  job.data = held;
  job.return_output = r.u8("return output");
  job.timing.warmup = static_cast<int>(r.i64("warmup"));
  job.timing.runs = static_cast<int>(r.i64("runs"));
  job.timing.early_stop_s = get_optional(r, "early stop");
  job.timing.max_seconds = r.f64("max seconds");
  job.timing.timeout_s = r.f64("timeout");
  job.timing.compile_timeout_s = r.f64("compile timeout");
  job.timing.stop_s = get_optional(r, "stop line");
  r.expect_end();
  return job;
}

Message encode(const RetimeJob& job) {
  WireWriter w(MessageKind::retime);
  w.str(job.device);
  w.i64(static_cast<int64_t>(job.kernels.size()));
  for (const KernelSource& k : job.kernels) put(w, k);
  put(w, job.vars, job.buffers);
  w.i64(job.policy.min_rounds);
  w.i64(job.policy.max_rounds);
  w.i64(job.policy.step);
  w.f64(job.policy.alpha);
  w.f64(job.policy.max_seconds);
  w.i64(job.incumbent.value_or(-1));
  w.f64(job.timeout_s);
  return w.bytes();
}

RetimeJob decode_retime_job(WireReader& r) {
  RetimeJob job;
  job.device = r.str("device");
  for (int64_t n = r.i64("kernel count"); n > 0; n--) job.kernels.push_back(get_kernel(r));
  get_args(r, job.vars, job.buffers);
  job.policy.min_rounds = static_cast<int>(r.i64("min rounds"));
  job.policy.max_rounds = static_cast<int>(r.i64("max rounds"));
  job.policy.step = static_cast<int>(r.i64("step"));
  job.policy.alpha = r.f64("alpha");
  job.policy.max_seconds = r.f64("max seconds");
  if (const int64_t incumbent = r.i64("incumbent"); incumbent >= 0) job.incumbent = static_cast<int>(incumbent);
  job.timeout_s = r.f64("timeout");
  r.expect_end();
  return job;
}

Message encode(const JobResult& res) {
  WireWriter w(MessageKind::result);
  w.u8(static_cast<uint8_t>(res.status));
  w.str(res.message);
  put_optional(w, res.compile_ms);
  put_samples(w, res.samples);
  put_optional(w, res.median);
  put_optional(w, res.max_error);
  w.u8(res.output.has_value());
  if (res.output) put(w, *res.output);
  return w.bytes();
}

JobResult decode_result(WireReader& r) {
  JobResult res;
  res.status = get_status(r);
  res.message = r.str("message");
  res.compile_ms = get_optional(r, "compile ms");
  res.samples = get_samples(r);
  res.median = get_optional(r, "median");
  res.max_error = get_optional(r, "max error");
  if (r.u8("has output")) res.output = get_buffer(r);
  r.expect_end();
  return res;
}

Message encode(const RetimeResult& res) {
  WireWriter w(MessageKind::retimed);
  w.u8(static_cast<uint8_t>(res.status));
  w.str(res.message);
  const Decision& d = res.decision;
  w.i64(static_cast<int64_t>(d.samples.size()));
  for (const std::vector<double>& s : d.samples) put_samples(w, s);
  put_samples(w, d.medians);
  for (int i : {d.winner, d.leader, d.challenger, d.rounds}) w.i64(i);
  w.u8(d.kept_incumbent);
  for (double x : {d.p_value, d.level, d.speedup.ratio, d.speedup.low, d.speedup.high}) w.f64(x);
  return w.bytes();
}

RetimeResult decode_retime_result(WireReader& r) {
  RetimeResult res;
  res.status = get_status(r);
  res.message = r.str("message");
  Decision& d = res.decision;
  for (int64_t n = r.i64("candidate count"); n > 0; n--) d.samples.push_back(get_samples(r));
  d.medians = get_samples(r);
  for (int* i : {&d.winner, &d.leader, &d.challenger, &d.rounds}) *i = static_cast<int>(r.i64("decision index"));
  d.kept_incumbent = r.u8("kept incumbent") != 0;
  for (double* x : {&d.p_value, &d.level, &d.speedup.ratio, &d.speedup.low, &d.speedup.high}) *x = r.f64("confidence");
  r.expect_end();
  return res;
}

Message encode_compiled(double compile_ms) {
  WireWriter w(MessageKind::compiled);
  w.f64(compile_ms);
  return w.bytes();
}
double decode_compiled(WireReader& r) {
  double ms = r.f64("compile ms");
  r.expect_end();
  return ms;
}
Message encode_go() { return WireWriter(MessageKind::go).bytes(); }
Message encode_launching() { return WireWriter(MessageKind::launching).bytes(); }
Message encode_launched() { return WireWriter(MessageKind::launched).bytes(); }

}  // namespace tunebed::search
