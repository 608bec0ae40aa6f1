// Fault injection through the real worker pool: hand-written C kernels in the CPU ABI that
// segfault, loop forever, compute a wrong answer, fail to compile, or are correct.
#include "search/worker_pool.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/search/synthetic_target.hpp"

namespace tunebed::search {
namespace {

constexpr int kN = 256;

std::string kernel(const std::string& name, const std::string& body) {
  return "#include <stdint.h>\nvoid " + name +
         "(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {\n"
         "  float* out = (float*)bufs[0];\n  const float* in = (const float*)bufs[1];\n" +
         body + "\n}\n";
}

const std::string add_one_body = "  for (int i = 0; i < 256; i++) out[i] = in[i] + 1.0f;";

// out = in + 1 on 256 floats, with the expected output unless VERIFIED is false.
std::shared_ptr<const JobData> add_one_data(bool verified = true) {
  JobData data;
  HostBuffer in(dtypes::float32, kN);
  fill_random(in, 7);
  data.buffers = {HostBuffer(dtypes::float32, kN), in};
  data.output = 0;
  HostBuffer ref(dtypes::float32, kN);
  for (int i = 0; i < kN; i++) ref.set_float(i, static_cast<float>(in.get_float(i)) + 1.0f);
  if (verified) data.expected = exact(ref);  // the kernel rounds in+1 to float32 as ref did: exactly equal
  return share(std::move(data));
}

Job job_for(const std::string& name, const std::string& body, double timeout_s = 5,
            std::shared_ptr<const JobData> data = add_one_data()) {
  Job job;
  job.kernel = {kernel(name, body), name, {}};
  job.data = std::move(data);
  job.timing = {.warmup = 1, .runs = 3, .early_stop_s = std::nullopt, .timeout_s = timeout_s};
  return job;
}

TEST(WorkerPool, RecordsEveryFaultAndTheCorrectKernelWins) {
  WorkerPool pool({.workers = 2});
  std::vector<Job> jobs = {
      job_for("segv", "  *(volatile int*)0 = 1;"),
      job_for("spin", "  volatile int x = 0;\n  for (;;) x++;", 1.0),
      job_for("off_by_one", "  for (int i = 0; i < 256; i++) out[i] = in[i] + 2.0f;"),
      job_for("broken", "  this is not C;"),
      job_for("add_one", add_one_body),
  };
  std::vector<JobResult> r = pool.run(jobs);
  ASSERT_EQ(r.size(), jobs.size());

  EXPECT_EQ(r[0].status, CandidateStatus::crash) << r[0].message;
  EXPECT_NE(r[0].message.find("SIGSEGV"), std::string::npos) << r[0].message;
  EXPECT_TRUE(r[0].compile_ms.has_value());  // it compiled, then died running

  EXPECT_EQ(r[1].status, CandidateStatus::timeout) << r[1].message;
  EXPECT_NE(r[1].message.find("running took longer than 1 s"), std::string::npos) << r[1].message;

  EXPECT_EQ(r[2].status, CandidateStatus::wrong) << r[2].message;
  ASSERT_TRUE(r[2].max_error.has_value());
  EXPECT_NEAR(*r[2].max_error, 1.0, 1e-6);
  EXPECT_NE(r[2].message.find("element 0"), std::string::npos) << r[2].message;

  EXPECT_EQ(r[3].status, CandidateStatus::compile_error) << r[3].message;
  EXPECT_NE(r[3].message.find("error"), std::string::npos) << r[3].message;  // clang's diagnostic

  EXPECT_EQ(r[4].status, CandidateStatus::ok) << r[4].message;
  EXPECT_EQ(r[4].samples.size(), 3u);
  ASSERT_TRUE(r[4].median.has_value());
  EXPECT_GT(*r[4].median, 0);
  EXPECT_EQ(*r[4].max_error, 0);

  int winner = -1;
  for (int i = 0; i < static_cast<int>(r.size()); i++)
    if (r[i].status == CandidateStatus::ok && (winner < 0 || *r[i].median < *r[winner].median)) winner = i;
  EXPECT_EQ(winner, 4);
  EXPECT_EQ(pool.stats().workers_replaced, 2);  // the segfault and the endless loop

  // The replaced workers serve the next batch.
  std::vector<JobResult> again =
      pool.run({job_for("add_one", add_one_body), job_for("add_one", add_one_body)});
  EXPECT_EQ(again[0].status, CandidateStatus::ok) << again[0].message;
  EXPECT_EQ(again[1].status, CandidateStatus::ok) << again[1].message;
}

// A kernel's data crosses to a worker once, and each job starts from it again: what one candidate
// wrote into an input or left in the output does not reach the next on the same worker.
TEST(WorkerPool, JobsShareTheirDataButNotWhatACandidateLeftInIt) {
  WorkerPool pool({.workers = 1});
  const std::shared_ptr<const JobData> data = add_one_data();
  std::vector<JobResult> r = pool.run({
      job_for("add_one", add_one_body, 5, data),
      job_for("skip_last", "  for (int i = 0; i < 255; i++) out[i] = in[i] + 1.0f;", 5, data),
      job_for("scribble", "  for (int i = 0; i < 256; i++) { out[i] = in[i] + 1.0f; ((float*)in)[i] = 0; }", 5, data),
      job_for("add_one", add_one_body, 5, data),
  });
  EXPECT_EQ(r[0].status, CandidateStatus::ok) << r[0].message;
  EXPECT_EQ(r[1].status, CandidateStatus::wrong);  // not passed by the output job 0 left behind
  EXPECT_NE(r[1].message.find("element 255 was never written"), std::string::npos) << r[1].message;
  EXPECT_EQ(r[2].status, CandidateStatus::ok) << r[2].message;  // verified before it scribbled
  EXPECT_EQ(r[3].status, CandidateStatus::ok) << r[3].message;  // the input is the data's again
  EXPECT_EQ(pool.stats().data_sent, 1);
  pool.run({job_for("add_one", add_one_body)});  // other data
  EXPECT_EQ(pool.stats().data_sent, 2);
}

TEST(WorkerPool, AnUnwrittenOutputElementIsWrong) {
  WorkerPool pool({.workers = 1});
  JobResult r = pool.run({job_for("skip_last", "  for (int i = 0; i < 255; i++) out[i] = in[i] + 1.0f;")})[0];
  EXPECT_EQ(r.status, CandidateStatus::wrong);
  EXPECT_NE(r.message.find("element 255 was never written"), std::string::npos) << r.message;
}

TEST(WorkerPool, TrapIsACrashNamingItsSignal) {
  WorkerPool pool({.workers = 1});
  Job job = job_for("aborts", "  __builtin_trap();");
  JobResult r = pool.run({job})[0];
  EXPECT_EQ(r.status, CandidateStatus::crash);
  EXPECT_NE(r.message.find("SIGILL"), std::string::npos) << r.message;  // ud2 on x86
}

TEST(WorkerPool, EarlyStopCutsTimingOfASlowCandidate) {
  WorkerPool pool({.workers = 1});
  Job job = job_for("add_one", add_one_body);
  job.timing.runs = 20;
  job.timing.early_stop_s = 0.0;  // everything is slower than that
  JobResult r = pool.run({job})[0];
  ASSERT_EQ(r.status, CandidateStatus::ok) << r.message;
  EXPECT_EQ(r.samples.size(), 2u);  // a kernel this short is stopped on its second sample over the bar
}

// The body of a kernel that computes out = in + 1 after busy-waiting SECONDS of wall time.
std::string add_one_after(double seconds) {
  return "  struct timespec t0, t;\n  clock_gettime(CLOCK_MONOTONIC, &t0);\n"
         "  do clock_gettime(CLOCK_MONOTONIC, &t);\n"
         "  while ((t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) < " +
         std::to_string(seconds) + ");\n" + add_one_body;
}

Job slow_job(const std::string& name, double seconds, std::optional<double> stop_s,
             std::shared_ptr<const JobData> data = add_one_data()) {
  Job job = job_for(name, add_one_after(seconds), 5, std::move(data));
  job.kernel.source = "#include <time.h>\n" + job.kernel.source;
  job.timing.runs = 1;
  job.timing.warmup = 0;
  job.timing.stop_s = stop_s;
  return job;
}

// A verification launch past the job's stop line is killed: the job is `stopped` (not a timeout,
// which would quarantine it), its worker is replaced, and the replacement is born holding the
// data, so nothing is sent again. A launch inside the line, or one without a line, runs to the end.
TEST(WorkerPool, ALaunchPastItsStopLineIsStoppedAndItsReplacementHoldsTheData) {
  WorkerPool pool({.workers = 1});
  const std::shared_ptr<const JobData> data = add_one_data();
  const auto start = std::chrono::steady_clock::now();
  std::vector<JobResult> r = pool.run({
      slow_job("slow", 2.0, 0.1, data),
      slow_job("inside", 0.05, 1.0, data),
      slow_job("unlined", 0.3, std::nullopt, data),
      job_for("add_one", add_one_body, 5, data),
  });
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r[0].status, CandidateStatus::stopped) << r[0].message;
  EXPECT_NE(r[0].message.find("stop line, 0.1 s"), std::string::npos) << r[0].message;
  EXPECT_FALSE(r[0].median.has_value());
  EXPECT_TRUE(r[0].compile_ms.has_value());
  EXPECT_LT(elapsed, 2.0) << "the 2 s launch ran to its end";
  EXPECT_EQ(r[1].status, CandidateStatus::ok) << r[1].message;
  EXPECT_GE(*r[1].median, 0.05);
  EXPECT_EQ(r[2].status, CandidateStatus::ok) << r[2].message;
  EXPECT_GE(*r[2].median, 0.3);
  EXPECT_EQ(r[3].status, CandidateStatus::ok) << r[3].message;
  EXPECT_EQ(pool.stats().workers_replaced, 1);
  EXPECT_EQ(pool.stats().data_sent, 1);
}

// Waits until no thread of PID holds an open file (its sockets are closed), at most 5 s. Not
// until it is a zombie, nor until the leader's fd list is empty: a threaded process (ASan's is)
// shares its files among threads that exit one by one, and a write then still reaches the socket.
bool wait_files_closed(pid_t pid) {
  namespace fs = std::filesystem;
  const auto holds_files = [](const fs::path& task) {
    std::error_code e;
    return fs::directory_iterator(task / "fd", e) != fs::directory_iterator();
  };
  for (int i = 0; i < 500; i++) {
    std::error_code e;
    bool open = false;
    for (const fs::directory_entry& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", e))
      open |= holds_files(task.path());
    if (!open) return true;  // reaped (no task list), or every thread gone or without files
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A worker that died while idle is found dead when its next job is sent, and replaced there. Its
// replacement must hold that job's data, not the last data sent to any worker: here worker 1
// holds X, worker 0 was sent Y after it, and worker 1 is killed before it is given a job of X.
TEST(WorkerPool, AWorkerThatDiedIdleIsReplacedHoldingItsNextJobsData) {
  WorkerPool pool({.workers = 2});
  const std::shared_ptr<const JobData> x = add_one_data(), y = add_one_data();
  pool.run({job_for("add_one", add_one_body, 5, x), job_for("add_one", add_one_body, 5, x)});
  pool.run({job_for("add_one", add_one_body, 5, y)});  // to worker 0, the first idle one
  ASSERT_EQ(pool.stats().data_sent, 3);
  const pid_t victim = pool.worker_pid(1);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  ASSERT_TRUE(wait_files_closed(victim));
  std::vector<JobResult> r =
      pool.run({job_for("add_one", add_one_body, 5, y), job_for("add_one", add_one_body, 5, x)});
  EXPECT_EQ(r[0].status, CandidateStatus::ok) << r[0].message;
  EXPECT_EQ(r[1].status, CandidateStatus::ok) << r[1].message;
  EXPECT_NE(pool.worker_pid(1), victim);
  EXPECT_EQ(pool.stats().workers_replaced, 1);
  EXPECT_EQ(pool.stats().data_sent, 3);  // neither worker needed its data again
}

TEST(WorkerPool, ReturnsTheOutputWhenAsked) {
  WorkerPool pool({.workers = 1});
  Job job = job_for("add_one", add_one_body, 5, add_one_data(false));
  const HostBuffer expected = add_one_data()->expected->value;
  job.return_output = true;
  JobResult r = pool.run({job})[0];
  ASSERT_EQ(r.status, CandidateStatus::ok) << r.message;
  ASSERT_TRUE(r.output.has_value());
  EXPECT_EQ(widened(*r.output), expected);
}

// Priced by repeat count (1 us and 200 us), so the winner shows that each kernel's samples are
// its own, whatever the machine's load.
TEST(WorkerPool, RetimeRunsEveryKernelInterleaved) {
  test::ScopedLaunchPrice price{test::repeat_seconds};
  WorkerPool pool({.workers = 1});
  Job a = job_for("add_one", add_one_body);
  RetimeJob job;
  job.kernels = {a.kernel,
                 job_for("add_one_slow", "  for (int r = 0; r < 200; r++)\n" + add_one_body).kernel};
  job.buffers = a.data->buffers;
  job.policy = {.min_rounds = 5, .max_rounds = 5};
  job.incumbent = 1;  // the slow one holds the title, and loses it: 200x is beyond any noise
  RetimeResult r = pool.retime(job);
  ASSERT_EQ(r.status, CandidateStatus::ok) << r.message;
  ASSERT_EQ(r.decision.samples.size(), 2u);
  EXPECT_EQ(r.decision.samples[0].size(), 5u);
  EXPECT_EQ(r.decision.samples[1], std::vector<double>(5, test::repeat_seconds(job.kernels[1].source)));
  EXPECT_EQ(r.decision.winner, 0);
  EXPECT_FALSE(r.decision.kept_incumbent);
  EXPECT_EQ(r.decision.challenger, 1);
  EXPECT_TRUE(r.decision.significant());
  EXPECT_NEAR(r.decision.speedup.ratio, 200, 1e-9);
}

}  // namespace
}  // namespace tunebed::search
