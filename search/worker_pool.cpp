#include "search/worker_pool.hpp"

#include <algorithm>
#include <deque>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "search/worker.hpp"

namespace tunebed::search {

namespace {

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

int worker_count(const PoolOptions& options) {
  return std::max(
      1, options.workers > 0 ? options.workers : static_cast<int>(std::thread::hardware_concurrency()));
}

// worker_count, once options.device has been opened (and closed) in this process: called before
// the workers fork.
int workers_after_opening_device(const PoolOptions& options) {
  if (options.device) open_device(*options.device);
  return worker_count(options);
}

}  // namespace

WorkerPool::WorkerPool(PoolOptions options)
    : options_(options),
      workers_(workers_after_opening_device(options), [this](int fd) { serve_jobs(fd, inherited_); }),
      slots_(workers_.size()),
      held_(slots_.size(), 0) {}

uint64_t WorkerPool::inherited_id() const { return inherited_ ? inherited_->id : 0; }

std::vector<JobResult> WorkerPool::run(const std::vector<Job>& jobs,
                                       const std::function<void(int, const JobResult&)>& on_result) {
  std::vector<JobResult> results(jobs.size());
  std::deque<int> pending;
  for (int i = 0; i < static_cast<int>(jobs.size()); i++) pending.push_back(i);
  std::deque<int> waiting;  // workers compiled, in the order they finished compiling
  size_t done = 0;

  auto finish = [&](int worker, JobResult r) {
    Slot& s = slots_[worker];
    if (!r.compile_ms) r.compile_ms = s.compile_ms;
    results[s.job] = std::move(r);
    if (on_result) on_result(s.job, results[s.job]);
    workers_.unwatch(worker);
    s = Slot{};
    done++;
    jobs_++;
  };
  // The worker died or overran (the supervisor has replaced it already): the job is STATUS.
  auto abandon = [&](int worker, CandidateStatus status, std::string message) {
    std::erase(waiting, worker);
    held_[worker] = inherited_id();  // its replacement holds what it inherited
    finish(worker, JobResult{.status = status, .message = std::move(message)});
  };

  auto busy = [&](Phase phase) {
    return std::ranges::any_of(slots_, [&](const Slot& s) { return s.phase == phase; });
  };
  while (done < jobs.size()) {
    // Exclusive timing: no compile starts while a worker times, and a worker times only once no
    // other compiles or times. On a machine whose cores the pool fills, a clang next door takes a
    // core from the kernel being timed, a THREAD kernel most of all (it measured 2-3x slower).
    const bool exclusive = options_.exclusive_timing;
    if (!exclusive || !busy(Phase::running))
      for (int w = 0; w < size(); w++) {
        if (slots_[w].phase != Phase::idle || pending.empty()) continue;
        const int j = pending.front();
        pending.pop_front();
        slots_[w] = {Phase::compiling, j, std::nullopt};
        // First: a worker found dead while this job is sent (it died idle) is replaced inside
        // send, and its replacement must be born holding the job's data, whether it is sent or
        // not. held_[w] then stays true either way.
        inherited_ = jobs[j].data;
        if (held_[w] != jobs[j].data->id) {
          workers_.send(w, encode(*jobs[j].data));
          held_[w] = jobs[j].data->id;
          data_sent_++;
        }
        workers_.send(w, encode(jobs[j]));
        workers_.watch(w, jobs[j].timing.compile_timeout_s);
      }
    while (!waiting.empty() && (!exclusive || (!busy(Phase::running) && !busy(Phase::compiling)))) {
      const int w = waiting.front();
      waiting.pop_front();
      slots_[w].phase = Phase::running;
      workers_.send(w, encode_go());
      workers_.watch(w, jobs[slots_[w].job].timing.timeout_s);
    }

    const std::optional<ChildEvent> e = workers_.wait();
    if (!e) continue;  // a signal: the caller's handler decides, at the next candidate boundary
    Slot& s = slots_[e->child];
    if (e->kind == ChildEvent::Kind::ended) {
      abandon(e->child, CandidateStatus::crash, "worker " + e->how);
    } else if (e->kind == ChildEvent::Kind::timed_out) {
      const TimingParams& t = jobs[s.job].timing;
      const bool compiling = s.phase == Phase::compiling;
      if (s.launching)
        abandon(e->child, CandidateStatus::stopped,
                "the verification launch passed the stop line, " + seconds_text(*t.stop_s) +
                    " (kStopFactor times the early-stop bar); worker killed, the output unverified");
      else
        abandon(e->child, CandidateStatus::timeout,
                std::string(compiling ? "compiling" : "running") + " took longer than " +
                    seconds_text(compiling ? t.compile_timeout_s : t.timeout_s) + "; worker killed");
    } else {
      WireReader reader(e->message);
      const MessageKind kind = reader.kind<MessageKind>();
      if (kind == MessageKind::compiled) {
        s.compile_ms = decode_compiled(reader);
        s.phase = Phase::compiled;
        workers_.watch(e->child, std::nullopt);  // waiting for its turn is not the candidate's time
        waiting.push_back(e->child);
      } else if (kind == MessageKind::launching) {
        const TimingParams& t = jobs[s.job].timing;
        s.launching = t.stop_s && *t.stop_s < t.timeout_s;  // else the timeout comes first
        if (s.launching) workers_.watch(e->child, *t.stop_s);
      } else if (kind == MessageKind::launched) {
        if (s.launching) workers_.watch(e->child, jobs[s.job].timing.timeout_s);
        s.launching = false;
      } else if (kind == MessageKind::result) {
        finish(e->child, decode_result(reader));
      } else {
        throw std::runtime_error("worker sent an unexpected message kind");
      }
    }
  }
  return results;
}

RetimeResult WorkerPool::retime(const RetimeJob& job) {
  workers_.send(0, encode(job));
  workers_.watch(0, job.timeout_s);
  std::optional<ChildEvent> e;
  while (!(e = workers_.wait())) {
  }
  workers_.unwatch(0);
  RetimeResult r;
  if (e->kind != ChildEvent::Kind::message) held_[0] = inherited_id();  // replaced
  if (e->kind == ChildEvent::Kind::timed_out) {
    r.status = CandidateStatus::timeout;
    r.message = "re-timing took longer than " + seconds_text(job.timeout_s) + "; worker killed";
  } else if (e->kind == ChildEvent::Kind::ended) {
    r.status = CandidateStatus::crash;
    r.message = "worker " + e->how;
  } else {
    WireReader reader(e->message);
    if (reader.kind<MessageKind>() != MessageKind::retimed)
      throw std::runtime_error("worker answered a re-time with another message");
    r = decode_retime_result(reader);
  }
  return r;
}

}  // namespace tunebed::search
