// Internal to lmm_training: this process's memory as /proc reports it, defined in process_memory.cpp.
#pragma once

#include <map>
#include <string>

namespace lmm::training::detail {

// This process's memory now, in MiB, from /proc/self/smaps_rollup: "rss" (resident), "pss"
// (proportional: each shared page split among the processes mapping it), "private" and "shared"
// (resident pages mapped by this process only, or by others too); empty where it cannot be read.
std::map<std::string, double> process_memory_mb();

}  // namespace lmm::training::detail
