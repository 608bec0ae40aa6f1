#include "search/worker_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "search/worker.hpp"

namespace tunebed::search {

using Clock = std::chrono::steady_clock;

std::string signal_description(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  return name + " (" + strsignal(sig) + ")";
}

static std::string seconds_text(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

WorkerPool::WorkerPool(PoolOptions options) : options_(options) {
  int n = options.workers > 0 ? options.workers : static_cast<int>(std::thread::hardware_concurrency());
  workers_.resize(std::max(1, n));
  for (Worker& w : workers_) spawn(w);
}

WorkerPool::~WorkerPool() {
  for (Worker& w : workers_) {
    ::close(w.fd);
    ::kill(-w.pid, SIGKILL);
  }
  for (Worker& w : workers_) ::waitpid(w.pid, nullptr, 0);
}

void WorkerPool::spawn(Worker& w) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
    throw std::runtime_error(std::string("cannot create a worker socket: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot fork a worker: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The child keeps only its own end: another worker's socket held open here would hide that
    // worker's death (no EOF) from the parent.
    for (const Worker& other : workers_)
      if (other.fd >= 0) ::close(other.fd);
    ::close(fds[0]);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGINT, SIG_IGN);  // Ctrl-C is the parent's to handle, as tinygrad's _init_worker
    int code = 0;
    try {
      serve_jobs(fds[1]);
    } catch (...) {
      code = 3;
    }
    ::_exit(code);  // no atexit handlers or static destructors of the parent's program
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also here: the parent may kill the group before the child ran setpgid
  w = Worker{};
  w.pid = pid;
  w.fd = fds[0];
}

std::string WorkerPool::replace(Worker& w, bool kill_first) {
  ::close(w.fd);
  if (kill_first) ::kill(-w.pid, SIGKILL);
  int status = 0;
  while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string how;
  if (WIFSIGNALED(status))
    how = "worker killed by signal " + signal_description(WTERMSIG(status));
  else if (WIFEXITED(status))
    how = "worker exited with status " + std::to_string(WEXITSTATUS(status));
  else
    how = "worker ended";
  spawn(w);
  stats_.workers_replaced++;
  return how;
}

void WorkerPool::start(Worker& w, int job, const std::vector<std::byte>& payload, double timeout_s) {
  w.phase = Phase::compiling;
  w.job = job;
  w.compile_ms.reset();
  w.deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  // A worker that died while idle fails this write; the read that follows sees the EOF and the
  // job is reported with how the worker ended.
  write_frame(w.fd, payload);
}

void WorkerPool::give_turn(Worker& w, double timeout_s) {
  w.phase = Phase::running;
  w.deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  write_frame(w.fd, encode_go());
}

std::vector<JobResult> WorkerPool::run(const std::vector<Job>& jobs,
                                       const std::function<void(int, const JobResult&)>& on_result) {
  std::vector<JobResult> results(jobs.size());
  std::deque<int> pending;
  for (int i = 0; i < static_cast<int>(jobs.size()); i++) pending.push_back(i);
  std::deque<Worker*> waiting;  // compiled, in the order they finished compiling
  size_t done = 0;

  auto finish = [&](Worker& w, JobResult r) {
    if (!r.compile_ms) r.compile_ms = w.compile_ms;
    results[w.job] = std::move(r);
    if (on_result) on_result(w.job, results[w.job]);
    w.phase = Phase::idle;
    w.job = -1;
    w.deadline.reset();
    done++;
    stats_.jobs++;
  };
  // The worker died or overran: record the job as STATUS and put a fresh worker in its place.
  auto abandon = [&](Worker& w, CandidateStatus status, const std::string& message) {
    int job = w.job;
    JobResult r;
    r.status = status;
    r.compile_ms = w.compile_ms;
    std::erase(waiting, &w);
    std::string how = replace(w, true);
    r.message =
        status == CandidateStatus::timeout ? message : how + (message.empty() ? "" : " (" + message + ")");
    w.job = job;
    finish(w, std::move(r));
  };

  while (done < jobs.size()) {
    for (Worker& w : workers_) {
      if (w.phase != Phase::idle || pending.empty()) continue;
      int j = pending.front();
      pending.pop_front();
      start(w, j, encode(jobs[j]), jobs[j].timing.compile_timeout_s);
    }
    bool someone_running = false;
    for (const Worker& w : workers_) someone_running |= w.phase == Phase::running;
    while (!waiting.empty() && (!options_.exclusive_timing || !someone_running)) {
      Worker& w = *waiting.front();
      waiting.pop_front();
      give_turn(w, jobs[w.job].timing.timeout_s);
      someone_running = true;
    }

    // Wait for a message or the nearest deadline.
    std::vector<pollfd> fds;
    std::vector<Worker*> polled;
    auto now = Clock::now();
    std::optional<Clock::time_point> nearest;
    for (Worker& w : workers_) {
      if (w.phase == Phase::idle) continue;
      fds.push_back({w.fd, POLLIN, 0});
      polled.push_back(&w);
      if (w.deadline && (!nearest || *w.deadline < *nearest)) nearest = w.deadline;
    }
    int wait_ms = -1;
    if (nearest)
      wait_ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(*nearest - now).count() + 1));
    int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll on workers: ") + std::strerror(errno));

    for (size_t i = 0; i < polled.size(); i++) {
      Worker& w = *polled[i];
      if (ready > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        std::optional<std::vector<std::byte>> frame;
        std::string torn;
        try {
          frame = read_frame(w.fd);
        } catch (const std::exception& e) {
          torn = e.what();
        }
        if (!frame) {
          abandon(w, CandidateStatus::crash, torn);
          continue;
        }
        WireReader reader(std::move(*frame));
        MessageKind kind = reader.kind<MessageKind>();
        if (kind == MessageKind::compiled) {
          w.compile_ms = decode_compiled(reader);
          w.phase = Phase::compiled;
          w.deadline.reset();  // waiting for its turn is not the candidate's time
          waiting.push_back(&w);
        } else if (kind == MessageKind::result) {
          finish(w, decode_result(reader));
        } else {
          throw std::runtime_error("worker sent an unexpected message kind");
        }
      } else if (w.deadline && Clock::now() >= *w.deadline) {
        const TimingParams& t = jobs[w.job].timing;
        bool compiling = w.phase == Phase::compiling;
        abandon(w, CandidateStatus::timeout,
                std::string(compiling ? "compiling" : "running") + " took longer than " +
                    seconds_text(compiling ? t.compile_timeout_s : t.timeout_s) + "; worker killed");
      }
    }
  }
  return results;
}

RetimeResult WorkerPool::retime(const RetimeJob& job) {
  Worker& w = workers_.front();
  auto deadline = Clock::now() +
                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(job.timeout_s));
  write_frame(w.fd, encode(job));
  RetimeResult r;
  pollfd pfd{w.fd, POLLIN, 0};
  int wait_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  int ready;
  while ((ready = ::poll(&pfd, 1, std::max(0, wait_ms))) < 0 && errno == EINTR) {
  }
  if (ready == 0) {
    replace(w, true);
    r.status = CandidateStatus::timeout;
    r.message = "re-timing took longer than " + seconds_text(job.timeout_s) + "; worker killed";
    return r;
  }
  std::optional<std::vector<std::byte>> frame;
  try {
    frame = read_frame(w.fd);
  } catch (const std::exception&) {
  }
  if (!frame) {
    r.status = CandidateStatus::crash;
    r.message = replace(w, true);
    return r;
  }
  WireReader reader(std::move(*frame));
  if (reader.kind<MessageKind>() != MessageKind::retimed)
    throw std::runtime_error("worker answered a re-time with another message");
  return decode_retime_result(reader);
}

}  // namespace tunebed::search
