// BVH (Biovision hierarchy) reading and writing: any hierarchy, any rotation channel order,
// 3 or 6 channels per joint, End Sites and frame time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/common/errors.hpp"
#include "lmm/core/math.hpp"

namespace lmm::pipeline {

// Limits of parse_bvh (docs/hardening.md, "BVH files"); a file outside them is an InputError
// naming the file and line.
constexpr double kBvhMinFrameTime = 1e-4;  // seconds (10 kHz)
constexpr double kBvhMaxFrameTime = 1.0;   // seconds (1 Hz)
constexpr int kBvhMaxFrames = 1000000;
constexpr double kBvhMaxSeconds = 3600.0;  // clip duration, (frames - 1) x frame time
constexpr int kBvhMaxJoints = 1024;
constexpr int kBvhMaxDepth = 256;          // nesting levels below ROOT
constexpr double kBvhMaxValue = 1e6;       // |offset| and |channel value| (file units, degrees)
constexpr uint64_t kBvhMaxFileBytes = uint64_t(4) << 30;  // 4 GiB: read_bvh reads regular files only

// One animation channel of a BVH joint.
enum class BvhChannel { Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation };

// A BVH joint as written in the file (offsets in file units).
struct BvhJoint {
  std::string name;
  int parent = -1;
  Vec3 offset;
  std::vector<BvhChannel> channels;
  bool has_end_site = false;
  Vec3 end_site;
};

// A parsed BVH file: hierarchy plus `frame_count` rows of channel values.
struct BvhFile {
  std::vector<BvhJoint> joints;
  double frame_time = 1.0 / 30.0;
  int frame_count = 0;
  std::vector<float> values;  // frame_count x channel_count(), row-major

  // Total number of channels over all joints.
  int channel_count() const;
};

// Parses BVH text; `source` names the file in errors. Throws InputError on malformed input
// (truncation, bad channel counts, non-numeric or non-finite values, zero or missing frames)
// and on values outside the kBvh* limits above.
BvhFile parse_bvh(const std::string& text, const std::string& source);
// Reads and parses a BVH file. Throws InputError.
BvhFile read_bvh(const std::string& path);
// Serialises a BvhFile as BVH text (parse_bvh(write_bvh(f)) reproduces f up to print precision).
std::string write_bvh(const BvhFile& file);

// A joint renamed by make_joint_names_writable.
struct BvhRename {
  std::string from, to;
};
// Renames the joints whose names a BVH file cannot hold (empty, or with whitespace, a brace or a
// control character: each such character becomes '_') or that repeat an earlier name, with
// "_2", "_3"... where the result is taken; names that can stay are kept. Returns the renames.
std::vector<BvhRename> make_joint_names_writable(BvhFile& file);
// Throws InputError naming `source` when parse_bvh would refuse write_bvh(file) for its frame
// time, frame count, duration, nesting depth or a value (offsets and channels beyond
// kBvhMaxValue, or not finite); names are make_joint_names_writable's.
void check_bvh_writable(const BvhFile& file, const std::string& source);

// Rotation of one joint from its rotation channel values, in the channels' listed order.
Quat bvh_rotation(const std::vector<BvhChannel>& channels, const float* values);
// Euler angles (degrees) of `q` for the listed rotation channels (exactly three), so that
// bvh_rotation(channels, angles) == q.
void bvh_euler(const std::vector<BvhChannel>& rotation_channels, Quat q, float* degrees);

// Parses a rotation order such as "ZXY" into three rotation channels; throws InputError.
std::vector<BvhChannel> rotation_order(const std::string& order);

}  // namespace lmm::pipeline
