// Offline clip processing: BVH to local transforms, joint collapsing, resampling, mirroring,
// the simulation (root) bone, velocities and foot contacts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lmm/import/bvh.hpp"
#include "lmm/core/math.hpp"
#include "lmm/asset/skeleton.hpp"

namespace lmm::pipeline {

// Local joint transforms of one clip, frames x joints, in metres.
struct Clip {
  std::string name;
  float fps = 30.0f;
  int frames = 0;
  int joints = 0;
  std::vector<Vec3> positions;
  std::vector<Quat> rotations;

  // Local position of joint `j` at frame `f`.
  Vec3& position(int f, int j) { return positions[size_t(f) * joints + j]; }
  // Local position of joint `j` at frame `f`.
  const Vec3& position(int f, int j) const { return positions[size_t(f) * joints + j]; }
  // Local rotation of joint `j` at frame `f`.
  Quat& rotation(int f, int j) { return rotations[size_t(f) * joints + j]; }
  // Local rotation of joint `j` at frame `f`.
  const Quat& rotation(int f, int j) const { return rotations[size_t(f) * joints + j]; }
};

// Name of the simulation bone the importer inserts as joint 0.
constexpr const char* kSimulationBoneName = "Simulation";

// Skeleton (offsets scaled by `unit_scale`) and local transforms of a parsed BVH file.
void clip_from_bvh(const BvhFile& bvh, float unit_scale, const std::string& name,
                   Skeleton& skeleton, Clip& clip);

// A BVH file with six channels per joint (positions, then `rotation_order` rotations) that
// reproduces `clip` on `skeleton` when read back with the same `unit_scale`.
BvhFile bvh_from_clip(const Skeleton& skeleton, const Clip& clip, const std::string& rotation_order,
                      float unit_scale);

// Removes the named joints, giving their transform to their children (composed exactly).
// Throws InputError naming an unknown joint or a root with several children.
void collapse_joints(const std::vector<std::string>& names, Skeleton& skeleton, Clip& clip);

// The world's up axis in a BVH file; lmmkit is Y-up and right-handed.
enum class UpAxis { Y, Z };

// Parses "y" or "z" (either case) into `axis`; false for anything else.
bool parse_up_axis(const std::string& text, UpAxis& axis);
// "y" or "z".
const char* up_axis_name(UpAxis axis);

// Turns a clip whose world is `axis`-up into lmmkit's Y-up convention (a no-op for Y): for Z-up
// a rotation R of -90 degrees about X, (x, y, z) -> (x, z, -y), applied to every rest offset and
// local position and, as R q R^-1, to every local rotation, so that every global position p
// becomes R p and the rest pose stands along +Y.
void convert_up_axis(UpAxis axis, Skeleton& skeleton, Clip& clip);

// Removes a root joint named kSimulationBoneName with one child (the simulation bone of the
// BVH files lmm-sim writes; the importer inserts its own). Throws InputError when another joint
// has that reserved name.
void collapse_simulation_root(Skeleton& skeleton, Clip& clip);

// Resamples to `fps` (positions lerped, rotations slerped), keeping the clip's duration.
Clip resample(const Clip& clip, float fps);

// A joint moving faster than this between two frames jumps (m/s): the fastest limbs of human
// motion (a kick, a punch, a throw's hand) stay below it; a T-pose or reference pose before the
// take moves joints at 40 to 60 m/s into the first frame of motion.
constexpr float kMaxJointJumpSpeed = 20.0f;
// Leading frames searched for such a jump (a T-pose or reference pose before the take).
constexpr int kMaxLeadingPoseFrames = 10;

// The first jump of a clip: leading frames to drop and the joint that moves fastest into the
// first frame kept.
struct LeadingJump {
  int frames = 0;      // 0: no jump among the leading frames
  int joint = -1;
  float speed = 0.0f;  // m/s of `joint` between frames frames - 1 and frames
};

// The first k < kMaxLeadingPoseFrames whose global joint positions move faster than
// `max_speed` (m/s) into frame k + 1, as frames = k + 1; frames = 0 when there is none.
LeadingJump find_leading_jump(const Skeleton& skeleton, const Clip& clip, float max_speed);
// Keeps `frames` frames of `clip` from frame `first` (a range within the clip) and drops the others.
void keep_frames(Clip& clip, int first, int frames);

// Fewest frames a clip needs: velocities and contact speeds are differences between frames.
constexpr int kMinClipFrames = 2;

// For each joint, the joint it swaps with when mirrored (itself when unpaired). A pair is two
// names that differ by one substitution of a (left, right) pattern.
std::vector<int> mirror_pairs(const Skeleton& skeleton,
                              const std::vector<std::pair<std::string, std::string>>& patterns);

// How to mirror a skeleton's local transforms. Mirroring the world across x = 0 and swapping
// pairs gives correct global poses, but BVH joint frames are often not symmetric (Bandai's
// right-side bones point along -X, and rotation channels carry constant joint orients): each
// joint gets a constant rotation K_j that maps the mirrored frame back onto its own frame
// convention, so that mirrored and original clips share local rotations for the same pose.
struct MirrorMap {
  std::vector<int> pairs;
  std::vector<Quat> corrections;  // K_j per joint
};

// Pairs from `patterns`; K of the root from the rest offsets of its children, K of every other
// joint from `reference` local rotations of a roughly symmetric pose (e.g. the mean pose of
// the data), so that the mirrored reference pose nears the reference pose, then turned so that
// K_j maps each child's offset onto its partner's mirrored offset: mirrored frames keep the
// skeleton's offsets as local positions.
MirrorMap mirror_map(const Skeleton& skeleton,
                     const std::vector<std::pair<std::string, std::string>>& patterns,
                     const std::vector<Quat>& reference);

// Per-joint mean of the local rotations of `clips` (sign-aligned quaternion average).
std::vector<Quat> mean_local_rotations(const std::vector<const Clip*>& clips);

// Mirrors a clip across the YZ plane (x -> -x) and swaps paired joints; mirroring twice with
// the same map gives the original clip back.
Clip mirror(const Clip& clip, const Skeleton& skeleton, const MirrorMap& map);

// How the simulation bone is derived from the body.
struct SimulationBoneSettings {
  int hips = 0;                 // joint projected onto the ground
  std::vector<int> left, right; // joints whose left - right vector gives the lateral axis
  float position_sigma = 0.0f;  // Gaussian smoothing, seconds
  float direction_sigma = 0.0f; // Gaussian smoothing, seconds
};


// Inserts joint 0 "Simulation": hips projected on the ground with a smoothed facing direction
// (+Z forward, from the lateral axis), and re-expresses the old root relative to it.
void add_simulation_bone(const SimulationBoneSettings& settings, Skeleton& skeleton, Clip& clip);

// Local linear and angular velocities by central differences (one-sided at the clip ends),
// frames x joints, in the parent's frame.
void compute_velocities(const Clip& clip, std::vector<Vec3>& velocities,
                        std::vector<Vec3>& angular_velocities);

// How foot contacts are labelled.
struct ContactSettings {
  std::vector<int> joints;
  float velocity_threshold = 0.15f;  // m/s, horizontal + vertical speed
  float height_threshold = 0.1f;     // m above the ground, or above rest_heights when given
  std::vector<float> rest_heights;   // per joint: its resting height, added to height_threshold
  float filter_seconds = 0.05f;      // median filter half-width
};

// Global speed (m/s) and height above the ground (m) of each of `joints` in every frame of
// `clip` (frames x joints.size() each), from its local velocities.
struct JointMotion {
  std::vector<float> speeds, heights;
};
JointMotion joint_motion(const Skeleton& skeleton, const Clip& clip, const std::vector<Vec3>& velocities,
                         const std::vector<Vec3>& angular_velocities, const std::vector<int>& joints);

// Contact labels (frames x joints.size(), 0 / 1) from global speed and height, median filtered.
std::vector<uint8_t> compute_contacts(const ContactSettings& settings, const Skeleton& skeleton,
                                      const Clip& clip, const std::vector<Vec3>& velocities,
                                      const std::vector<Vec3>& angular_velocities);

// Local poses of consecutive frames (frames x joints values each), e.g. a clip's or a database's.
struct PoseFrames {
  const Vec3* positions = nullptr;
  const Quat* rotations = nullptr;
  int frames = 0;
};

// The frames of `clip`.
inline PoseFrames pose_frames(const Clip& clip) { return {clip.positions.data(), clip.rotations.data(), clip.frames}; }

// Height of `joint` above the ground (y = 0) in every frame.
std::vector<float> joint_heights(const Skeleton& skeleton, const PoseFrames& poses, int joint);

// The value below which `fraction` (0..1) of `values` lie (nearest rank); 0 when empty.
float percentile(std::vector<float> values, float fraction);

// How tall a skeleton is, in metres. `rest` is the length of the bone chain from `foot` to
// `top` along the rest offsets (the skeleton stood straight, whatever its rest pose: Bandai
// rigs rest with the limbs along X); `standing` the median height of `top` above the ground
// (y = 0) over the frames.
struct SkeletonHeight {
  std::string top, foot;  // joints measured
  float rest = 0.0f;
  float standing = 0.0f;
  Vec3 rise;  // mean global position of the "hips" role (else `top`) minus `foot`'s, over the frames
};

// A hint when `height` looks as if the files' up axis were not `configured`: the hips rise
// above the foot mostly along +Z (configured Y: the files look Z-up) or along -Z (configured Z:
// the files look Y-up); "" otherwise. The hint names the axis and the values it judged by.
std::string up_axis_hint(const SkeletonHeight& height, UpAxis configured);

// Height of `skeleton` posed by `poses`. The top joint is the "head" role, else the joint
// highest on average; the foot is the "left_foot" / "right_foot" role farthest from the top
// along the bones, else the toe roles, else the lowest joint without children.
SkeletonHeight measure_height(const Skeleton& skeleton, const std::vector<std::pair<std::string, int>>& roles,
                              const PoseFrames& poses);

// Widest Gaussian filter, in samples: the longest smoothing a config accepts (10 s) at the
// highest BVH rate (10 kHz), a kernel of 600,001 taps.
constexpr float kMaxFilterSigma = 1e5f;

// One-dimensional Gaussian filter with edge clamping; `sigma` in samples (<= 0: no-op).
// Throws InputError when sigma is above kMaxFilterSigma or not finite.
std::vector<float> gaussian_filter(const std::vector<float>& values, float sigma);

}  // namespace lmm::pipeline
