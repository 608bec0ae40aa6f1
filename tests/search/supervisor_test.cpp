// The supervisor on its own, with children that answer, crash, hang, die between requests or tear
// a frame, and a parent that dies under its children.
#include "search/supervisor.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

namespace tunebed::search {
namespace {

enum class Ask : uint8_t { pid, segv, hang, exit_after_answer, tear };

Message ask(Ask a) { return WireWriter(a).bytes(); }

void answer_pid(int fd) {
  WireWriter w(Ask::pid);
  w.i64(::getpid());
  write_frame(fd, w.bytes());
}

// The children's main: does what each request asks.
void serve(int fd) {
  while (std::optional<Message> frame = read_frame(fd)) {
    switch (WireReader(*frame).kind<Ask>()) {
      case Ask::pid:
        answer_pid(fd);
        break;
      case Ask::segv:
        std::raise(SIGSEGV);
        break;
      case Ask::hang:
        for (;;) ::pause();
      case Ask::exit_after_answer:
        answer_pid(fd);
        ::_exit(0);
      case Ask::tear: {
        const uint32_t promised = 100;  // a header for 100 bytes, then 3 of them
        const char bytes[7] = {};
        ::write(fd, &promised, 4);
        ::write(fd, bytes, 3);
        ::_exit(0);
      }
    }
  }
}

// The next event, however long it takes.
ChildEvent next(Supervisor& s) {
  std::optional<ChildEvent> e;
  while (!(e = s.wait())) {
  }
  return *e;
}

pid_t pid_of(Supervisor& s, int child) {
  s.send(child, ask(Ask::pid));
  s.watch(child, 10);
  const ChildEvent e = next(s);
  s.unwatch(child);
  EXPECT_EQ(e.kind, ChildEvent::Kind::message) << e.how;
  WireReader r(e.message);
  r.kind<Ask>();
  return static_cast<pid_t>(r.i64("pid"));
}

// Neither running nor a zombie: the process has ended (it may wait for a reaper that never comes).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  return line.substr(line.rfind(')') + 2, 1) == "Z";
}

bool ends_within(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ended(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(Supervisor, AChildThatCrashesIsBlamedWithItsSignal) {
  Supervisor s(2, serve);
  s.send(1, ask(Ask::segv));
  s.watch(1, 10);
  const ChildEvent e = next(s);
  EXPECT_EQ(e.child, 1);
  ASSERT_EQ(e.kind, ChildEvent::Kind::ended);
  EXPECT_EQ(e.how, "killed by signal SIGSEGV (Segmentation fault)");
  EXPECT_EQ(s.replaced(), 1);
  EXPECT_EQ(s.wait(), std::nullopt);  // the fresh child owes nothing
}

TEST(Supervisor, TheNextRequestAfterACrashGoesToAFreshChild) {
  Supervisor s(1, serve);
  const pid_t first = pid_of(s, 0);
  s.send(0, ask(Ask::segv));
  s.watch(0, 10);
  ASSERT_EQ(next(s).kind, ChildEvent::Kind::ended);
  EXPECT_TRUE(ended(first));
  const pid_t second = pid_of(s, 0);
  EXPECT_NE(second, first);
  EXPECT_EQ(second, s.pid(0));
}

TEST(Supervisor, AChildSilentPastItsDeadlineIsKilledAndBlamedTimeout) {
  Supervisor s(1, serve);
  const pid_t hung = s.pid(0);
  const auto start = std::chrono::steady_clock::now();
  s.send(0, ask(Ask::hang));
  s.watch(0, 0.2);
  const ChildEvent e = next(s);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(e.kind, ChildEvent::Kind::timed_out);
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 5);
  EXPECT_TRUE(ended(hung));
  EXPECT_NE(pid_of(s, 0), hung);
  EXPECT_EQ(s.replaced(), 1);
}

TEST(Supervisor, ARequestToAChildThatDiedIdleGoesToAFreshOne) {
  Supervisor s(1, serve);
  s.send(0, ask(Ask::exit_after_answer));
  s.watch(0, 10);
  ASSERT_EQ(next(s).kind, ChildEvent::Kind::message);
  s.unwatch(0);
  const pid_t gone = s.pid(0);
  ASSERT_TRUE(ends_within(gone, std::chrono::seconds(5)));
  EXPECT_NE(pid_of(s, 0), gone);  // answered, not blamed
  EXPECT_EQ(s.replaced(), 1);
}

TEST(Supervisor, ATornFrameIsAnEndThatSaysSo) {
  Supervisor s(1, serve);
  s.send(0, ask(Ask::tear));
  s.watch(0, 10);
  const ChildEvent e = next(s);
  ASSERT_EQ(e.kind, ChildEvent::Kind::ended);
  EXPECT_EQ(e.how, "exited with status 0 (worker frame cut short)");
}

TEST(Supervisor, AChildDiesWithItsParent) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // a parent that dies without its destructors, its child still running
    Supervisor s(1, serve);
    const pid_t child = s.pid(0);
    ::write(fds[1], &child, sizeof child);
    ::_exit(0);
  }
  pid_t child = -1;
  ASSERT_EQ(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::waitpid(parent, nullptr, 0);
  EXPECT_TRUE(ends_within(child, std::chrono::seconds(5)));
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace tunebed::search
