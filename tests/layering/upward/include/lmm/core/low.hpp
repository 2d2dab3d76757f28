// Test fixture: a core header that breaks the layering rule by including a motion header.
#pragma once

#include "lmm/motion/high.hpp"
