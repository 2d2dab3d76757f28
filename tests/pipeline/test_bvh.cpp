#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lmm/import/bvh.hpp"
#include "lmm/import/motion.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// Global joint positions of frame `f` of a parsed file (metres with `scale`).
std::vector<Vec3> frame_positions(const BvhFile& bvh, int f, float scale = 1.0f) {
  Skeleton skeleton;
  Clip clip;
  clip_from_bvh(bvh, scale, "test", skeleton, clip);
  std::vector<Vec3> gp(size_t(clip.joints));
  std::vector<Quat> gr(size_t(clip.joints));
  forward_kinematics(skeleton.parents.data(), clip.joints, &clip.position(f, 0), &clip.rotation(f, 0),
                     gp.data(), gr.data());
  return gp;
}

void expect_near(Vec3 a, Vec3 b, float tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

// Two-joint file: root with `order` rotation channels and a child 1 unit along +X.
std::string arm_bvh(const std::string& order, const std::string& row) {
  return "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition " + order +
         "\n JOINT B\n {\n  OFFSET 1 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
         "  End Site\n  {\n   OFFSET 1 0 0\n  }\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n" +
         row + "\n";
}

TEST(Bvh, ParsesHierarchyChannelsAndEndSites) {
  const BvhFile bvh = parse_bvh(test::straight_walk_bvh(100.0f, 4, 30.0f), "walk.bvh");
  ASSERT_EQ(bvh.joints.size(), 6u);
  EXPECT_EQ(bvh.joints[3].name, "Foot_L");
  EXPECT_EQ(bvh.joints[3].parent, 2);
  EXPECT_TRUE(bvh.joints[3].has_end_site);
  EXPECT_FLOAT_EQ(bvh.joints[3].end_site.z, 10.0f);
  EXPECT_EQ(bvh.channel_count(), 6 + 5 * 3);
  EXPECT_EQ(bvh.frame_count, 4);
  EXPECT_NEAR(bvh.frame_time, 1.0 / 30.0, 1e-6);
  EXPECT_NEAR(bvh.values[size_t(3 * bvh.channel_count() + 2)], 10.0f, 1e-4f);
}

TEST(Bvh, ForwardKinematicsMatchesHandComputedPositions) {
  // Root at (1, 2, 3) rotated X=90 then Y=90 (R = Rx Ry): child offset (1,0,0) -> Ry gives
  // (0,0,-1), Rx gives (0,1,0); so B sits at (1, 3, 3).
  const BvhFile xyz = parse_bvh(arm_bvh("Xrotation Yrotation Zrotation", "1 2 3 90 90 0 0 0 0"), "xyz.bvh");
  expect_near(frame_positions(xyz, 0)[1], Vec3{1, 3, 3}, 1e-5f);
  // Same angles, other order (R = Ry Rx): Rx keeps (1,0,0), Ry sends it to (0,0,-1): (1, 2, 2).
  const BvhFile yxz = parse_bvh(arm_bvh("Yrotation Xrotation Zrotation", "1 2 3 90 90 0 0 0 0"), "yxz.bvh");
  expect_near(frame_positions(yxz, 0)[1], Vec3{1, 2, 2}, 1e-5f);
  // Unit scale applies to offsets and position channels (centimetres -> metres).
  const BvhFile walk = parse_bvh(test::straight_walk_bvh(60.0f, 3, 30.0f), "walk.bvh");
  const std::vector<Vec3> p = frame_positions(walk, 2, 0.01f);
  expect_near(p[0], Vec3{0, 0.9f, 0.04f}, 1e-6f);   // hips: 60 cm/s * 2/30 s
  expect_near(p[3], Vec3{0.1f, 0.05f, 0.04f}, 1e-6f);  // left foot: hips + (10, -85, 0) cm
}

TEST(Bvh, AllChannelOrdersParseToTheSamePose) {
  const BvhFile source = parse_bvh(test::circle_walk_bvh(150.0f, 300.0f, 5, 30.0f), "circle.bvh");
  Skeleton skeleton;
  Clip clip;
  clip_from_bvh(source, 0.01f, "circle", skeleton, clip);
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (Quat& q : clip.rotations) q = normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
  std::vector<Vec3> reference;
  for (const char* order : {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"}) {
    const std::string text = write_bvh(bvh_from_clip(skeleton, clip, order, 0.01f));
    ASSERT_NE(text.find(std::string(1, order[0]) + "rotation " + order[1] + "rotation"), std::string::npos);
    const BvhFile parsed = parse_bvh(text, order);
    for (int f = 0; f < 5; ++f) {
      const std::vector<Vec3> p = frame_positions(parsed, f, 0.01f);
      if (reference.size() < 5 * p.size()) {
        reference.insert(reference.end(), p.begin(), p.end());
        continue;
      }
      for (size_t j = 0; j < p.size(); ++j) expect_near(p[j], reference[f * p.size() + j], 1e-5f);
    }
  }
}

TEST(Bvh, EulerDecompositionInvertsRotation) {
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (const char* order : {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"}) {
    const std::vector<BvhChannel> channels = rotation_order(order);
    for (int i = 0; i < 200; ++i) {
      const Quat q = normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
      float degrees[3];
      bvh_euler(channels, q, degrees);
      const Quat back = bvh_rotation(channels, degrees);
      EXPECT_GT(std::fabs(dot(q, back)), 1.0f - 1e-5f) << order;
    }
  }
  EXPECT_THROW(rotation_order("XXY"), InputError);
}

TEST(Bvh, WriteReadRoundTrip) {
  const BvhFile a = parse_bvh(test::circle_walk_bvh(150.0f, 300.0f, 7, 30.0f), "a.bvh");
  const BvhFile b = parse_bvh(write_bvh(a), "b.bvh");
  ASSERT_EQ(a.joints.size(), b.joints.size());
  for (size_t j = 0; j < a.joints.size(); ++j) {
    EXPECT_EQ(a.joints[j].name, b.joints[j].name);
    EXPECT_EQ(a.joints[j].parent, b.joints[j].parent);
    EXPECT_EQ(a.joints[j].channels, b.joints[j].channels);
    EXPECT_EQ(a.joints[j].has_end_site, b.joints[j].has_end_site);
    expect_near(a.joints[j].offset, b.joints[j].offset, 0.0f);
  }
  EXPECT_EQ(a.frame_count, b.frame_count);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NEAR(a.frame_time, b.frame_time, 1e-9);
}

// The InputError message for `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    parse_bvh(text, "bad.bvh");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BvhErrors, TruncatedHierarchy) {
  const std::string full = test::straight_walk_bvh(100.0f, 3, 30.0f);
  const std::string error = parse_error(full.substr(0, full.find("JOINT Foot_R") + 8));
  EXPECT_NE(error.find("bad.bvh:"), std::string::npos) << error;
  EXPECT_NE(error.find("end of file"), std::string::npos) << error;
}

TEST(BvhErrors, TruncatedMotion) {
  const std::string full = test::straight_walk_bvh(100.0f, 3, 30.0f);
  const std::string error = parse_error(full.substr(0, full.rfind('\n', full.size() - 2) + 1));
  EXPECT_NE(error.find("declares 3 frames"), std::string::npos) << error;
}

TEST(BvhErrors, WrongChannelCount) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  text.replace(text.find("CHANNELS 3"), 10, "CHANNELS 4");
  const std::string error = parse_error(text);
  EXPECT_NE(error.find("'Spine' has 4 channels"), std::string::npos) << error;
  EXPECT_NE(error.find("bad.bvh:9:"), std::string::npos) << error;
}

TEST(BvhErrors, RowWithMissingValues) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  text.erase(text.size() - 3);  // drop the last value of the last row
  text += "\n";
  const std::string error = parse_error(text);
  EXPECT_NE(error.find("expected 21 values, found 20"), std::string::npos) << error;
}

TEST(BvhErrors, NonNumericValue) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  const size_t motion_line = size_t(std::count(text.begin(), text.begin() + long(text.find("MOTION")), '\n')) + 1;
  text.replace(text.rfind(" 0 0"), 2, " abc");
  const std::string error = parse_error(text);
  EXPECT_NE(error.find("'abc' is not a number"), std::string::npos) << error;
  EXPECT_NE(error.find("bad.bvh:" + std::to_string(motion_line + 5) + ":"), std::string::npos) << error;
}

TEST(BvhErrors, NanAndInfinityValues) {
  for (const char* bad : {"nan", "inf", "-inf", "1e99"}) {
    std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
    text.replace(text.rfind(" 0"), 2, std::string(" ") + bad);
    const std::string error = parse_error(text);
    EXPECT_FALSE(error.empty()) << bad;
    EXPECT_NE(error.find("bad.bvh:"), std::string::npos) << error;
  }
}

TEST(BvhErrors, ZeroFrames) {
  const std::string error = parse_error(test::biped_hierarchy() + "MOTION\nFrames: 0\nFrame Time: 0.033\n");
  EXPECT_NE(error.find("frame count must be a positive integer"), std::string::npos) << error;
}

TEST(BvhErrors, FrameCountLargerThanData) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  std::string four = text, huge = text;
  four.replace(four.find("Frames: 3"), 9, "Frames: 4");
  const std::string error = parse_error(four);
  EXPECT_NE(error.find("declares 4 frames but the data ends after 3"), std::string::npos) << error;
  // A count the file cannot possibly hold is rejected before anything is allocated (100,000
  // frames at 30 Hz are within the frame count and duration limits).
  huge.replace(huge.find("Frames: 3"), 9, "Frames: 100000");
  EXPECT_NE(parse_error(huge).find("too short to hold them"), std::string::npos);
}

// A walk of `frames` frames whose "Frame Time:" line reads `frame_time`.
std::string walk_with_frame_time(const std::string& frame_time, int frames = 3) {
  std::string text = test::straight_walk_bvh(100.0f, frames, 30.0f);
  const size_t at = text.find("Frame Time: ") + 12;
  return text.replace(at, text.find('\n', at) - at, frame_time);
}

// Line number (1-based) of the first line of `text` containing `needle`.
int line_of(const std::string& text, const std::string& needle) {
  return int(std::count(text.begin(), text.begin() + long(text.find(needle)), '\n')) + 1;
}

// A hierarchy of `joints` joints, each the child of the previous one (nested `joints - 1`
// levels deep), with one frame of zeros.
std::string chain_bvh(int joints) {
  std::string text = "HIERARCHY\nROOT J0\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition "
                     "Zrotation Xrotation Yrotation\n";
  for (int j = 1; j < joints; ++j) {
    text += "JOINT J" + std::to_string(j) + "\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n";
  }
  for (int j = 0; j < joints; ++j) text += "}\n";
  text += "MOTION\nFrames: 1\nFrame Time: 0.0333333\n0 0 0 0 0 0";
  for (int j = 1; j < joints; ++j) text += " 0 0 0";
  return text + "\n";
}

// A root with `children` sibling joints (no deep nesting), one frame of zeros.
std::string wide_bvh(int children) {
  std::string text = "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition "
                     "Zrotation Xrotation Yrotation\n";
  for (int j = 0; j < children; ++j) {
    text += "JOINT C" + std::to_string(j) + "\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n}\n";
  }
  text += "}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 0 0 0 0 0";
  for (int j = 0; j < children; ++j) text += " 0 0 0";
  return text + "\n";
}

TEST(BvhLimits, FrameTimeOutsideTheRangeNamesTheLine) {
  for (const char* bad : {"100000", "1e-30", "2", "0.00001", "0", "-0.03"}) {
    const std::string text = walk_with_frame_time(bad);
    const std::string error = parse_error(text);
    EXPECT_NE(error.find("bad.bvh:" + std::to_string(line_of(text, "Frame Time")) + ": frame time '" + bad + "'"),
              std::string::npos) << error;
    EXPECT_NE(error.find("[0.0001, 1]"), std::string::npos) << error;
  }
  EXPECT_EQ(parse_error(walk_with_frame_time("0.0001")), "");
  EXPECT_EQ(parse_error(walk_with_frame_time("1")), "");
}

TEST(BvhLimits, FrameCountAndDurationAreBounded) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  text.replace(text.find("Frames: 3"), 9, "Frames: " + std::to_string(kBvhMaxFrames + 1));
  const std::string error = parse_error(text);
  EXPECT_NE(error.find("frame count"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(kBvhMaxFrames)), std::string::npos) << error;
  // One frame a second: kBvhMaxSeconds + 1 frames span kBvhMaxSeconds exactly, one more is too long.
  const int longest = int(kBvhMaxSeconds) + 1;
  EXPECT_EQ(parse_error(walk_with_frame_time("1", longest)), "");
  const std::string too_long = parse_error(walk_with_frame_time("1", longest + 1));
  EXPECT_NE(too_long.find("3601 s"), std::string::npos) << too_long;
}

TEST(BvhLimits, DeepNestingIsAnErrorNotAStackOverflow) {
  EXPECT_EQ(parse_error(chain_bvh(kBvhMaxDepth + 1)), "");
  const std::string text = chain_bvh(10000);
  const std::string error = parse_error(text);
  const std::string deepest = "JOINT J" + std::to_string(kBvhMaxDepth + 1) + "\n";
  EXPECT_NE(error.find("bad.bvh:" + std::to_string(line_of(text, deepest)) + ":"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than 256"), std::string::npos) << error;
}

TEST(BvhLimits, JointCountIsBounded) {
  EXPECT_EQ(parse_error(wide_bvh(kBvhMaxJoints - 1)), "");
  const std::string error = parse_error(wide_bvh(kBvhMaxJoints));
  EXPECT_NE(error.find("more than 1024 joints"), std::string::npos) << error;
}

TEST(BvhLimits, HugeChannelCountIsQuotedAsWritten) {
  for (const char* count : {"99999999999", "-99999999999", "1e30", "3.5"}) {
    std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
    text.replace(text.find("CHANNELS 3"), 10, std::string("CHANNELS ") + count);
    const std::string error = parse_error(text);
    EXPECT_NE(error.find("bad.bvh:9: joint 'Spine' has " + std::string(count) + " channels; 3 or 6"),
              std::string::npos) << error;
  }
}

TEST(BvhLimits, ValuesBeyondTheMagnitudeLimitNameTheLine) {
  std::string motion = test::straight_walk_bvh(100.0f, 3, 30.0f);
  motion.replace(motion.rfind(" 0"), 2, " -2e6");
  const std::string error = parse_error(motion);
  EXPECT_NE(error.find("bad.bvh:" + std::to_string(line_of(motion, "-2e6")) + ": value '-2e6'"), std::string::npos)
      << error;
  std::string offset = test::straight_walk_bvh(100.0f, 3, 30.0f);
  offset.replace(offset.find("OFFSET 0 10 0"), 13, "OFFSET 0 1e30 0");
  EXPECT_NE(parse_error(offset).find("bad.bvh:8: offset '1e30'"), std::string::npos) << parse_error(offset);
}

TEST(BvhLimits, ControlCharacterInAJointNameIsAnError) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  text.replace(text.find("Spine"), 5, "Sp\x01ine");
  EXPECT_NE(parse_error(text).find("bad.bvh:6: joint name"), std::string::npos) << parse_error(text);
}

TEST(BvhWriting, NamesABvhFileCannotHoldAreRenamedUniquelyAndReadBack) {
  BvhFile file = parse_bvh(test::straight_walk_bvh(100.0f, 3, 30.0f), "walk.bvh");
  // Hips, Spine, UpperLeg_L, Foot_L, UpperLeg_R, Foot_R: names with a space, braces and a tab, one
  // that becomes a name already taken, an empty one and a repeated one; Hips and Foot_L stay.
  const std::vector<std::string> odd = {"Hips", "Ne ck{\t}", "Foot L", "Foot_L", "", "Hips"};
  for (size_t j = 0; j < odd.size(); ++j) file.joints[j].name = odd[j];
  const std::vector<BvhRename> renames = make_joint_names_writable(file);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Ne ck{\t}", "Ne_ck___"}, {"Foot L", "Foot_L_2"}, {"", "_"}, {"Hips", "Hips_2"}};
  ASSERT_EQ(renames.size(), expected.size());
  for (size_t r = 0; r < renames.size(); ++r) {
    EXPECT_EQ(renames[r].from, expected[r].first);
    EXPECT_EQ(renames[r].to, expected[r].second);
  }
  const BvhFile back = parse_bvh(write_bvh(file), "back.bvh");
  std::vector<std::string> names;
  for (const BvhJoint& j : back.joints) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Hips", "Ne_ck___", "Foot_L_2", "Foot_L", "_", "Hips_2"}));
  EXPECT_TRUE(make_joint_names_writable(file).empty());
}

namespace {

// check_bvh_writable's error for `file` ("" when it passes), after checking that it refuses
// exactly what parse_bvh refuses of write_bvh(file).
std::string writing_error(const BvhFile& file) {
  std::string error;
  try {
    check_bvh_writable(file, "clip.glb");
  } catch (const InputError& e) {
    error = e.what();
  }
  EXPECT_EQ(error.empty(), parse_error(write_bvh(file)).empty())
      << "check: " << error << "; reader: " << parse_error(write_bvh(file));
  return error;
}

}  // namespace

TEST(BvhWriting, WhatTheReaderRefusesIsRefusedBeforeWritingNamingTheSourceAndProblem) {
  const BvhFile walk = parse_bvh(test::straight_walk_bvh(100.0f, 3, 30.0f), "walk.bvh");
  EXPECT_EQ(writing_error(walk), "");
  // Frame times as the reader reads them back: 9 significant digits.
  for (const double frame_time :
       {1e-5, 0.99999999e-4, 0.9999999999e-4, 1e-4, 1.0 / 30.0, 1.0, 1.0000000001, 1.00000001, 2.0}) {
    BvhFile file = walk;
    file.frame_time = frame_time;
    const std::string error = writing_error(file);
    if (!error.empty()) {
      EXPECT_NE(error.find("s apart"), std::string::npos) << error;
    }
  }
  BvhFile fast = walk;
  fast.frame_time = 1e-5;
  EXPECT_EQ(writing_error(fast),
            "clip.glb: its frames are 1e-05 s apart (100000 Hz): a BVH frame time is within [0.0001, 1] s");
  // Values and offsets: within kBvhMaxValue, finite.
  const float big = float(kBvhMaxValue);
  for (const float v : {big, std::nextafter(big, 2 * big), -1e32f, std::nanf(""), INFINITY}) {
    BvhFile file = walk;
    file.values[size_t(file.channel_count()) + 2] = v;  // frame 1, the hips' Zposition
    const std::string error = writing_error(file);
    if (v != big) {
      EXPECT_EQ(error.rfind("clip.glb: joint 'Hips': its Zposition at frame 1 is ", 0), 0u) << error;
    }
    file = walk;
    file.joints[3].offset.y = v;
    file.joints[5].end_site.z = -v;
    if (v != big) {
      EXPECT_NE(writing_error(file).find("joint 'Foot_L': its offset is"), std::string::npos) << writing_error(file);
    }
  }
  // Duration: kBvhMaxSeconds + 1 frames a second apart last kBvhMaxSeconds, one more too long.
  BvhFile hour = walk;
  hour.frame_time = 1.0;
  hour.frame_count = int(kBvhMaxSeconds) + 1;
  hour.values.resize(size_t(hour.frame_count) * size_t(hour.channel_count()), 0.0f);
  EXPECT_EQ(writing_error(hour), "");
  ++hour.frame_count;
  hour.values.resize(size_t(hour.frame_count) * size_t(hour.channel_count()), 0.0f);
  EXPECT_NE(writing_error(hour).find("lasts 3601 s"), std::string::npos) << writing_error(hour);
  // Nesting: a chain of kBvhMaxDepth + 1 joints nests kBvhMaxDepth levels; one more is too deep.
  for (const int joints : {kBvhMaxDepth + 1, kBvhMaxDepth + 2}) {
    BvhFile chain = parse_bvh(wide_bvh(joints - 1), "wide.bvh");
    for (size_t j = 1; j < chain.joints.size(); ++j) chain.joints[j].parent = int(j) - 1;
    const std::string error = writing_error(chain);
    EXPECT_EQ(error.empty(), joints == kBvhMaxDepth + 1) << error;
    if (!error.empty()) {
      EXPECT_NE(error.find("joint 'C256' is nested 257 levels below the root"), std::string::npos) << error;
    }
  }
}

TEST(BvhErrors, UnknownChannelAndMissingFile) {
  std::string text = test::straight_walk_bvh(100.0f, 3, 30.0f);
  text.replace(text.find("Xrotation"), 9, "Wrotation");
  EXPECT_NE(parse_error(text).find("unknown channel 'Wrotation'"), std::string::npos);
  EXPECT_THROW(read_bvh("/nonexistent/file.bvh"), InputError);
}

}  // namespace
