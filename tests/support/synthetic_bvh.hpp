// Synthetic BVH files and configs for pipeline tests.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

#include "support/temp_files.hpp"

namespace lmm::test {

// Hierarchy of a small biped in centimetres: Hips (6 channels) with a spine and two legs
// (3 channels each, rotation order `order`, e.g. "Zrotation Xrotation Yrotation").
inline std::string biped_hierarchy(const std::string& order = "Zrotation Xrotation Yrotation") {
  return "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition Zposition " +
         order + "\n  JOINT Spine\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 " + order +
         "\n    End Site\n    {\n      OFFSET 0 50 0\n    }\n  }\n"
         "  JOINT UpperLeg_L\n  {\n    OFFSET 10 -5 0\n    CHANNELS 3 " + order +
         "\n    JOINT Foot_L\n    {\n      OFFSET 0 -80 0\n      CHANNELS 3 " + order +
         "\n      End Site\n      {\n        OFFSET 0 0 10\n      }\n    }\n  }\n"
         "  JOINT UpperLeg_R\n  {\n    OFFSET -10 -5 0\n    CHANNELS 3 " + order +
         "\n    JOINT Foot_R\n    {\n      OFFSET 0 -80 0\n      CHANNELS 3 " + order +
         "\n      End Site\n      {\n        OFFSET 0 0 10\n      }\n    }\n  }\n}\n";
}

// A straight walk along +Z at `speed` cm/s with the hips at 90 cm and every rotation zero,
// `frames` frames at `fps`.
inline std::string straight_walk_bvh(float speed, int frames, float fps) {
  std::string text = biped_hierarchy() + "MOTION\nFrames: " + std::to_string(frames) +
                     "\nFrame Time: " + std::to_string(1.0 / fps) + "\n";
  for (int f = 0; f < frames; ++f) {
    text += "0 90 " + std::to_string(speed * f / fps) + " 0 0 0";
    for (int j = 0; j < 5; ++j) text += " 0 0 0";
    text += "\n";
  }
  return text;
}

// `hierarchy` with every OFFSET (x, y, z) written as (x, -z, y): the same rig in a Z-up world
// (a rotation of +90 degrees about X).
inline std::string z_up_offsets(const std::string& hierarchy) {
  std::istringstream in(hierarchy);
  std::string line, out;
  while (std::getline(in, line)) {
    const size_t at = line.find("OFFSET ");
    if (at != std::string::npos) {
      std::istringstream values(line.substr(at + 7));
      float x = 0, y = 0, z = 0;
      values >> x >> y >> z;
      line = line.substr(0, at) + "OFFSET " + std::to_string(x) + " " + std::to_string(-z) + " " + std::to_string(y);
    }
    out += line + "\n";
  }
  return out;
}

// A walk along a circle of `radius` cm at `speed` cm/s, the hips turned to face along the
// path, so trajectory features vary. With `z_up` the same motion in a Z-up world: offsets and
// the root's position turned by +90 degrees about X, its heading about Y becoming one about Z
// (the legs and spine turn about X, which that rotation leaves as it is).
inline std::string circle_walk_bvh(float speed, float radius, int frames, float fps, bool z_up = false) {
  std::string text = (z_up ? z_up_offsets(biped_hierarchy()) : biped_hierarchy()) + "MOTION\nFrames: " +
                     std::to_string(frames) + "\nFrame Time: " + std::to_string(1.0 / fps) + "\n";
  for (int f = 0; f < frames; ++f) {
    const float angle = speed * f / fps / radius;
    const std::string x = std::to_string(radius - radius * std::cos(angle)), z = std::to_string(radius * std::sin(angle));
    const std::string heading_deg = std::to_string(angle * 57.2957795f);
    text += z_up ? x + " " + std::to_string(-radius * std::sin(angle)) + " 90 " + heading_deg + " 0 0"
                 : x + " 90 " + z + " 0 0 " + heading_deg;
    for (int j = 0; j < 5; ++j) text += " 0 " + std::to_string(5.0f * std::sin(0.2f * f + j)) + " 0";
    text += "\n";
  }
  return text;
}

// Skeleton config for biped_hierarchy (centimetres, mirrored by _L/_R).
inline std::string biped_skeleton_toml() {
  return "name = \"biped\"\nunit_scale = 0.01\n"
         "[roles]\nhips = \"Hips\"\nleft_foot = \"Foot_L\"\nright_foot = \"Foot_R\"\n"
         "[mirror]\npatterns = [[\"_L\", \"_R\"]]\n"
         "[simulation]\nfacing_left = [\"UpperLeg_L\"]\nfacing_right = [\"UpperLeg_R\"]\n"
         "position_smoothing = 0.05\ndirection_smoothing = 0.1\n"
         "[contacts]\njoints = [\"left_foot\", \"right_foot\"]\n"
         "velocity_threshold = 0.3\nheight_threshold = 0.08\nfilter = 0.05\n";
}

// Feature schema over the biped: foot positions / velocities, hip velocity and trajectory.
inline std::string biped_features_toml() {
  return "name = \"biped\"\n"
         "[[group]]\nname = \"trajectory_position\"\nkind = \"trajectory_position\"\n"
         "seconds = [0.333333, 0.666667, 1.0]\n"
         "[[group]]\nname = \"trajectory_direction\"\nkind = \"trajectory_direction\"\n"
         "seconds = [0.333333, 0.666667, 1.0]\nweight = 1.5\n"
         "[[group]]\nname = \"feet_position\"\nkind = \"bone_position\"\n"
         "bones = [\"left_foot\", \"right_foot\"]\nweight = 0.75\n"
         "[[group]]\nname = \"feet_velocity\"\nkind = \"bone_velocity\"\n"
         "bones = [\"left_foot\", \"right_foot\"]\n"
         "[[group]]\nname = \"hip_velocity\"\nkind = \"bone_velocity\"\nbones = [\"hips\"]\n";
}

}  // namespace lmm::test
