// Internal to the pipeline library: running a third-party parser in a child process, so that a
// crash, an abort or a hang in it on a malformed file is an error and not the tool's end.
#pragma once

#include <functional>
#include <string>

namespace lmm::pipeline {

// Runs `work` in a forked child process that may take `seconds` (then it is killed) and returns
// the bytes it returned. An InputError thrown by `work` is rethrown with its message; a child
// that dies (a signal, a sanitizer report) or runs out of time is an InputError naming `what`.
std::string run_in_child(const std::function<std::string()>& work, const std::string& what, unsigned seconds);

}  // namespace lmm::pipeline
