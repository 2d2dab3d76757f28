// Database annotations (format version 3): tags, no-entry frames, cost biases and events are read
// in place, are optional (older databases load without them) and every bad value is refused
// naming its tensor and frame.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lmm/asset/database.hpp"
#include "support/synthetic_database.hpp"

using namespace lmm;

namespace {

// A synthetic database loaded from its bytes (which it reads in place), or the loader's message.
struct Loaded {
  AlignedBuffer bytes;
  std::shared_ptr<const Database> db;
  std::string error;
};

// Builds and loads `synthetic`.
Loaded load(const test::SyntheticDatabase& synthetic) {
  Loaded loaded{test::aligned_copy(synthetic.build()), nullptr, ""};
  loaded.db = Database::load_buffer(loaded.bytes.data(), loaded.bytes.size(), loaded.error);
  return loaded;
}

// The loader's message for `synthetic`, or "loaded".
std::string load_error(const test::SyntheticDatabase& synthetic) {
  const Loaded loaded = load(synthetic);
  return loaded.db == nullptr ? loaded.error : "loaded";
}

// The 12-frame synthetic database with tags walk (frames 0-7) and idle (frames 6-11, with tag
// bit 63 on frame 11 when `sixty_four` names 64 tags), frames 0-1 no-entry, a bias on frame 4
// and events step (frames 2, 8) and wave (frame 8).
test::SyntheticDatabase annotated(bool sixty_four = false) {
  test::SyntheticDatabase s;
  s.tag_names = "walk\nidle\n";
  for (int t = 2; sixty_four && t < 64; ++t) s.tag_names += "tag" + std::to_string(t) + "\n";
  s.tag_masks.assign(24, 0);
  for (int f = 0; f < 12; ++f) s.tag_masks[2 * size_t(f)] = (f < 8 ? 1 : 0) | (f >= 6 ? 2 : 0);
  if (sixty_four) s.tag_masks[2 * 11 + 1] = int32_t(0x80000000u);
  s.no_entry.assign(12, 0);
  s.no_entry[0] = s.no_entry[1] = 1;
  s.cost_bias.assign(12, 0.0f);
  s.cost_bias[4] = 2.5f;
  s.event_names = "step\nwave\n";
  s.event_frames = {2, 8, 8};
  s.event_name_index = {0, 0, 1};
  return s;
}

}  // namespace

TEST(FrameAnnotations, ADatabaseWithoutThemHasNoTagsBiasesOrEvents) {
  const Loaded loaded = load(test::SyntheticDatabase{});
  ASSERT_NE(loaded.db, nullptr) << loaded.error;
  const Database* db = loaded.db.get();
  const FrameAnnotations& a = db->annotations();
  EXPECT_TRUE(a.tag_names().empty());
  EXPECT_EQ(a.tag("walk"), -1);
  EXPECT_EQ(a.tags(5), 0u);
  EXPECT_FALSE(a.no_entry(0));
  EXPECT_FALSE(a.has_cost_bias());
  EXPECT_EQ(a.cost_bias(4), 0.0f);
  EXPECT_TRUE(a.events().empty());
}

TEST(FrameAnnotations, TagsFlagsBiasesAndEventsAreReadPerFrame) {
  const Loaded loaded = load(annotated());
  ASSERT_NE(loaded.db, nullptr) << loaded.error;
  const Database* db = loaded.db.get();
  EXPECT_EQ(db->blob().version(), 3u);
  const FrameAnnotations& a = db->annotations();
  ASSERT_EQ(a.tag_names().size(), 2u);
  EXPECT_EQ(a.tag("idle"), 1);
  EXPECT_EQ(a.tag("run"), -1);
  EXPECT_EQ(a.tags(0), TagMask(1));
  EXPECT_EQ(a.tags(7), TagMask(3));
  EXPECT_EQ(a.tags(11), TagMask(2));
  EXPECT_TRUE(a.no_entry(1));
  EXPECT_FALSE(a.no_entry(2));
  EXPECT_TRUE(a.has_cost_bias());
  EXPECT_EQ(a.cost_bias(4), 2.5f);
  EXPECT_EQ(a.cost_bias(5), 0.0f);
  ASSERT_EQ(a.events().size(), 3u);
  EXPECT_EQ(a.events()[2].frame, 8);
  EXPECT_EQ(a.event_names()[size_t(a.events()[2].name)], "wave");
}

TEST(FrameAnnotations, SixtyFourTagsUseEveryBit) {
  const Loaded loaded = load(annotated(true));
  ASSERT_NE(loaded.db, nullptr) << loaded.error;
  const Database* db = loaded.db.get();
  EXPECT_EQ(db->annotations().tag("tag63"), 63);
  EXPECT_EQ(db->annotations().tags(11), TagMask(2) | TagMask(1) << 63);
  test::SyntheticDatabase too_many = annotated(true);
  too_many.tag_names += "tag64\n";
  EXPECT_NE(load_error(too_many).find("tags.names holds 65 names, more than 64"), std::string::npos)
      << load_error(too_many);
}

TEST(FrameAnnotations, BadAnnotationsAreRefusedNamingTensorAndFrame) {
  const auto refused = [](const test::SyntheticDatabase& s, const std::string& expected) {
    const std::string error = load_error(s);
    EXPECT_NE(error.find(expected), std::string::npos) << "expected '" << expected << "', got: " << error;
  };
  test::SyntheticDatabase s = annotated();
  s.tag_masks[2 * 3] = 4;  // bit 2 of two names
  refused(s, "tags.masks: frame 3 has a tag bit beyond the 2 names");
  s = annotated();
  s.tag_names = "walk\nwalk\n";
  refused(s, "tags.names: name 1 ('walk') is repeated");
  for (const auto& [name, problem] : {std::pair<std::string, std::string>{"a,b", "contains ','"}, {" walk", "begins or ends with a space"},
                                      {"x|y", "contains '|'"}, {"none", "is reserved"}}) {
    s = annotated();
    s.tag_names = "walk\n" + name + "\n";
    refused(s, "tags.names: name 1 ('" + name + "') " + problem);
  }
  s = annotated();
  s.event_names = "step\nwa,ve\n";
  refused(s, "events.names: name 1 ('wa,ve') contains ','");
  s = annotated();
  s.kept_out_names = "walk\nrun\n";
  refused(s, "tags.kept_out: 'run' is not one of tags.names");
  s = annotated();
  s.tag_masks.resize(22);  // 11 frames of masks for 12 frames
  refused(s, "tags.masks");
  s = annotated();
  s.no_entry[5] = 2;
  refused(s, "frames.no_entry: frame 5 holds 2");
  s = annotated();
  s.cost_bias[7] = std::nanf("");
  refused(s, "frames.cost_bias: frame 7 holds nan");
  s = annotated();
  s.event_frames = {8, 2, 8};
  refused(s, "events.frames: event 1 is at frame 2");
  s = annotated();
  s.event_frames = {2, 8, 12};
  refused(s, "events.frames: event 2 is at frame 12");
  s = annotated();
  s.event_name_index = {0, 2, 1};
  refused(s, "events.name: event 1 names entry 2 of 2");
  s = annotated();
  s.version = 2;
  refused(s, "need database version 3, but this is version 2");
}

TEST(FrameAnnotations, KeptOutTagsAreThoseDeclaredThatSomeFrameHolds) {
  test::SyntheticDatabase s = annotated();
  EXPECT_EQ(load(s).db->annotations().kept_out_tags(), TagMask(0));  // none declared
  s.kept_out_names = "idle\n";
  EXPECT_EQ(load(s).db->annotations().kept_out_tags(), TagMask(2));
  s.tag_names = "walk\nidle\nwave\n";
  s.kept_out_names = "wave\nidle\n";
  EXPECT_EQ(load(s).db->annotations().kept_out_tags(), TagMask(2));  // no frame holds wave
}

TEST(FrameAnnotations, VersionTwoDatabasesStillLoad) {
  test::SyntheticDatabase old_file;
  old_file.version = 2;
  const Loaded loaded = load(old_file);
  ASSERT_NE(loaded.db, nullptr) << loaded.error;
  const Database* db = loaded.db.get();
  EXPECT_EQ(db->blob().version(), 2u);
  EXPECT_TRUE(db->annotations().tag_names().empty());
}
