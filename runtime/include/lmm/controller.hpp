// Deprecated include path since lmmkit 0.3 (the runtime's headers moved into layer folders); it
// forwards to the headers below and goes in 0.4.
#pragma once

#include "lmm/motion/controller.hpp"
