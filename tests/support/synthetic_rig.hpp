// A second skeleton for end-to-end tests (bring your own mocap): a 13-joint biped with its own
// joint names, in millimetres, at 120 fps, with toe joints placed 20 mm above the ground and a
// gait whose feet plant and swing (two-joint leg IK towards footholds), on straight lines and
// arcs at walk and run speeds. Writes BVH files and the skeleton config that imports them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace lmm::test::rig {

constexpr double kPi = 3.14159265358979;
constexpr double kFps = 120.0;
constexpr double kPelvisHeight = 850.0;               // mm
constexpr double kHipWidth = 100.0, kHipDrop = 50.0;  // hip joints relative to the pelvis, mm
constexpr double kThigh = 430.0, kCalf = 410.0;       // mm
constexpr double kAnkleHeight = 80.0;                 // planted ankle above the ground, mm
constexpr double kToeDrop = 60.0, kToeForward = 120.0;  // toe joint from the ankle, mm (toe 20 mm up)

// One clip: the root moves at `speed` m/s along a straight line (radius 0) or an arc of
// `radius` m turning left, for `seconds`; stance is the fraction of a step cycle a foot is planted.
struct ClipSpec {
  std::string name;
  double speed = 1.3, radius = 0.0, seconds = 6.0;
  double cadence = 2.0;  // steps per second
  double stance = 0.6;
};

// The clips the end-to-end test imports: walks and runs, straight and turning, and a stand.
inline std::vector<ClipSpec> default_clips() {
  return {{"walk_straight", 1.3, 0.0, 8.0, 2.0, 0.6}, {"walk_arc", 1.2, 3.0, 8.0, 2.0, 0.6},
          {"walk_slow", 0.8, 0.0, 6.0, 1.5, 0.65},    {"run_straight", 3.0, 0.0, 6.0, 2.8, 0.38},
          {"run_arc", 2.8, 5.0, 6.0, 2.8, 0.38},      {"stand", 0.0, 0.0, 3.0, 2.0, 1.0}};
}

struct Point {
  double x = 0, z = 0;
};

// Root ground position (mm) and heading (radians about +Y, 0 = +Z) of `spec` at time t.
inline void root_at(const ClipSpec& spec, double t, Point& p, double& heading) {
  const double s = spec.speed * 1000.0 * t;
  if (spec.radius <= 0.0) {
    p = Point{0.0, s};
    heading = 0.0;
    return;
  }
  const double r = spec.radius * 1000.0, a = s / r;  // turning left: towards +x
  p = Point{r - r * std::cos(a), r * std::sin(a)};
  heading = a;
}

// Ground point of a foot at `side` (+1 left, -1 right) of the root at time t.
inline Point foothold(const ClipSpec& spec, double t, double side) {
  Point p;
  double h = 0.0;
  root_at(spec, t, p, h);
  // With heading h the character's left (+x at h = 0) is (cos h, -sin h).
  return Point{p.x + side * kHipWidth * std::cos(h), p.z - side * kHipWidth * std::sin(h)};
}

// World ankle position (x, height, z) of the foot at `side` at time t: planted at the middle of
// each stance, swinging with a sine lift between stances.
inline void ankle_at(const ClipSpec& spec, double t, double side, double out[3]) {
  const double cycle = 2.0 / spec.cadence;
  const double offset = side > 0 ? 0.0 : 0.5;
  const double phase = t / cycle + offset;
  const double n = std::floor(phase), u = phase - n;  // u in [0, 1): stance first, then swing
  auto stance_middle = [&](double k) { return (k + spec.stance * 0.5 - offset) * cycle; };
  Point p;
  double lift = 0.0;
  if (u < spec.stance || spec.speed == 0.0) {
    p = foothold(spec, stance_middle(n), side);
  } else {
    const double w = (u - spec.stance) / (1.0 - spec.stance);
    const Point a = foothold(spec, stance_middle(n), side), b = foothold(spec, stance_middle(n + 1), side);
    const double smooth = w * w * (3.0 - 2.0 * w);
    p = Point{a.x + (b.x - a.x) * smooth, a.z + (b.z - a.z) * smooth};
    lift = 90.0 * std::sin(kPi * w);
  }
  out[0] = p.x, out[1] = kAnkleHeight + lift, out[2] = p.z;
}

// Hip pitch and knee bend (degrees, about +X) that put the ankle at `forward` mm ahead of and
// `down` mm below the hip joint.
inline void leg_ik(double forward, double down, double& hip_deg, double& knee_deg) {
  const double d = std::min(std::sqrt(forward * forward + down * down), kThigh + kCalf - 1.0);
  const double c = std::clamp((d * d - kThigh * kThigh - kCalf * kCalf) / (2.0 * kThigh * kCalf), -1.0, 1.0);
  const double knee = std::acos(c);                           // bends the calf backwards
  const double aim = std::atan2(-forward, down);              // pitch of a straight leg to the ankle
  const double hip = aim - std::atan2(kCalf * std::sin(knee), kThigh + kCalf * std::cos(knee));
  hip_deg = hip * 180.0 / kPi, knee_deg = knee * 180.0 / kPi;
}

inline std::string hierarchy() {
  auto leg = [](const char* s, double x) {
    char text[1024];
    std::snprintf(text, sizeof text,
                  "  JOINT thigh_%s\n  {\n    OFFSET %.1f %.1f 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
                  "    JOINT calf_%s\n    {\n      OFFSET 0 %.1f 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
                  "      JOINT foot_%s\n      {\n        OFFSET 0 %.1f 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n"
                  "        JOINT ball_%s\n        {\n          OFFSET 0 %.1f %.1f\n          CHANNELS 3 Zrotation Xrotation Yrotation\n"
                  "          End Site\n          {\n            OFFSET 0 0 40\n          }\n        }\n      }\n    }\n  }\n",
                  s, x, -kHipDrop, s, -kThigh, s, -kCalf, s, -kToeDrop, kToeForward);
    return std::string(text);
  };
  return "HIERARCHY\nROOT pelvis\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
         "  JOINT spine_01\n  {\n    OFFSET 0 120 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
         "    JOINT neck_01\n    {\n      OFFSET 0 400 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
         "      JOINT head\n      {\n        OFFSET 0 120 0\n        CHANNELS 3 Zrotation Xrotation Yrotation\n"
         "        End Site\n        {\n          OFFSET 0 100 0\n        }\n      }\n    }\n  }\n" +
         leg("l", kHipWidth) + leg("r", -kHipWidth) + "}\n";
}

// How a clip's file differs from the plain rig (the foreign rigs of tests/cli/cli_test.sh).
struct Variant {
  bool z_up = false;    // a Z-up world: offsets and the root turned +90 degrees about X
  bool t_pose = false;  // a T-pose frame before the take (every rotation zero, the root 0.5 m back)
};

// `text` with every OFFSET (x, y, z) written as (x, -z, y): the rig in a Z-up world.
inline std::string z_up_offsets(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    const size_t at = line.find("OFFSET ");
    double x = 0, y = 0, z = 0;
    if (at != std::string::npos && std::sscanf(line.c_str() + at, "OFFSET %lf %lf %lf", &x, &y, &z) == 3) {
      char offset[128];
      std::snprintf(offset, sizeof offset, "OFFSET %.1f %.1f %.1f", x, -z, y);
      line = line.substr(0, at) + offset;
    }
    out += line + "\n";
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

// The root's channels: position (mm) and the heading about the up axis (ZXY order), in the
// variant's world.
inline std::string root_channels(Point p, double height, double heading, const Variant& variant) {
  char text[256];
  const double degrees = heading * 180.0 / kPi;
  if (variant.z_up) {  // +90 degrees about X: (x, y, z) -> (x, -z, y); a turn about Y becomes one about Z
    std::snprintf(text, sizeof text, "%.3f %.3f %.3f %.4f 0 0", p.x, -p.z, height, degrees);
  } else {
    std::snprintf(text, sizeof text, "%.3f %.3f %.3f 0 0 %.4f", p.x, height, p.z, degrees);
  }
  return text;
}

// One frame's channels (pelvis, spine_01, neck_01, head, then per leg thigh, calf, foot, ball).
// The legs turn about X only, which the Z-up variant's rotation about X leaves as they are.
inline std::string frame_line(const ClipSpec& spec, double t, const Variant& variant = {}) {
  Point p;
  double heading = 0.0;
  root_at(spec, t, p, heading);
  char text[512];
  std::string line = root_channels(p, kPelvisHeight, heading, variant) + " 0 0 0 0 0 0 0 0 0";
  for (double side : {1.0, -1.0}) {
    double ankle[3];
    ankle_at(spec, t, side, ankle);
    const double hip_x = p.x + side * kHipWidth * std::cos(heading), hip_z = p.z - side * kHipWidth * std::sin(heading);
    const double dx = ankle[0] - hip_x, dz = ankle[2] - hip_z;
    const double forward = dx * std::sin(heading) + dz * std::cos(heading);
    const double down = kPelvisHeight - kHipDrop - ankle[1];
    double hip = 0.0, knee = 0.0;
    leg_ik(forward, down, hip, knee);
    // Pitch about +X: a positive angle swings the leg backwards; the foot stays level.
    std::snprintf(text, sizeof text, " 0 %.4f 0 0 %.4f 0 0 %.4f 0 0 0 0", hip, knee, -(hip + knee));
    line += text;
  }
  return line + "\n";
}

// The BVH text of one clip.
inline std::string clip_bvh(const ClipSpec& spec, const Variant& variant = {}) {
  const int frames = int(spec.seconds * kFps);
  std::string text = (variant.z_up ? z_up_offsets(hierarchy()) : hierarchy()) + "MOTION\nFrames: " +
                     std::to_string(frames + (variant.t_pose ? 1 : 0)) + "\nFrame Time: 0.00833333\n";
  if (variant.t_pose) {  // every joint rotation zero: 3 spine joints and 2 x 4 leg joints
    text += root_channels(Point{0.0, -500.0}, kPelvisHeight, 0.0, variant);
    for (int c = 0; c < 3 * (3 + 2 * 4); ++c) text += " 0";
    text += "\n";
  }
  for (int f = 0; f < frames; ++f) text += frame_line(spec, f / kFps, variant);
  return text;
}

// The skeleton config that imports these files.
inline std::string skeleton_toml() {
  return "name = \"synthetic-rig\"\nunit_scale = 0.001\n"
         "[roles]\nhips = \"pelvis\"\nspine = \"spine_01\"\nhead = \"head\"\n"
         "left_hip = \"thigh_l\"\nright_hip = \"thigh_r\"\nleft_foot = \"foot_l\"\nright_foot = \"foot_r\"\n"
         "left_toe = \"ball_l\"\nright_toe = \"ball_r\"\n"
         "[mirror]\npatterns = [[\"_l\", \"_r\"]]\n"
         "[simulation]\nfacing_left = [\"left_hip\"]\nfacing_right = [\"right_hip\"]\n"
         "position_smoothing = 0.0833\ndirection_smoothing = 0.1667\n"
         "[contacts]\njoints = [\"left_toe\", \"right_toe\"]\nvelocity_threshold = 0.3\n"
         "height_above_rest = 0.05\nfilter = 0.05\n";
}

}  // namespace lmm::test::rig
