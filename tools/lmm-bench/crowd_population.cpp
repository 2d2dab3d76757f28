#include "crowd_population.hpp"

namespace lmm::bench {

void update_share(LearnedCrowd& crowd, int t, int threads, Deadline deadline) {
  const auto [begin, end] = share(crowd.size(), t, threads);
  crowd.update(begin, end, kDt, t, deadline);
}

void update_share(DatabaseCrowd& crowd, int t, int threads, Deadline deadline) {
  const auto [begin, end] = share(crowd.size(), t, threads);
  crowd.update(begin, end, kDt, deadline);
}

}  // namespace lmm::bench
