#include "child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "lmm/common/errors.hpp"

namespace lmm::pipeline {
namespace {

// Writes all of `data` to `fd`; false on a write error.
bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// Reads `fd` to its end.
std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, size_t(n));
  }
}

// The child: runs `work`, writes 'O' and its bytes or 'E' and an error message, and leaves
// without running exit handlers (the parent's).
[[noreturn]] void child(int fd, const std::function<std::string()>& work, unsigned seconds) {
  ::alarm(seconds);
  std::string reply;
  try {
    reply = "O" + work();
  } catch (const std::exception& e) {
    reply = std::string("E") + e.what();
  }
  _exit(write_all(fd, reply) ? 0 : 1);
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& work, const std::string& what, unsigned seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw InputError(what + ": cannot create a pipe: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw InputError(what + ": cannot start a child process: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], work, seconds);
  }
  ::close(fds[1]);
  const std::string reply = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !reply.empty()) {
    if (reply[0] == 'O') return reply.substr(1);
    throw InputError(reply.substr(1));
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    throw InputError(what + " took more than " + std::to_string(seconds) + " s and was stopped: a malformed file?");
  }
  throw InputError(what + " failed (" + (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exit status " + std::to_string(WEXITSTATUS(status))) +
                   "): a malformed file");
}

}  // namespace lmm::pipeline
