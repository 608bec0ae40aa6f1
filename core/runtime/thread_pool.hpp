// A persistent pool of worker threads for the CPU device: one dispatch runs a kernel once per
// core_id, spread over the workers and the calling thread, and returns when every call is done.
// Threads are created once, so a launch costs a wake-up, not a thread start. A worker spins for
// kSpin after each dispatch before it sleeps: waking a sleeping thread took over 100 us on the
// project's 2-core VM, the time of the kernels being split, so back-to-back launches (timing
// runs, a schedule's kernels) would often find their second core still asleep and run serially.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tunebed {

class ThreadPool {
 public:
  explicit ThreadPool(int workers);  // threads besides the caller; 0 runs everything inline
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // fn(i) for every i in [0, n), each exactly once, on any thread. Dispatches from several
  // threads are serialised.
  void parallel_for(int n, const std::function<void(int)>& fn);

 private:
  struct Job;
  void worker_loop();
  static void work_on(Job& job);

  static constexpr std::chrono::microseconds kSpin{500};

  std::mutex dispatch_;  // one parallel_for at a time
  std::mutex mutex_;     // guards job_, stop_ and the writes of generation_
  std::condition_variable wake_;
  std::shared_ptr<Job> job_;
  std::atomic<uint64_t> generation_ = 0;  // read without the lock while spinning
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tunebed
