// Tags, ranges and events declared at import (skeleton config [tags] / [events], sidecar files).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/import/tags.hpp"
#include "support/bandai_data.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

constexpr float kFileFps = 30.0f, kImportFps = 60.0f;

// Pose of the biped of test::biped_hierarchy in one frame: hips at (x, 90, z) cm turned by
// `heading` degrees about Y, every other joint turned by `swing` degrees about X.
struct BipedPose {
  float x = 0, z = 0, heading = 0, swing = 0;
};

std::string biped_bvh(int frames, const std::function<BipedPose(int)>& pose) {
  std::string text = test::biped_hierarchy() + "MOTION\nFrames: " + std::to_string(frames) +
                     "\nFrame Time: " + std::to_string(1.0 / kFileFps) + "\n";
  for (int f = 0; f < frames; ++f) {
    const BipedPose p = pose(f);
    text += std::to_string(p.x) + " 90 " + std::to_string(p.z) + " 0 0 " + std::to_string(p.heading);
    for (int j = 0; j < 5; ++j) text += " 0 " + std::to_string(p.swing * std::sin(0.4f * f + j)) + " 0";
    text += "\n";
  }
  return text;
}

// Walking `seconds` along a circle of 3 m at 1.5 m/s with swinging legs.
BipedPose circle_pose(float seconds) {
  const float radius = 300.0f, angle = 150.0f * seconds / radius;
  return BipedPose{radius - radius * std::cos(angle), radius * std::sin(angle), angle * 57.29578f, 10.0f};
}

// A circle walk whose first frame is a T-pose-like pose 3 m away (dropped by the importer).
std::string walk_after_pose_bvh(int frames) {
  return biped_bvh(frames, [](int f) { return f == 0 ? BipedPose{300, 0, 0, 0} : circle_pose(f / kFileFps); });
}

// Stands still (legs too) at the circle's start for the frames where `still(f)`, walks the circle otherwise.
std::string still_and_walk_bvh(int frames, const std::function<bool(int)>& still) {
  return biped_bvh(frames, [still](int f) {
    float walked = 0.0f;
    for (int k = 1; k <= f; ++k) walked += still(k) ? 0.0f : 1.0f / kFileFps;
    BipedPose pose = circle_pose(walked);
    pose.swing = still(f) ? 0.0f : pose.swing;
    return pose;
  });
}

// The biped skeleton config with `tags` appended.
std::string tagged_skeleton_toml(const std::string& tags) { return test::biped_skeleton_toml() + tags; }

const char* kSidedTags = "[tags]\nnames = [\"marked\", \"left\", \"right\"]\nmirror = [[\"left\", \"right\"]]\n";
// kSidedTags with a pair of events too (a mirror pair must name a tag or an event of the clips).
const char* kSidedTagsAndEvents =
    "[tags]\nnames = [\"marked\", \"left\", \"right\"]\nmirror = [[\"left\", \"right\"], [\"hit_left\", \"hit_right\"]]\n";

ImportOptions tagged_options(const std::string& dir, const std::string& tags) {
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", tagged_skeleton_toml(tags)));
  o.features = load_feature_config(test::write_text(dir + "/features.toml", test::biped_features_toml()));
  return o;
}

// Imports `o` into DIR/db.mmdb and loads it (nullptr and a failure on error).
std::shared_ptr<const Database> import_and_load(const ImportOptions& o, const std::string& dir,
                                                ImportSummary* summary = nullptr) {
  const ImportSummary s = import_database(o, dir + "/db.mmdb");
  if (summary != nullptr) *summary = s;
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(dir + "/db.mmdb", error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

// A second file so that no feature group is constant: a plain circle walk at another speed.
std::string other_walk(const std::string& dir) {
  return test::write_text(dir + "/other.bvh", test::circle_walk_bvh(100.0f, 200.0f, 60, kFileFps));
}

TagMask bit(const FrameAnnotations& a, const std::string& tag) {
  EXPECT_GE(a.tag(tag), 0) << tag;
  return a.tag(tag) < 0 ? 0 : TagMask(1) << a.tag(tag);
}

// The frames of [begin, end) of `db` carrying `tag`.
std::vector<int> tagged_frames(const Database& db, const std::string& tag, int begin, int end) {
  std::vector<int> frames;
  const TagMask b = bit(db.annotations(), tag);
  for (int f = begin; f < end; ++f) {
    if ((db.annotations().tags(f) & b) != 0) frames.push_back(f);
  }
  return frames;
}

std::vector<int> frames_from(int first, int last, int offset) {
  std::vector<int> frames;
  for (int f = first; f <= last; ++f) frames.push_back(offset + f);
  return frames;
}

// Import frame (60 Hz) of file frame `k` (30 Hz) when the first `dropped` file frames are dropped:
// docs/formats/tags.md, the frames whose time lies at the file frame's time.
int import_frame(int k, int dropped) { return (k - dropped) * int(kImportFps / kFileFps); }

std::vector<std::pair<int, std::string>> events_of(const Database& db) {
  std::vector<std::pair<int, std::string>> events;
  for (const DatabaseEvent& e : db.annotations().events()) {
    events.emplace_back(e.frame, db.annotations().event_names()[size_t(e.name)]);
  }
  return events;
}

TEST(ImportTags, SidecarRangesMapThroughDroppedFramesResamplingAndMirroring) {
  const std::string dir = test::temp_folder("map");
  ImportOptions o = tagged_options(dir, kSidedTagsAndEvents);
  const int frames = 61, dropped = 1;
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(frames)), other_walk(dir)};
  test::write_text(dir + "/a.tags.toml",
                   "tags = [\"marked\"]\n"
                   "[[range]]\nframes = [11, 20]\ntags = [\"left\"]\n"
                   "[[range]]\nframes = [30, 35]\nno_entry = true\n"
                   "[[range]]\nframes = [40, 50]\ncost_bias = 0.5\n"
                   "[[event]]\nframe = 45\nname = \"hit_left\"\n"
                   "[[event]]\nframe = 25\nname = \"beat\"\n");
  ImportSummary summary;
  const auto db = import_and_load(o, dir, &summary);
  ASSERT_NE(db, nullptr);
  const DatabaseRange &a = db->ranges()[0], &mirrored = db->ranges()[1], &other = db->ranges()[2];
  ASSERT_TRUE(mirrored.mirrored);
  ASSERT_EQ(a.stop - a.start, 2 * (frames - dropped - 1) + 1);  // the pose frame was dropped
  const int left_first = import_frame(11, dropped), left_last = import_frame(20, dropped);
  EXPECT_EQ(tagged_frames(*db, "left", a.start, a.stop), frames_from(left_first, left_last, a.start));
  EXPECT_EQ(tagged_frames(*db, "right", a.start, a.stop), std::vector<int>{});
  EXPECT_EQ(tagged_frames(*db, "right", mirrored.start, mirrored.stop),
            frames_from(left_first, left_last, mirrored.start));
  EXPECT_EQ(tagged_frames(*db, "left", mirrored.start, mirrored.stop), std::vector<int>{});
  EXPECT_EQ(tagged_frames(*db, "marked", 0, db->frame_count()), frames_from(a.start, mirrored.stop - 1, 0));
  for (const DatabaseRange* r : {&a, &mirrored}) {
    for (int f = r->start; f < r->stop; ++f) {
      const int k = f - r->start;
      EXPECT_EQ(db->annotations().no_entry(f), k >= import_frame(30, dropped) && k <= import_frame(35, dropped)) << f;
      const bool biased = k >= import_frame(40, dropped) && k <= import_frame(50, dropped);
      EXPECT_EQ(db->annotations().cost_bias(f), biased ? 0.5f : 0.0f) << f;
    }
  }
  for (int f = other.start; f < other.stop; ++f) EXPECT_EQ(db->annotations().tags(f), 0u);
  const std::vector<std::pair<int, std::string>> expected = {
      {a.start + import_frame(25, dropped), "beat"}, {a.start + import_frame(45, dropped), "hit_left"},
      {mirrored.start + import_frame(25, dropped), "beat"}, {mirrored.start + import_frame(45, dropped), "hit_right"}};
  EXPECT_EQ(events_of(*db), expected);
  EXPECT_EQ(summary.events, 4);
  EXPECT_EQ(summary.no_entry_frames, 2 * (import_frame(35, dropped) - import_frame(30, dropped) + 1));
}

TEST(ImportTags, ExcludedRangeSplitsTheClipAndItsFramesAreNotImported) {
  const std::string dir = test::temp_folder("exclude");
  ImportOptions o = tagged_options(dir, kSidedTags);
  o.mirror = false;
  o.inputs = {test::write_text(dir + "/a.bvh", still_and_walk_bvh(61, [](int) { return false; })), other_walk(dir)};
  test::write_text(dir + "/a.tags.toml",
                   "[[range]]\nframes = [20, 29]\nexclude = true\n[[event]]\nframe = 40\nname = \"beat\"\n");
  ImportSummary summary;
  const auto db = import_and_load(o, dir, &summary);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(summary.files, 2);
  ASSERT_EQ(db->ranges().size(), 3u);
  const DatabaseRange &first = db->ranges()[0], &second = db->ranges()[1];
  EXPECT_EQ(first.name, "a (frames 0-19)");
  EXPECT_EQ(second.name, "a (frames 30-60)");
  EXPECT_EQ(first.stop - first.start, import_frame(19, 0) + 1);
  EXPECT_EQ(second.stop - second.start, import_frame(60, 30) + 1);
  // The second part starts with file frame 30: its hips (joint 1, below the simulation bone) are
  // where the file puts them then, not where they were a frame (5 cm) before or after.
  const BipedPose file_30 = circle_pose(30 / kFileFps);
  const Vec3 hips = db->positions(second.start)[0] + rotate(db->rotations(second.start)[0], db->positions(second.start)[1]);
  EXPECT_NEAR(hips.x, file_30.x * 0.01f, 0.005f);
  EXPECT_NEAR(hips.z, file_30.z * 0.01f, 0.005f);
  EXPECT_EQ(events_of(*db), (std::vector<std::pair<int, std::string>>{{second.start + import_frame(40, 30), "beat"}}));
}

TEST(ImportTags, StandingTagsAStillStretchAndNotAWalk) {
  const std::string dir = test::temp_folder("standing");
  ImportOptions o = tagged_options(dir, "[tags.standing]\n");
  o.mirror = false;
  const auto still = [](int f) { return f < 30 || f >= 90; };  // 1 s still, 2 s walking, 1 s still
  o.inputs = {test::write_text(dir + "/a.bvh", still_and_walk_bvh(120, still)), other_walk(dir)};
  const auto db = import_and_load(o, dir);
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(db->annotations().tag_names(), std::vector<std::string>{kStandingTag});
  const DatabaseRange& a = db->ranges()[0];
  const std::vector<int> standing = tagged_frames(*db, kStandingTag, a.start, a.stop);
  // Well inside the still stretches (clear of the simulation bone's smoothing at the edges).
  for (int k : {import_frame(3, 0), import_frame(20, 0), import_frame(100, 0), import_frame(115, 0)}) {
    EXPECT_NE(std::find(standing.begin(), standing.end(), a.start + k), standing.end()) << k;
  }
  for (int f : standing) {
    EXPECT_FALSE(f - a.start > import_frame(33, 0) && f - a.start < import_frame(87, 0)) << "walking frame " << f;
  }
  const DatabaseRange& other = db->ranges()[1];
  EXPECT_EQ(tagged_frames(*db, kStandingTag, other.start, other.stop), std::vector<int>{});
}

TEST(ImportTags, FootPlantEventsAreTheContactRisingEdges) {
  const std::string dir = test::temp_folder("plants");
  ImportOptions o = tagged_options(dir, "[events]\nfoot_plants = [\"plant_l\", \"plant_r\"]\n");
  const auto still = [](int f) { return f < 20 || (f >= 50 && f < 70) || f >= 100; };
  o.inputs = {test::write_text(dir + "/a.bvh", still_and_walk_bvh(120, still)), other_walk(dir)};
  const auto db = import_and_load(o, dir);
  ASSERT_NE(db, nullptr);
  std::vector<std::pair<int, std::string>> edges;
  for (const DatabaseRange& r : db->ranges()) {
    for (int f = r.start + 1; f < r.stop; ++f) {
      for (int c = 0; c < 2; ++c) {
        if (db->contacts(f - 1)[c] == 0 && db->contacts(f)[c] == 1) edges.emplace_back(f, c == 0 ? "plant_l" : "plant_r");
      }
    }
  }
  EXPECT_GE(edges.size(), 4u);  // the file's two stops, feet each, in both copies
  EXPECT_EQ(events_of(*db), edges);
  EXPECT_TRUE(db->annotations().tag_names().empty());
}

TEST(ImportTags, ConfigWithoutTagsWritesNoAnnotations) {
  const std::string dir = test::temp_folder("none");
  ImportOptions o = tagged_options(dir, "");
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  ImportSummary summary;
  const auto db = import_and_load(o, dir, &summary);
  ASSERT_NE(db, nullptr);
  for (const char* tensor : {annotation_tensor::kTagNames, annotation_tensor::kTagMasks, annotation_tensor::kNoEntry,
                             annotation_tensor::kCostBias, annotation_tensor::kEventNames,
                             annotation_tensor::kEventFrames, annotation_tensor::kEventNameIndex}) {
    EXPECT_EQ(db->blob().find(tensor), nullptr) << tensor;
  }
  EXPECT_TRUE(summary.tags.empty());
  EXPECT_EQ(summary.events, 0);
}

// Config text declaring `count` tags t0, t1, ... with a file rule giving the last to every file.
std::string many_tags(int count) {
  std::string names;
  for (int t = 0; t < count; ++t) names += (t == 0 ? "\"t" : ", \"t") + std::to_string(t) + "\"";
  return "[tags]\nnames = [" + names + "]\n[[tags.files]]\npattern = \"*\"\ntags = [\"t" + std::to_string(count - 1) +
         "\"]\n";
}

std::string config_error(const std::string& dir, const std::string& tags) {
  try {
    load_skeleton_config(test::write_text(dir + "/bad.toml", tagged_skeleton_toml(tags)));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportTags, SixtyFourTagsWorkAndSixtyFiveAreAnError) {
  const std::string dir = test::temp_folder("many");
  ImportOptions o = tagged_options(dir, many_tags(kMaxTags));
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  const auto db = import_and_load(o, dir);
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(db->annotations().tag_names().size(), size_t(kMaxTags));
  EXPECT_EQ(db->annotations().tags(0), TagMask(1) << 63);
  const std::string error = config_error(dir, many_tags(kMaxTags + 1));
  EXPECT_NE(error.find("bad.toml:"), std::string::npos) << error;
  EXPECT_NE(error.find("65 tags"), std::string::npos) << error;
  EXPECT_NE(error.find("(64)"), std::string::npos) << error;
}

TEST(ImportTags, ConfigErrorsNameTheFileLineAndTag) {
  const std::string dir = test::temp_folder("config_errors");
  const std::string biped = test::biped_skeleton_toml();
  const int base = 1 + int(std::count(biped.begin(), biped.end(), '\n'));  // the line where `tags` starts
  const std::string at = "bad.toml:" + std::to_string(base) + ":";
  const struct {
    std::string tags, expected[2];
  } cases[] = {
      {"[tags]\nnames = [\"a\"]\n[[tags.files]]\npattern = \"x*\"\ntags = [\"b\"]\n",
       {"bad.toml:" + std::to_string(base + 2) + ":", "unknown tag 'b'"}},
      {"[tags]\nnames = [\"a\"]\nmirror = [[\"a\", \"z\"]]\n", {"bad.toml:" + std::to_string(base + 2) + ":", "unknown tag 'z'"}},
      {"[tags]\nnames = [\"a\"]\ncolour = 1\n", {at, "unknown key 'colour'"}},
      {"[tags]\nnames = [\"a\", \"a\"]\n", {at, "tag 'a' is declared twice"}},
      {"[tags.standing]\nmax_turn_rate = -1\n", {at, "'max_turn_rate'"}},
      {"[events]\nfoot_plants = [\"only_one\"]\n", {at, "one per [contacts] joint"}},
      {"[tags]\nnames = [\"a,b\"]\n", {at, "tag 'a,b' contains ','"}},
      {"[tags]\nnames = [\" sp \"]\n", {at, "tag ' sp ' begins or ends with a space"}},
      {"[tags]\nnames = [\"x|y\"]\n", {at, "tag 'x|y' contains '|'"}},
      {"[tags]\nnames = [\"none\"]\n", {at, "tag 'none' is reserved"}},
      {"[events]\nfoot_plants = [\"l\", \"r,l\"]\n", {at, "event name 'r,l' contains ','"}},
      {"[tags]\nnames = [\"a\"]\nmirror = [[\"a \", \"b\"]]\n", {"bad.toml:" + std::to_string(base + 2) + ":", "'a ' begins or ends"}},
      {"[tags]\nnames = [\"a\"]\nmirror = [[\"standing\", \"a\"]]\n[tags.standing]\n",
       {"bad.toml:" + std::to_string(base + 2) + ":", "'standing' is derived from the motion"}},
      {"[tags]\nnames = [\"a\"]\nactions = [\"b\"]\n", {"bad.toml:" + std::to_string(base + 2) + ":", "unknown tag 'b'"}},
      {"[tags]\nnames = [\"a\"]\nactions = [\"standing\"]\n[tags.standing]\n",
       {"bad.toml:" + std::to_string(base + 2) + ":", "'standing' is derived from the motion ([tags.standing]) and cannot be an action"}},
      {"[tags]\nnames = [\"a\"]\nactions = [\"a\"]\nenter_actions_freely = 1\n",
       {"bad.toml:" + std::to_string(base + 3) + ":", "'enter_actions_freely' must be true or false"}},
  };
  for (const auto& c : cases) {
    const std::string error = config_error(dir, c.tags);
    for (const std::string& part : c.expected) EXPECT_NE(error.find(part), std::string::npos) << c.tags << " -> " << error;
  }
}

// The error of reading sidecar `text` for a 61-frame file whose first `dropped` frames are dropped.
std::string sidecar_error(const std::string& dir, const std::string& text, int dropped = 0) {
  const TagConfig config = tagged_options(dir, kSidedTags).skeleton.tags;
  test::write_text(dir + "/f.tags.toml", text);
  try {
    const FileAnnotations file = load_file_annotations(dir + "/f.bvh", config, 61, dropped);
    kept_parts(file, 61, dropped);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportTags, SidecarErrorsNameTheFileLineAndTag) {
  const std::string dir = test::temp_folder("sidecar_errors");
  const struct {
    std::string text;
    int dropped;
    std::string expected[2];
  } cases[] = {
      {"tags = [\"marked\"]\n[[range]]\nframes = [1, 2]\ntags = [\"wave\"]\n", 0, {"f.tags.toml:2:", "unknown tag 'wave'"}},
      {"tags = [\"nope\"]\n", 0, {"f.tags.toml:1:", "unknown tag 'nope'"}},
      {"[[range]]\nframes = [1, 61]\ntags = [\"left\"]\n", 0, {"f.tags.toml:1:", "frame 61 is outside the file's 61 frames"}},
      {"[[range]]\nframes = [9, 3]\ntags = [\"left\"]\n", 0, {"f.tags.toml:1:", "first is after last"}},
      {"[[range]]\nframes = [1, 3]\ntags = [\"left\"]\nspeed = 2\n", 0, {"f.tags.toml:1:", "unknown key 'speed'"}},
      {"[[range]]\nframes = [1, 3]\nno_entry = \"yes\"\n", 0, {"f.tags.toml:1:", "'no_entry' must be true or false"}},
      {"[[range]]\nframes = [1, 3]\n", 0, {"f.tags.toml:1:", "declares nothing"}},
      {"[[range]]\nframes = [10, 20]\nexclude = true\n[[range]]\nframes = [15, 30]\ntags = [\"left\"]\n", 0,
       {"f.tags.toml:4:", "overlaps the excluded frames of "}},
      {"[[range]]\nframes = [10, 20]\ncost_bias = 1\n[[range]]\nframes = [20, 30]\ncost_bias = 2\n", 0,
       {"f.tags.toml:4:", "cost_bias 2 overlaps cost_bias 1"}},
      {"[[range]]\nframes = [10, 20]\nexclude = true\n[[event]]\nframe = 12\nname = \"hit\"\n", 0,
       {"f.tags.toml:4:", "event 'hit' at frame 12 lies in the excluded frames"}},
      {"[[event]]\nframe = 1\nname = \"\"\n", 0, {"f.tags.toml:1:", "event name '' is empty"}},
      {"[[event]]\nframe = 1\nname = \"a|b\"\n", 0, {"f.tags.toml:1:", "event name 'a|b' contains '|'"}},
      {"[[event]]\nframe = 1\n", 0, {"f.tags.toml:1:", "'name' must be a string"}},
      {"[[event]]\nframe = 2\nname = \"x\"\n", 3, {"f.tags.toml:1:", "frame 2 lies in the first 3 frames"}},
      {"[[range]]\nframes = [1, 60]\nexclude = true\n", 0, {"f.tags.toml:1:", "leaves frames 0 to 0"}},
  };
  for (const auto& c : cases) {
    const std::string error = sidecar_error(dir, c.text, c.dropped);
    for (const std::string& part : c.expected) EXPECT_NE(error.find(part), std::string::npos) << c.text << " -> " << error;
  }
}

TEST(ImportTags, BadSidecarFollowsTheSkipBadPolicy) {
  const std::string dir = test::temp_folder("skip");
  ImportOptions o = tagged_options(dir, kSidedTags);
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir),
              test::write_text(dir + "/b.bvh", test::circle_walk_bvh(120.0f, 250.0f, 60, kFileFps))};
  test::write_text(dir + "/a.tags.toml", "tags = [\"wave\"]\n");
  std::string stopped;
  try {
    import_database(o, dir + "/db.mmdb");
  } catch (const InputError& e) {
    stopped = e.what();
  }
  EXPECT_NE(stopped.find("a.tags.toml:1: unknown tag 'wave'"), std::string::npos) << stopped;
  EXPECT_NE(stopped.find("--skip-bad"), std::string::npos) << stopped;
  o.skip_bad = true;
  ImportSummary summary;
  ASSERT_NE(import_and_load(o, dir, &summary), nullptr);
  EXPECT_EQ(summary.files, 2);
  EXPECT_EQ(summary.skipped_files, 1);
}

// The message of importing `o` into DIR/db.mmdb ("" when it succeeds), checking that a failed
// import wrote nothing.
std::string import_error(const ImportOptions& o, const std::string& dir) {
  try {
    import_database(o, dir + "/db.mmdb");
  } catch (const InputError& e) {
    EXPECT_FALSE(std::filesystem::exists(dir + "/db.mmdb")) << e.what();
    return e.what();
  }
  return "";
}

TEST(ImportTags, AMirrorPairNamingNoTagAndNoEventIsAnError) {
  const std::string dir = test::temp_folder("mirror_typo");
  ImportOptions o = tagged_options(dir, "[tags]\nnames = [\"left\", \"right\"]\nmirror = [[\"Left\", \"Right\"]]\n");
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  const std::string error = import_error(o, dir);
  EXPECT_NE(error.find("biped.toml:"), std::string::npos) << error;
  EXPECT_NE(error.find("the pair [\"Left\", \"Right\"] names no declared tag and no event"), std::string::npos) << error;
  EXPECT_NE(error.find("case-sensitive"), std::string::npos) << error;
  // A pair of events that a sidecar names is fine.
  o = tagged_options(dir, "[tags]\nnames = [\"left\"]\nmirror = [[\"hit_l\", \"hit_r\"]]\n");
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  test::write_text(dir + "/a.tags.toml", "[[event]]\nframe = 30\nname = \"hit_r\"\n");
  EXPECT_EQ(import_error(o, dir), "");
}

TEST(ImportTags, ASidecarOfNoClipIsAnError) {
  const std::string dir = test::temp_folder("orphan");
  ImportOptions o = tagged_options(dir, kSidedTags);
  const std::string walk = test::write_text(dir + "/walk01.bvh", walk_after_pose_bvh(61));
  other_walk(dir);
  test::write_text(dir + "/walk1.tags.toml", "tags = [\"nope\"]\n");  // a misspelt stem
  for (const std::vector<std::string>& inputs : {std::vector<std::string>{dir}, {walk, dir + "/other.bvh"}}) {
    o.inputs = inputs;
    const std::string error = import_error(o, dir);
    if (inputs.size() == 1) {
      EXPECT_NE(error.find("walk1.tags.toml: a tag sidecar of no imported clip"), std::string::npos) << error;
    } else {
      EXPECT_EQ(error, "") << "files given one by one: walk1.tags.toml is not beside them by name";
    }
    std::filesystem::remove(dir + "/db.mmdb");
  }
  // Beside a file given by name: X.<anything>.tags.toml is taken for an animation of X.
  test::write_text(dir + "/walk01.take3.tags.toml", "tags = [\"marked\"]\n");
  o.inputs = {walk, dir + "/other.bvh"};
  const std::string error = import_error(o, dir);
  EXPECT_NE(error.find("walk01.take3.tags.toml: a tag sidecar of no imported clip"), std::string::npos) << error;
}

TEST(ImportTags, ADatabaseWithNoFrameToEnterIsAnError) {
  const std::string dir = test::temp_folder("no_entry_everywhere");
  ImportOptions o = tagged_options(dir, kSidedTags);
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  test::write_text(dir + "/a.tags.toml", "[[range]]\nframes = [1, 60]\nno_entry = true\n");
  test::write_text(dir + "/other.tags.toml", "[[range]]\nframes = [0, 59]\nno_entry = true\n");
  const std::string error = import_error(o, dir);
  EXPECT_NE(error.find("every frame of every clip is no_entry"), std::string::npos) << error;
  test::write_text(dir + "/other.tags.toml", "[[range]]\nframes = [0, 58]\nno_entry = true\n");
  EXPECT_EQ(import_error(o, dir), "") << "one frame to enter is enough";
}

TEST(ImportTags, ActionsAreKeptOutUnlessEnteredFreely) {
  const std::string dir = test::temp_folder("actions");
  ImportOptions o = tagged_options(dir, "[tags]\nnames = [\"marked\", \"spare\"]\nactions = [\"marked\", \"spare\"]\n");
  o.inputs = {test::write_text(dir + "/a.bvh", walk_after_pose_bvh(61)), other_walk(dir)};
  test::write_text(dir + "/a.tags.toml", "tags = [\"marked\"]\n");
  ImportSummary summary;
  auto db = import_and_load(o, dir, &summary);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->annotations().kept_out_tags(), bit(db->annotations(), "marked")) << "no frame holds spare";
  EXPECT_EQ(summary.action_tags, (std::vector<std::string>{"marked", "spare"}));
  o = tagged_options(dir, "[tags]\nnames = [\"marked\"]\nactions = [\"marked\"]\nenter_actions_freely = true\n");
  o.inputs = {dir + "/a.bvh", dir + "/other.bvh"};
  db = import_and_load(o, dir, &summary);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->annotations().kept_out_tags(), TagMask(0));
  EXPECT_EQ(db->blob().find(annotation_tensor::kKeptOutNames), nullptr);
  EXPECT_TRUE(summary.action_tags.empty());
}

TEST(ImportTags, MaxJointSpeedLeavesGesturesOutOfStanding) {
  // 60 frames with root and feet still; a hand moves at 1 m/s in frames 20-39.
  StandingMotion motion;
  motion.fps = 60.0f;
  motion.contact_joints = 1;
  motion.root_speed.assign(60, 0.0f);
  motion.turn_rate.assign(60, 0.0f);
  motion.contact_speeds.assign(60, 0.0f);
  motion.fastest_joint.assign(60, 0.05f);
  std::fill(motion.fastest_joint.begin() + 20, motion.fastest_joint.begin() + 40, 1.0f);
  StandingSettings settings;
  settings.min_duration = 0.1f;  // 6 frames
  const std::vector<uint8_t> feet_only = standing_frames(settings, motion);
  EXPECT_EQ(std::count(feet_only.begin(), feet_only.end(), 1), 60) << "without max_joint_speed the hand does not matter";
  settings.max_joint_speed = 0.5f;
  const std::vector<uint8_t> at_rest = standing_frames(settings, motion);
  for (int f = 0; f < 60; ++f) EXPECT_EQ(at_rest[size_t(f)], f < 20 || f >= 40 ? 1 : 0) << "frame " << f;
}

TEST(ImportTags, GlobMatchesStarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("dataset-2_wave-*", "dataset-2_wave-left-hand_normal_001"));
  EXPECT_FALSE(glob_match("dataset-2_wave-*", "dataset-1_wave-left"));
  EXPECT_TRUE(glob_match("*_bye*_*", "dataset-1_byebye_normal_001"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("*x", "abc"));
}

// The fraction of the frames of the ranges whose name starts with one of `stems` that carry `tag`.
double tagged_fraction(const Database& db, const std::vector<std::string>& stems, const std::string& tag) {
  int tagged = 0, frames = 0;
  for (const DatabaseRange& r : db.ranges()) {
    const bool listed = std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return r.name.rfind(s, 0) == 0; });
    if (!listed) continue;
    tagged += int(tagged_frames(db, tag, r.start, r.stop).size());
    frames += r.stop - r.start;
  }
  return frames == 0 ? 0.0 : double(tagged) / frames;
}

// The range named `name`.
const DatabaseRange& range_named(const Database& db, const std::string& name) {
  const auto it = std::find_if(db.ranges().begin(), db.ranges().end(), [&](const DatabaseRange& r) { return r.name == name; });
  EXPECT_NE(it, db.ranges().end()) << name;
  return it == db.ranges().end() ? db.ranges().front() : *it;
}

TEST(BandaiTags, ShippedConfigTagsStandingActionsNotWalksAndPlantsFeet) {
  REQUIRE_BANDAI(data, "normal");
  const std::string actions = data + "/../bandai-actions";
  ASSERT_TRUE(std::filesystem::is_directory(actions)) << actions << ": bandai-actions must sit beside bandai-loco";
  const std::vector<std::string> action_stems = {"dataset-2_wave-left-hand_normal_001", "dataset-1_bow_normal_001",
                                                 "dataset-1_kick_normal_001"};
  const std::vector<std::string> walk_stems = {"dataset-2_walk_normal_001", "dataset-2_run_normal_001"};
  std::vector<std::string> inputs;
  for (const std::string& s : action_stems) inputs.push_back(actions + "/" + s + ".bvh");
  for (const std::string& s : walk_stems) inputs.push_back(data + "/normal/" + s + ".bvh");
  const std::string dir = test::temp_folder("bandai_tags");
  const ImportSummary summary = test::import_bandai(inputs, dir + "/db.mmdb");
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(dir + "/db.mmdb", error);
  ASSERT_NE(db, nullptr) << error;

  // Actions are performed standing, between gestures at rest (bandai.toml's max_joint_speed
  // leaves the gestures out): some of their frames stand; walking and running do not.
  EXPECT_GT(tagged_fraction(*db, action_stems, kStandingTag), 0.03);
  EXPECT_LT(tagged_fraction(*db, walk_stems, kStandingTag), 0.05);
  // File-name tags, sided ones swapped on the mirrored copy.
  const DatabaseRange& wave = range_named(*db, "dataset-2_wave-left-hand_normal_001");
  const DatabaseRange& wave_mirrored = range_named(*db, "dataset-2_wave-left-hand_normal_001 (mirrored)");
  const FrameAnnotations& a = db->annotations();
  const TagMask wave_tags = bit(a, "action") | bit(a, "gesture") | bit(a, "wave");
  EXPECT_EQ(a.tags(wave.start) & ~bit(a, kStandingTag), wave_tags | bit(a, "left"));
  EXPECT_EQ(a.tags(wave_mirrored.start) & ~bit(a, kStandingTag), wave_tags | bit(a, "right"));
  const DatabaseRange& walk = range_named(*db, "dataset-2_walk_normal_001");
  EXPECT_EQ(a.tags(walk.start + 10), bit(a, "locomotion") | bit(a, "walk"));
  const DatabaseRange& kick = range_named(*db, "dataset-1_kick_normal_001");
  EXPECT_EQ(a.tags(kick.start) & bit(a, "kick"), bit(a, "kick"));
  // Foot plants: both feet land during the walk.
  int plants_l = 0, plants_r = 0;
  for (const DatabaseEvent& e : a.events()) {
    const bool in_walk = e.frame >= walk.start && e.frame < walk.stop;
    plants_l += in_walk && a.event_names()[size_t(e.name)] == "foot_plant_l";
    plants_r += in_walk && a.event_names()[size_t(e.name)] == "foot_plant_r";
  }
  EXPECT_GE(plants_l, 2);
  EXPECT_GE(plants_r, 2);
  EXPECT_EQ(summary.events, int(a.events().size()));
}

}  // namespace
