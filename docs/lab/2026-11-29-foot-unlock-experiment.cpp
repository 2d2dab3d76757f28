// The harness behind the unlock-distance table of 2026-11-29-fbx-reading-and-foot-release.md: a
// learned character on 120 s of seeded random input (random_input_script(1)) with the runtime's
// FootLocker applied to its pose by hand, for an unlock distance and a minimum run of decoder
// contact frames before a lock. Build against a release build of the tools (BUILD, e.g. build/release):
//   B=BUILD; g++ -std=c++17 -O2 -Iruntime/include -Itools/engines/include -Itools/import/include \
//     -Itools/common/include docs/lab/2026-11-29-foot-unlock-experiment.cpp $B/tools/engines/liblmm_simulation.a \
//     $B/tools/plot/liblmm_plot.a $B/tools/import/liblmm_import.a $B/tools/common/liblmm_tools_common.a \
//     $B/runtime/writer/liblmm_writer.a $B/runtime/liblmm_runtime.a -lassimp -ltinygltf -lspdlog -lfmt \
//     -ltomlplusplus -lpthread -o unlock
//   ./unlock MODEL.lmmw UNLOCK_M MIN_FRAMES
#include "lmm/character/learned_character.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/engines/simulation.hpp"
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cmath>
using namespace lmm;
int main(int argc, char** argv) {
  std::string error;
  auto model = Model::load_file(argv[1], error);
  const float unlock = std::atof(argv[2]);
  const int min_frames = std::atoi(argv[3]);
  LearnedCharacter c;
  LearnedSettings s;
  if (!c.init(model, s, Vec3{}, 0.0f, error)) { puts(error.c_str()); return 1; }
  const auto script = pipeline::random_input_script(1, 120.0f);
  const auto& parents = model->skeleton().parents;
  const int J = int(parents.size());
  const auto contacts = model->contact_joints();
  FootLocker feet; feet.init(parents, contacts);
  std::vector<uint8_t> state(contacts.size(), 0); std::vector<int> run(contacts.size(), 0);
  std::vector<Vec3> prev; double slide = 0; long n = 0; double ik_max = 0, ik_sum = 0, leg_max = 0; std::vector<int> legs;
  for (int k : contacts) for (int l = 0, j = k; l < 4 && j >= 0; ++l, j = parents[size_t(j)]) legs.push_back(j); long onsets = 0; double onset_slide = 0;
  const float dt = 1.0f / 60.0f;
  for (int f = 0; f < 7200; ++f) {
    c.update(script.at(f * dt), dt);
    PoseBuffers out; out.resize(J);
    out.positions = c.local_positions(); out.rotations = c.local_rotations();
    std::vector<Vec3> gp(J); std::vector<Quat> gr(J);
    forward_kinematics(parents.data(), J, out.positions.data(), out.rotations.data(), gp.data(), gr.data());
    // a lock after MIN_FRAMES frames of decoder contact (in_contact: above 0.5)
    std::vector<uint8_t> locked(contacts.size());
    for (size_t k = 0; k < contacts.size(); ++k) {
      const bool raw_on = c.in_contact(int(k));  // > 0.5
      run[k] = raw_on ? run[k] + 1 : 0;
      bool on = state[k] ? raw_on : (run[k] >= min_frames);
      if (state[k] == 0 && on) ++onsets;
      state[k] = on;
      locked[k] = on;
    }
    feet.apply(locked.data(), unlock, 0.05f, dt, parents, out, gp, gr);
    ik_max = std::max(ik_max, double(feet.largest_ik_error())); ik_sum += feet.largest_ik_error();
    if (!prev.empty()) for (int j : legs) leg_max = std::max(leg_max, double(length(gp[size_t(j)] - prev[size_t(j)]) / dt));
    if (!prev.empty()) for (size_t k = 0; k < contacts.size(); ++k) if (c.in_contact(int(k))) {
      const Vec3 d = gp[size_t(contacts[k])] - prev[size_t(contacts[k])];
      const double sp = 100.0 * std::sqrt(d.x*d.x + d.z*d.z) / dt; slide += sp; ++n;
    }
    prev = gp;
  }
  printf("unlock %.2f min_frames %d: slide %.2f cm/s, onsets %ld, ik max %.1f cm mean %.2f cm, leg max %.2f m/s\n", unlock, min_frames, slide / n, onsets, 100 * ik_max, 100 * ik_sum / 7200, leg_max);
}
