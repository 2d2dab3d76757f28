// The browser demo's WebAssembly module: the C API of lmm/lmm.h, nothing more. Its functions
// are exported by the link options in CMakeLists.txt; the page loads assets into Emscripten's
// in-memory file system and opens them by path.
#include "lmm/lmm.h"
