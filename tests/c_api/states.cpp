// The C++ reference of ctest c_api.python_states: writes the annotated walks of
// gameplay_script.hpp to DIR/annotated.mmdb and the four-state controller config to
// DIR/states.toml, then runs the scripted four-state run on an lmm::DatabaseCharacter and prints
// one line per update: the state set before it ("-" when none is), the stick (left x, y, gait) and
// the root after it (x, y, z), floats with 9 significant digits (exact for a float). tests/c_api/states.py replays
// those lines through python/lmmkit.py and must reach the same roots.
//   lmm_c_states DIR
#include <cstdio>
#include <string>

#include "c_api/gameplay_script.hpp"
#include "support/temp_files.hpp"

using namespace lmm;
using namespace lmm::test::gameplay;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  AlignedBuffer buffer;
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  load_database(buffer, db, search);  // reports a failure on stdout and leaves db null
  std::string error;
  if (db == nullptr || !write_file(dir + "/annotated.mmdb", buffer)) error = "cannot write " + dir + "/annotated.mmdb";
  test::write_text(dir + "/states.toml", kStatesConfig);
  const std::vector<Vec3> path = error.empty() ? cpp_root_path(db, search, error) : std::vector<Vec3>{};
  if (path.empty()) {
    std::fprintf(stderr, "lmm_c_states: %s\n", error.c_str());
    return 1;
  }
  for (int u = 0; u < kUpdates; ++u) {
    const lmm_gamepad g = input_at(u);
    const char* state = state_set_before(u);
    std::printf("%s %.9g %.9g %.9g %.9g %.9g %.9g\n", state != nullptr ? state : "-", g.left_x, g.left_y, g.gait,
                path[size_t(u)].x, path[size_t(u)].y, path[size_t(u)].z);
  }
  return 0;
}
