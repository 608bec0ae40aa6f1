#include "core/runtime/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/runtime/device.hpp"

extern char** environ;

namespace tunebed {

namespace {

// Closes its descriptors on every path out of run_process.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string command_name(const std::vector<std::string>& argv) { return argv.empty() ? "" : argv[0]; }

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& stdin_path) {
  if (argv.empty()) throw DeviceError("run_process: empty command");
  Fd input{open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (input.fd < 0)
    throw DeviceError("cannot open " + stdin_path.string() + " as input of " + command_name(argv) + ": " +
                      std::strerror(errno));
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw DeviceError(std::string("pipe: ") + std::strerror(errno));
  Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw DeviceError("cannot run " + command_name(argv) + ": " + std::strerror(spawned));

  close(write_end.fd);  // the child holds its copy; EOF comes when the child exits
  write_end.fd = -1;
  ProcessResult result;
  char chunk[4096];
  for (;;) {
    const ssize_t got = read(read_end.fd, chunk, sizeof chunk);
    if (got > 0)
      result.output.append(chunk, static_cast<size_t>(got));
    else if (got == 0 || errno != EINTR)
      break;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace tunebed
