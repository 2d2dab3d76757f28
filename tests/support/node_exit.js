// Linked before the WebAssembly test program (--pre-js, tests/CMakeLists.txt): how it ends in
// Node.js. Emscripten 3.1.6 ends a program by asking each of its pthread workers to terminate
// (terminate() only starts that) and then calling process.exit() at once. Node.js may crash in
// process.exit() while worker threads are still being torn down (nodejs/node#25007, a confirmed
// exit race), so a test that had printed "[  PASSED  ]" once died with SIGSEGV. Here the program's
// status becomes the process's exit code and Node.js exits by itself once the workers are gone,
// as for any program whose event loop empties. The thrown ExitStatus ends the current JavaScript
// call; Emscripten's uncaughtException handler ignores it.
Module['quit'] = function (status, toThrow) {
  process.exitCode = status;
  throw toThrow;
};
