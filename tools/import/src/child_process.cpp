#include "child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lmm/common/errors.hpp"

namespace lmm::pipeline {
namespace {

// Writes all of `size` bytes at `data` to the socket `fd`; false on an error (a closed peer too:
// MSG_NOSIGNAL, no SIGPIPE).
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

// Reads exactly `size` bytes from `fd` into `data`; false at the end of the stream or on an error.
bool read_all(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

// A message: its length, then its bytes.
bool write_message(int fd, const std::string& message) {
  const uint64_t size = message.size();
  return write_all(fd, reinterpret_cast<const char*>(&size), sizeof size) && write_all(fd, message.data(), message.size());
}

bool read_message(int fd, std::string& message) {
  uint64_t size = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&size), sizeof size)) return false;
  message.resize(size);
  return read_all(fd, message.data(), message.size());
}

// The child: answers requests on `socket` (the seconds it may take, then the request) with 'O' and
// the reply or 'E' and an error message until its parent closes the socket, then leaves without
// running exit handlers (the parent's). It first closes every other descriptor it inherited:
// another worker's socket held open here would keep that worker's child from seeing its end.
[[noreturn]] void serve(int socket, ChildWorker::Work work) {
  if (socket != 3 && ::dup2(socket, 3) < 0) _exit(1);
  ::close_range(4, ~0u, 0);
  std::string request;
  while (read_message(3, request) && request.size() >= sizeof(unsigned)) {
    unsigned seconds = 0;
    std::memcpy(&seconds, request.data(), sizeof seconds);
    ::alarm(seconds);
    std::string reply;
    try {
      reply = "O" + work(request.substr(sizeof seconds));
    } catch (const std::exception& e) {
      reply = std::string("E") + e.what();
    }
    ::alarm(0);
    if (!write_message(3, reply)) break;
  }
  _exit(0);
}

}  // namespace

ChildWorker::~ChildWorker() { stop(); }

void ChildWorker::start() {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw InputError(std::string("cannot create a socket pair: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) serve(sockets[1], work_);
  ::close(sockets[1]);
  if (pid < 0) {
    ::close(sockets[0]);
    throw InputError(std::string("cannot start a child process: ") + std::strerror(errno));
  }
  pid_ = pid;
  socket_ = sockets[0];
}

int ChildWorker::stop() {
  if (pid_ < 0) return 0;
  ::close(socket_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return status;
}

std::string ChildWorker::run(const std::string& request, const std::string& what, unsigned seconds) {
  if (pid_ < 0) start();
  std::string message(sizeof seconds, '\0'), reply;
  std::memcpy(message.data(), &seconds, sizeof seconds);
  message += request;
  const bool answered = write_message(socket_, message) && read_message(socket_, reply) && !reply.empty();
  if (answered && reply[0] == 'O') return reply.substr(1);
  if (answered) throw InputError(reply.substr(1));
  const int status = stop();  // it died on this request; the next one starts another
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    throw InputError(what + " took more than " + std::to_string(seconds) + " s and was stopped: a malformed file?");
  }
  throw InputError(what + " failed (" + (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exit status " + std::to_string(WEXITSTATUS(status))) +
                   "): a malformed file");
}

}  // namespace lmm::pipeline
