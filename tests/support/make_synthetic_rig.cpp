// lmm_make_synthetic_rig DIR [--z-up] [--t-pose] [--clips NAME,...]: writes the synthetic second
// skeleton's clips (DIR/*.bvh) and its skeleton config (DIR/rig.toml) for the end-to-end CLI test
// (tests/cli/cli_test.sh second_skeleton). The options make the foreign rigs of the foreign_rigs
// case: a Z-up world, a T-pose frame before each take, only the named clips.
#include <cstdio>
#include <fstream>
#include <string>

#include "support/synthetic_rig.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [--z-up] [--t-pose] [--clips NAME,...]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  lmm::test::rig::Variant variant;
  std::string only;  // ",a,b," when --clips a,b
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--z-up") {
      variant.z_up = true;
    } else if (arg == "--t-pose") {
      variant.t_pose = true;
    } else if (arg == "--clips" && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else {
      std::fprintf(stderr, "%s: unknown option '%s'\n", argv[0], arg.c_str());
      return 2;
    }
  }
  for (const lmm::test::rig::ClipSpec& clip : lmm::test::rig::default_clips()) {
    if (!only.empty() && only.find("," + clip.name + ",") == std::string::npos) continue;
    std::ofstream(dir + "/" + clip.name + ".bvh", std::ios::binary) << lmm::test::rig::clip_bvh(clip, variant);
  }
  std::ofstream(dir + "/rig.toml", std::ios::binary) << lmm::test::rig::skeleton_toml();
  return std::ofstream(dir + "/rig.toml", std::ios::app).good() ? 0 : 1;
}
