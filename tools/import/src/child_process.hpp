// Internal to the pipeline library: running a third-party parser in a child process, so that a
// crash, an abort or a hang in it on a malformed file is an error and not the tool's end.
#pragma once

#include <string>
#include <sys/types.h>

namespace lmm::pipeline {

// A forked child process that runs one function on request after request (started on the first
// request and again after one that killed it), so that a file costs a round trip on a socket
// rather than a fork and a cold heap. One per thread; not copyable. The child ends when its worker
// is destroyed or its parent exits (its socket closes).
class ChildWorker {
 public:
  // Work done in the child: the reply for `request`, or an exception whose message is the error.
  using Work = std::string (*)(const std::string& request);

  // A worker whose child will serve `work`.
  explicit ChildWorker(Work work) : work_(work) {}
  ChildWorker(const ChildWorker&) = delete;
  ChildWorker& operator=(const ChildWorker&) = delete;
  ~ChildWorker();

  // The reply of the worker's function to `request` in the child, which may take `seconds` for it (then it is
  // killed). An exception `work` throws is an InputError with its message; a child that dies on
  // the request (a signal, a sanitizer report) or runs out of time is an InputError naming
  // `what`.
  std::string run(const std::string& request, const std::string& what, unsigned seconds);

 private:
  // Forks the child, serving work_.
  void start();
  // Closes the child's socket and collects it; returns its wait status (0 without a child).
  int stop();

  Work work_;
  pid_t pid_ = -1;
  int socket_ = -1;
};

}  // namespace lmm::pipeline
