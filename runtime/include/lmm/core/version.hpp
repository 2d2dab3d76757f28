// lmmkit's version. The top-level CMakeLists.txt reads these three numbers, so they are the one
// place the version is set (the installed package's version file follows them).
#pragma once

#define LMM_VERSION_MAJOR 0
#define LMM_VERSION_MINOR 3
#define LMM_VERSION_PATCH 0

namespace lmm {

// The version as "MAJOR.MINOR.PATCH".
constexpr const char* kVersion = "0.3.0";

}  // namespace lmm
