// Test fixture: an asset source that includes a deprecated forwarding header.
#include "lmm/math.hpp"
