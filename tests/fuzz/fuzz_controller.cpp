// libFuzzer target: the controller config (the runtime's parse_controller_config, docs/configs.md).
// An accepted config must hold only known keys with values inside their ranges, parse the same
// again when its values are written back as text, and give finite desired velocities for any
// stick once applied; a refused one must say why and leave the values alone.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lmm/motion/controller.hpp"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "fuzz_controller: %s\n", what);
  std::abort();
}

// The accepted values as a config text ([speeds] then [springs]).
std::string as_text(const std::vector<lmm::ControllerValue>& values) {
  std::string speeds = "[speeds]\n", springs = "[springs]\n";
  for (const lmm::ControllerValue& v : values) {
    char line[96];
    std::snprintf(line, sizeof line, "%s = %.9g\n", v.key.c_str(), double(v.value));
    (v.key.find("halflife") != std::string::npos ? springs : speeds) += line;
  }
  return speeds + springs;
}

void check_accepted(const std::vector<lmm::ControllerValue>& values) {
  lmm::ControllerSettings settings;
  lmm::apply_controller_values(values, settings);
  const float speeds[] = {settings.walk_forward, settings.walk_side, settings.walk_back,
                          settings.run_forward, settings.run_side, settings.run_back};
  for (float s : speeds) {
    if (!(s >= 0.01f && s <= lmm::kMaxSpeed)) fail("an accepted speed is out of range");
  }
  if (!(settings.velocity_halflife >= 0.001f && settings.velocity_halflife <= 10.0f) ||
      !(settings.rotation_halflife >= 0.001f && settings.rotation_halflife <= 10.0f)) {
    fail("an accepted halflife is out of range");
  }
  std::vector<lmm::ControllerValue> again;
  std::string error;
  if (!lmm::parse_controller_config(as_text(values), again, error)) fail(("written back, refused: " + error).c_str());
  if (again.size() != values.size()) fail("written back, a different number of values");
  for (float x : {-1.0f, 0.0f, 0.3f, 1.0f, 1e30f}) {
    lmm::GamepadInput input;
    input.left_x = x, input.left_y = 1.0f - x, input.gait = 0.5f;
    if (!lmm::is_finite(lmm::desired_velocity(input, lmm::Quat{}, settings))) fail("a non-finite desired velocity");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<lmm::ControllerValue> values = {lmm::ControllerValue{"kept", 1.0f}};
  std::string error;
  if (lmm::parse_controller_config(text, values, error)) {
    check_accepted(values);
  } else if (error.empty() || values.size() != 1 || values[0].key != "kept") {
    fail("a refused config without a message, or with the values changed");
  }
  return 0;
}
