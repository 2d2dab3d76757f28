// Preloaded (node -r) by check_node_exit.cmake: appends to the file named by LMM_EXIT_PROBE_LOG
// each call of process.exit / process.reallyExit on the main thread and the exit event, so that a
// test can see how a WebAssembly test program ended. (The program's runtime closes the standard
// streams on exit, so the record goes to a file.)
const { isMainThread } = require('worker_threads');
const fs = require('fs');
if (isMainThread && process.env.LMM_EXIT_PROBE_LOG) {
  const record = (text) => fs.appendFileSync(process.env.LMM_EXIT_PROBE_LOG, `${text}\n`);
  for (const name of ['exit', 'reallyExit']) {
    const original = process[name];
    process[name] = function (code) {
      record(`process.${name}(${code})`);
      return original.apply(process, arguments);
    };
  }
  process.on('exit', (code) => record(`exit event ${code}`));
}
