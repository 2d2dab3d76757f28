// Counts heap allocations made through operator new while counting is on (the test binary
// that links allocation_counter.cpp replaces the global operator new / delete).
#pragma once

namespace lmm::test {

// Starts counting from zero.
void start_counting_allocations();
// Stops counting and returns the number of allocations since the start.
long stop_counting_allocations();

}  // namespace lmm::test
