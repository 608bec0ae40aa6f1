// Supervisor: work done in child processes, so that whatever the work does (a segfault, an
// endless loop, a corrupted heap) takes down one child and never the parent. The tuner's worker
// pool (worker_pool.hpp) and check-corpus (harness/corpus_check.hpp) are its clients.
//
// Each child is forked to run a given function on its end of a socketpair that carries frames
// (wire.hpp). It runs in its own process group, so a kill reaches the compiler it may be running,
// and is killed if the parent dies (PR_SET_PDEATHSIG). In the child, SIGSEGV, SIGBUS, SIGILL and
// SIGFPE are reset to their default action, so a fault ends it by its signal (sanitizer runtimes
// install handlers that report and exit(1) instead), and SIGINT is ignored: Ctrl-C is the
// parent's to handle (tinygrad's _init_worker does the same). SIGTERM keeps the parent's handler,
// so that a SIGTERM sent to every process of a job (Slurm does) does not kill a child mid-request.
//
// The parent sends requests and watches a child while it owes an answer, with a deadline or
// without; wait() returns the next frame a watched child sends, or its end:
//
//   ended      its socket closed or a frame came torn: it died, and waitpid says how
//              ("killed by signal SIGSEGV (Segmentation fault)", "exited with status 3")
//   timed_out  it passed its deadline: its process group was killed
//
// Either way a fresh child has taken the slot before wait() returns, so the client has only to
// blame the request. A request sent to a child that died while idle goes to a fresh child
// instead: that death was not the request's doing.
//
// Forking copies only the calling thread. A child touches no lock another parent thread could
// hold except malloc's, which glibc makes safe across fork, and it must open its own devices (a
// CPU device opened in the parent would hand the child a thread pool whose threads do not exist
// in it). The supervisor belongs to one thread, which must outlive it: PR_SET_PDEATHSIG fires
// when the forking thread exits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/wire.hpp"

namespace tunebed::search {

struct ChildEvent {
  enum class Kind { message, ended, timed_out };
  Kind kind = Kind::message;
  int child = -1;
  Message message;  // Kind::message
  std::string how;  // Kind::ended: how it ended, and the torn frame's error when there was one
};

class Supervisor {
 public:
  // What a child runs: it serves the requests it reads from FD (read_frame) until EOF. An
  // exception it lets out ends the child with status 3.
  using ChildMain = std::function<void(int fd)>;

  // Forks CHILDREN children; throws std::runtime_error when one cannot be forked.
  Supervisor(int children, ChildMain main);
  ~Supervisor();  // kills every child's process group and reaps the children
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  int size() const { return static_cast<int>(children_.size()); }
  pid_t pid(int child) const { return children_[child].pid; }
  int64_t replaced() const { return replaced_; }  // children that died or overran, and were replaced

  void send(int child, const Message& request);
  // CHILD owes an answer: wait() listens to it, and ends it if it says nothing within TIMEOUT_S
  // from now (no deadline when nullopt). Called again, it sets a new deadline.
  void watch(int child, std::optional<double> timeout_s);
  void unwatch(int child);  // nothing owed: wait() leaves it alone

  // The next event from a watched child. nullopt when no child is watched, when MAX_WAIT_S passed
  // first, or when a signal arrived (so that the caller can look at what its handler set). A
  // child that ended or timed out is unwatched, and already replaced.
  std::optional<ChildEvent> wait(std::optional<double> max_wait_s = std::nullopt);

  // Kills CHILD and forks a fresh one in its slot, unwatched.
  void restart(int child);

 private:
  using Clock = std::chrono::steady_clock;
  struct Child {
    pid_t pid = -1;
    int fd = -1;  // the parent's end
    bool watched = false;
    std::optional<Clock::time_point> deadline;
  };

  void spawn(Child& c);
  // Kills C's process group and reaps C; returns how it ended.
  std::string reap(Child& c);
  // reap, then a fresh child in C's slot, counted in replaced().
  std::string replace(Child& c);

  ChildMain main_;
  std::vector<Child> children_;
  int64_t replaced_ = 0;
  size_t next_ = 0;  // where wait() starts looking, so that a chatty child cannot starve the rest
};

}  // namespace tunebed::search
