// Runs one seeded random script twice, without and with the foot lock (tests of lmm-sim's engine).
#pragma once

#include <vector>

#include "lmm/engines/simulation.hpp"

namespace lmm::test {

// Metrics of the same random input without (`free_feet`) and with (`locked_feet`) the foot lock.
struct FootLockRuns {
  pipeline::SimMetrics free_feet, locked_feet;
  std::vector<pipeline::CharacterTrack> tracks;  // of the locked run
};

// Simulates `seconds` of random_input_script(seed) at 60 Hz on `db` both ways.
inline FootLockRuns run_with_and_without_foot_lock(const std::shared_ptr<const Database>& db, const FeatureSearch& search,
                                                   uint32_t seed,
                                                   float seconds) {
  const std::vector<pipeline::InputScript> scripts = {pipeline::random_input_script(seed, seconds)};
  CharacterSettings free_feet, locked_feet;
  locked_feet.foot_lock = true;
  FootLockRuns runs;
  runs.free_feet = pipeline::run_simulation(db, search, free_feet, scripts, seconds, 1.0f / 60.0f, runs.tracks);
  runs.locked_feet = pipeline::run_simulation(db, search, locked_feet, scripts, seconds, 1.0f / 60.0f, runs.tracks);
  return runs;
}

}  // namespace lmm::test
