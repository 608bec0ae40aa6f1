#include "core/runtime/thread_pool.hpp"

#include <atomic>

namespace tunebed {

// One dispatch. Shared, so a worker that wakes after the dispatch has returned (every index was
// taken by others) still holds a live Job, finds no index left and goes back to sleep: it never
// sees the next dispatch's counter with this one's function.
struct ThreadPool::Job {
  const std::function<void(int)>* fn;
  int n;
  std::atomic<int> next{0};
  std::atomic<int> remaining;
  std::mutex mutex;
  std::condition_variable done;
  Job(const std::function<void(int)>* f, int count) : fn(f), n(count), remaining(count) {}
};

ThreadPool::ThreadPool(int workers) {
  threads_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::work_on(Job& job) {
  for (int i = job.next.fetch_add(1); i < job.n; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    if (job.remaining.fetch_sub(1) == 1) {
      const std::lock_guard lock(job.mutex);
      job.done.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < spin_until) {
    }
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    work_on(*job);
  }
}

void ThreadPool::parallel_for(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  const std::lock_guard dispatch(dispatch_);
  if (threads_.empty() || n == 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  auto job = std::make_shared<Job>(&fn, n);
  {
    const std::lock_guard lock(mutex_);
    job_ = job;
    ++generation_;
  }
  wake_.notify_all();
  work_on(*job);
  std::unique_lock lock(job->mutex);
  job->done.wait(lock, [&] { return job->remaining.load() == 0; });
}

}  // namespace tunebed
