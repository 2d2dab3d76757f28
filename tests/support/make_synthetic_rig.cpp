// lmm_make_synthetic_rig DIR: writes the synthetic second skeleton's clips (DIR/*.bvh) and its
// skeleton config (DIR/rig.toml) for the end-to-end CLI test (tests/cli/cli_test.sh second_skeleton).
#include <cstdio>
#include <fstream>
#include <string>

#include "support/synthetic_rig.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  for (const lmm::test::rig::ClipSpec& clip : lmm::test::rig::default_clips()) {
    std::ofstream(dir + "/" + clip.name + ".bvh", std::ios::binary) << lmm::test::rig::clip_bvh(clip);
  }
  std::ofstream(dir + "/rig.toml", std::ios::binary) << lmm::test::rig::skeleton_toml();
  return std::ofstream(dir + "/rig.toml", std::ios::app).good() ? 0 : 1;
}
