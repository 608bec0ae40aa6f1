// Tuning-database write rate: candidates per second through CandidateWriter, committing every
// row in its own transaction (batch_rows = 1) against batches of 16 to 1024 rows, and the same
// with a second process-like writer (another connection) contending for the lock.
// Run: build/bench/bench_results   (databases go to a temporary directory, removed at exit)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "results/candidate_writer.hpp"
#include "results/tuning_db.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::results {
namespace {

// A fresh database with one device, kernel and run, in a directory removed with it.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tunebed-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    db_.emplace(TuningDb::open((dir_ / "bench.db").string(), TuningDb::Mode::create));
    device = db_->upsert_device(
        {.name = "cpu0", .arch = "x86_64", .driver = "none", .compiler = "clang", .compiler_version = "16"});
    kernel = db_->upsert_kernel({.hash = "h", .ast = "SINK()", .shape = "512x512x512"});
    run = db_->begin_run(
        {.strategy = "beam", .action_space_version = "as1", .tunebed_version = std::string(build::kVersion),
         .git_rev = "bench"});
  }
  ~Scratch() {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  TuningDb& db() { return *db_; }
  int64_t device = 0, kernel = 0;
  Run run;

 private:
  std::filesystem::path dir_;
  std::optional<TuningDb> db_;
};

// A realistic row: a dozen timing samples, opts and source hash of typical length.
Candidate candidate(const Scratch& s, int64_t i) {
  double t = 100.0 + static_cast<double>(i % 997);
  return {.kernel_id = s.kernel,
          .device_id = s.device,
          .opts = "UPCAST(0,4) UNROLL(1,4) LOCAL(0,16) #" + std::to_string(i),
          .source_hash = "9f2c4e1a7b3d5f60" + std::to_string(i),
          .compile_ms = 41.5,
          .samples_us = {t, t + 1, t - 1, t + 2, t, t, t + 3, t - 2, t, t + 1, t, t},
          .median_us = t,
          .status = CandidateStatus::ok};
}

void BM_InsertCandidates(benchmark::State& state) {
  Scratch s;
  CandidateWriter w(s.db(), s.run.id,
                    {.batch_rows = static_cast<int>(state.range(0)), .max_delay = std::chrono::hours(1)});
  int64_t i = 0;
  for (auto _ : state) w.add(candidate(s, i++));
  w.flush();
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InsertCandidates)
    ->ArgName("batch_rows")
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->UseRealTime();

// The same while another writer, on its own connection, commits batches of 64 into the same
// file as fast as it can: the cost of waiting for the write lock.
void BM_InsertCandidatesContended(benchmark::State& state) {
  Scratch s;
  int64_t rival_run = s.db()
                          .begin_run({.strategy = "rival",
                                      .action_space_version = "as1",
                                      .tunebed_version = std::string(build::kVersion),
                                      .git_rev = "bench"})
                          .id;
  std::atomic<bool> stop = false;
  std::thread rival([&] {
    CandidateWriter other(s.db(), rival_run, {.batch_rows = 64, .max_delay = std::chrono::hours(1)});
    for (int64_t i = 0; !stop; ++i) other.add(candidate(s, i));
  });
  CandidateWriter w(s.db(), s.run.id,
                    {.batch_rows = static_cast<int>(state.range(0)), .max_delay = std::chrono::hours(1)});
  int64_t i = 0;
  for (auto _ : state) w.add(candidate(s, i++));
  w.flush();
  stop = true;
  rival.join();
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InsertCandidatesContended)->ArgName("batch_rows")->Arg(1)->Arg(64)->UseRealTime();

}  // namespace
}  // namespace tunebed::results
