#include "process_memory.hpp"

#include <fstream>
#include <sstream>
#include <utility>

namespace lmm::training::detail {

std::map<std::string, double> process_memory_mb() {
  const std::pair<const char*, const char*> keys[] = {{"Rss:", "rss"}, {"Pss:", "pss"}, {"Private_Clean:", "private"},
                                                      {"Private_Dirty:", "private"}, {"Shared_Clean:", "shared"},
                                                      {"Shared_Dirty:", "shared"}};
  std::map<std::string, double> mb;
  std::ifstream rollup("/proc/self/smaps_rollup");
  for (std::string line; std::getline(rollup, line);) {  // "Rss:  1234 kB"; the first line is the address range
    std::istringstream fields(line);
    std::string key;
    double kb = 0.0;
    if (!(fields >> key >> kb)) continue;
    for (const auto& [field, name] : keys) {
      if (key == field) mb[name] += kb / 1024.0;
    }
  }
  return mb;
}

}  // namespace lmm::training::detail
