#include "search/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tunebed::search {

namespace {

// "killed by signal SIGSEGV (Segmentation fault)", "exited with status 3": what waitpid said.
std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    const std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
    return "killed by signal " + name + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

std::chrono::steady_clock::time_point seconds_from_now(double s) {
  const auto now = std::chrono::steady_clock::now();
  return now +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

void set_action(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

}  // namespace

Supervisor::Supervisor(int children, ChildMain main) : main_(std::move(main)) {
  children_.resize(static_cast<size_t>(std::max(0, children)));
  for (Child& c : children_) spawn(c);
}

Supervisor::~Supervisor() {
  for (Child& c : children_) {
    if (c.pid <= 0) continue;  // a replacement that could not be forked
    ::close(c.fd);
    ::kill(-c.pid, SIGKILL);
  }
  for (Child& c : children_)
    if (c.pid > 0) ::waitpid(c.pid, nullptr, 0);
}

void Supervisor::spawn(Child& c) {
  int fds[2];
  // CLOEXEC: a compiler the child runs must not hold its socket open past the child's death.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error(std::string("cannot create a worker socket: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot fork a worker: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The child keeps only its own end: another child's socket held open here would hide that
    // child's death (no EOF) from the parent.
    for (const Child& other : children_)
      if (other.fd >= 0) ::close(other.fd);
    ::close(fds[0]);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) set_action(sig, SIG_DFL);
    set_action(SIGINT, SIG_IGN);
    int code = 0;
    try {
      main_(fds[1]);
    } catch (...) {
      code = 3;
    }
    ::_exit(code);  // no atexit handlers or static destructors of the parent's program
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also here: the parent may kill the group before the child ran setpgid
  c = Child{.pid = pid, .fd = fds[0]};
}

std::string Supervisor::reap(Child& c) {
  ::close(c.fd);
  c.fd = -1;                // its number is free again: spawn must not close it in the next child
  ::kill(-c.pid, SIGKILL);  // even when C is dead: a compiler it started may still run
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.pid = -1;
  return how_it_ended(status);
}

std::string Supervisor::replace(Child& c) {
  std::string how = reap(c);
  spawn(c);
  replaced_++;
  return how;
}

void Supervisor::restart(int child) {
  reap(children_[child]);
  spawn(children_[child]);
}

void Supervisor::send(int child, const Message& request) {
  Child& c = children_[child];
  if (write_frame(c.fd, request)) return;
  // It died while idle. Should the fresh child fail too, wait() reports it as this request's.
  replace(c);
  write_frame(c.fd, request);
}

void Supervisor::watch(int child, std::optional<double> timeout_s) {
  Child& c = children_[child];
  c.watched = true;
  c.deadline.reset();
  if (timeout_s) c.deadline = seconds_from_now(*timeout_s);
}

void Supervisor::unwatch(int child) {
  children_[child].watched = false;
  children_[child].deadline.reset();
}

std::optional<ChildEvent> Supervisor::wait(std::optional<double> max_wait_s) {
  std::vector<pollfd> fds;
  std::vector<size_t> polled;  // slot of each fds entry, from next_ on round
  std::optional<Clock::time_point> until;
  if (max_wait_s) until = seconds_from_now(*max_wait_s);
  for (size_t k = 0; k < children_.size(); k++) {
    const size_t i = (next_ + k) % children_.size();
    const Child& c = children_[i];
    if (!c.watched) continue;
    fds.push_back({c.fd, POLLIN, 0});
    polled.push_back(i);
    if (c.deadline && (!until || *c.deadline < *until)) until = c.deadline;
  }
  if (fds.empty()) return std::nullopt;
  int wait_ms = -1;
  if (until)  // rounded up, so that a deadline has passed when poll returns for it
    wait_ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(*until - Clock::now()).count()));
  const int ready = ::poll(fds.data(), fds.size(), wait_ms);
  if (ready < 0 && errno == EINTR) return std::nullopt;
  if (ready < 0) throw std::runtime_error(std::string("poll on workers: ") + std::strerror(errno));

  for (size_t k = 0; k < polled.size(); k++) {
    const int i = static_cast<int>(polled[k]);
    Child& c = children_[i];
    if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
      next_ = static_cast<size_t>(i) + 1;
      std::optional<Message> frame;
      std::string torn;
      try {
        frame = read_frame(c.fd);
      } catch (const std::exception& e) {
        torn = e.what();
      }
      if (frame)
        return ChildEvent{.kind = ChildEvent::Kind::message, .child = i, .message = std::move(*frame)};
      const std::string how = replace(c);
      return ChildEvent{
          .kind = ChildEvent::Kind::ended, .child = i, .how = torn.empty() ? how : how + " (" + torn + ")"};
    }
    if (c.deadline && Clock::now() >= *c.deadline) {
      next_ = static_cast<size_t>(i) + 1;
      replace(c);
      return ChildEvent{.kind = ChildEvent::Kind::timed_out, .child = i};
    }
  }
  return std::nullopt;  // MAX_WAIT_S passed
}

}  // namespace tunebed::search
