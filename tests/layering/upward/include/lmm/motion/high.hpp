// Test fixture: a motion header (allowed to include core).
#pragma once

#include "lmm/core/low.hpp"
