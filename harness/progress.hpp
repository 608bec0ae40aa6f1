// What `tunebed tune` shows while it works, chosen by --progress:
//
//   live   one line on stderr, redrawn with \r after every candidate:
//            [2/6] 3004a2e2a483 1024x1024 float32  candidate 7/24  best 111.0 us  ETA 1m20s
//          and a line of its own when a kernel is done. Meant for a terminal.
//   jsonl  one JSON object per line on stdout for each event, for CI logs and scripts:
//            {"event":"candidate","t":1.52,"index":2,"kernel":"3004...","tried":7,"opts":"...",...}
//          events: run_start, kernel_start, candidate, new_best, kernel_done, run_done; every
//          object has "event" and "t" (seconds since the run started). stdout then holds only
//          these lines (the summary table goes to stderr).
//   none   nothing until the summary.
//   auto   (the default) live when stderr is a terminal, none otherwise.
//
// The ETA assumes the kernels still to come take as long as those done so far, and the current
// kernel spends its whole candidate budget at its rate so far: a guess that improves as it goes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "search/tune.hpp"

namespace tunebed::cli {

struct RunInfo {
  int64_t run_id = 0;
  std::string run_uuid, db;
  size_t kernels = 0;
  bool resumed = false;
};

// Where a kernel stands in the batch.
struct KernelSlot {
  size_t index = 0;  // 1-based
  size_t count = 0;
  int64_t budget = 0;
};

class Progress {
 public:
  virtual ~Progress() = default;
  virtual void run_start(const RunInfo& run) = 0;
  virtual void event(const KernelSlot& slot, const search::TuneEvent& e) = 0;
  // A kernel that could not be tuned at all (no reference, no target): in place of kernel_done.
  virtual void kernel_failed(const KernelSlot& slot, const std::string& hash, const std::string& message) = 0;
  // STATUS: completed, interrupted or failed; DONE: kernels tuned or served from the cache.
  virtual void run_done(const std::string& status, size_t done, size_t failed) = 0;

 protected:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// "auto", "live", "jsonl" or "none"; anything else is a UsageError.
std::unique_ptr<Progress> make_progress(const std::string& mode);

}  // namespace tunebed::cli
