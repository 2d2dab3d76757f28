// Tests on the real Bandai mocap (support/bandai_data.hpp says where it comes from).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmm/asset/database.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "support/bandai_data.hpp"
#include "support/foot_lock_runs.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;
namespace fs = std::filesystem;

namespace {

// Sum over the folder's BVH files of the "Frames:" header and the frame count after
// resampling 30 -> 60 Hz (2n - 1), read independently of the importer.
void count_frames(const std::string& folder, int& files, long& frames_30, long& frames_60) {
  files = 0;
  frames_30 = frames_60 = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".bvh") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line) && line.rfind("Frames:", 0) != 0) {
    }
    const long n = std::atol(line.c_str() + 7);
    ++files;
    frames_30 += n;
    frames_60 += 2 * n - 1;
  }
}

TEST(BandaiData, NormalFolderImportsWithTheExpectedFrameCount) {
  REQUIRE_BANDAI(data, "normal");
  int files = 0;
  long frames_30 = 0, frames_60 = 0;
  count_frames(data + "/normal", files, frames_30, frames_60);
  EXPECT_EQ(files, 145);
  EXPECT_EQ(frames_30, 21791);  // shared/data/README.md

  const std::string dir = test::temp_folder("bandai");
  const ImportSummary s = test::import_bandai({data + "/normal"}, dir + "/normal.mmdb");
  EXPECT_EQ(s.files, files);
  EXPECT_EQ(s.clips, 2 * files);
  EXPECT_EQ(s.frames, 2 * frames_60);
  EXPECT_EQ(s.joints, 22);  // 21 BVH joints without joint_Root, plus the simulation bone

  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(dir + "/normal.mmdb", error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->frame_count(), 2 * frames_60);
  EXPECT_EQ(db->schema().dims, 27);
  // Sanity of the derived data: characters walk forwards, and the feet touch the ground
  // a substantial part of the time.
  const int hip_velocity_z = 26;
  EXPECT_GT(db->feature_offset()[hip_velocity_z], 0.5f);
  EXPECT_GT(s.contact_ratio, 0.2);
  EXPECT_LT(s.contact_ratio, 0.8);
  fs::remove_all(dir);
}

TEST(BandaiData, RandomMinuteOfDatabaseMotionMatching) {
  REQUIRE_BANDAI(data, "normal");
  const std::string dir = test::temp_folder("bandai_sim");
  test::import_bandai({data + "/normal"}, dir + "/normal.mmdb");
  FeatureSearch search;
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(dir + "/normal.mmdb", error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
  const test::FootLockRuns runs = test::run_with_and_without_foot_lock(db, search, 1, 60.0f);
  const SimMetrics& a = runs.free_feet;
  const SimMetrics& b = runs.locked_feet;
  for (const SimMetrics& m : {a, b}) {
    EXPECT_EQ(m.nan_frames, 0);
    EXPECT_EQ(m.still_frames, 0);
    EXPECT_GE(m.searches, 600);  // every 0.1 s at least
    EXPECT_GT(m.transitions, 0);
  }
  EXPECT_LT(b.foot_slide_cm_per_s, a.foot_slide_cm_per_s);
  std::printf("foot slide %.2f cm/s free, %.2f cm/s locked; trajectory error %.3f m\n",
              a.foot_slide_cm_per_s, b.foot_slide_cm_per_s, a.trajectory_error_m);
  fs::remove_all(dir);
}

}  // namespace
