// The probe behind 2026-11-29-mirror-offsets.md: for two databases of the same clips (e.g. imported
// before and after a change to mirror()), the largest difference of their features, world joint
// positions and local rotations, and for each how far joints posed by its local rotations on the
// skeleton's offsets (as a skinned character posed by rotations alone draws them) lie from its own.
// Build against a release build of the runtime (BUILD, e.g. build/release):
//   g++ -std=c++17 -O2 -Iruntime/include docs/lab/2026-11-29-mirror-offsets-probe.cpp BUILD/runtime/liblmm_runtime.a -lpthread -o mirror-probe
//   ./mirror-probe BEFORE.mmdb AFTER.mmdb
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "lmm/asset/database.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/core/math.hpp"
using namespace lmm;
static float distance(Vec3 a, Vec3 b) { return length(a - b); }
// World positions of frame `f` from its local rotations and its local positions, or (with
// `rest_offsets`) the skeleton's offsets below the root, as a skinned character posed by rotations
// alone draws them.
static void globals(const Database& db, int f, std::vector<Vec3>& gp, bool rest_offsets = false) {
  const Skeleton& skeleton = db.skeleton();
  std::vector<Vec3> local(db.positions(f), db.positions(f) + db.joint_count());
  for (int j = 0; rest_offsets && j < db.joint_count(); ++j) {
    if (skeleton.parents[size_t(j)] > 0) local[size_t(j)] = skeleton.offsets[size_t(j)];
  }
  std::vector<Quat> gr(local.size());
  forward_kinematics(skeleton.parents.data(), db.joint_count(), local.data(), db.rotations(f), gp.data(), gr.data());
}
// Whether joint `j` hangs below the root's child (its local position should be its offset).
static bool below_root_child(const Database& db, int j) { return db.skeleton().parents[size_t(j)] > 0; }
int main(int, char** argv) {
  std::string error;
  auto a = Database::load_file(argv[1], error), b = Database::load_file(argv[2], error);
  if (!a || !b) { std::fprintf(stderr, "%s\n", error.c_str()); return 1; }
  float feature = 0, position = 0, angle = 0, drift_a = 0, drift_b = 0, offset_a = 0, offset_b = 0;
  int drift_frame = 0, drift_joint = 0;  // where the first database's drift is largest
  const int n = a->joint_count();
  std::vector<Vec3> ga(static_cast<size_t>(n)), gb(static_cast<size_t>(n));
  for (int f = 0; f < a->frame_count(); ++f) {
    for (int d = 0; d < a->schema().dims; ++d) feature = std::fmax(feature, std::fabs(a->features(f)[d] - b->features(f)[d]));
    globals(*a, f, ga); globals(*b, f, gb);
    std::vector<Vec3> ra(ga), rb(gb);
    globals(*a, f, ra, true); globals(*b, f, rb, true);
    for (int j = 0; j < n; ++j) {
      if (distance(ga[j], ra[j]) > drift_a) drift_a = distance(ga[j], ra[j]), drift_frame = f, drift_joint = j;
      drift_b = std::fmax(drift_b, distance(gb[j], rb[j]));
      position = std::fmax(position, distance(ga[j], gb[j]));
      const Quat p = a->rotations(f)[j], q = b->rotations(f)[j];
      const Quat r = inverse(p) * q;  // p^-1 q: its angle stays exact near 0
      angle = std::fmax(angle, 2 * std::atan2(std::hypot(r.x, r.y, r.z), std::fabs(r.w)) * 57.29578f);
      if (below_root_child(*a, j)) {
        offset_a = std::fmax(offset_a, distance(a->positions(f)[j], a->skeleton().offsets[size_t(j)]));
        offset_b = std::fmax(offset_b, distance(b->positions(f)[j], b->skeleton().offsets[size_t(j)]));
      }
    }
  }
  std::printf("frames %d / %d: features within %.3g, global positions within %.4f mm, local rotations differ up to %.2f deg\n",
              a->frame_count(), b->frame_count(), feature, 1000 * position, angle);
  std::printf("local positions at most %.2f cm / %.2f cm from the skeleton's offsets\n", 100 * offset_a, 100 * offset_b);
  const DatabaseRange& clip = a->ranges()[size_t(clip_index(*a, drift_frame))];
  std::printf("joints posed by local rotations on the skeleton's offsets, largest distance from the database's: %.1f mm / %.1f mm\n"
              "  (the first's: %s at frame %d, in %s)\n", 1000 * drift_a, 1000 * drift_b,
              a->skeleton().names[size_t(drift_joint)].c_str(), drift_frame, clip.name.c_str());
}
