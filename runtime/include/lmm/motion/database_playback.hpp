// Playback of a motion database at any dt: the interpolated pose of a fractional frame within
// its clip, inertialized jumps to other frames, and the root velocities to integrate. Used by
// every database-driven character (gamepad motion matching, path following).
#pragma once

#include <memory>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/motion/inertializer.hpp"
#include "lmm/motion/pose_buffers.hpp"

namespace lmm {

// The frame times the last advance() played, in its clip: (from, to], or [from, to] when playback
// started there (init or a jump) so that `from` itself was played too.
struct PlayedSpan {
  double from = 0.0, to = 0.0;
  bool from_included = true;

  // Whether frame `frame` (of the clip played) was played in the span.
  bool contains(int frame) const { return (frame > from || (from_included && frame == from)) && frame <= to; }
};

// An event marker (FrameAnnotations::events) whose frame an update played.
struct CharacterEvent {
  int name = 0;       // index into the database's FrameAnnotations::event_names()
  int frame = 0;      // database frame of the marker
  float time = 0.0f;  // seconds into the update at which its frame was played
};

// Plays one clip at a time from a fractional frame; see the file comment.
class DatabasePlayback {
 public:
  // Allocates, holds `db` (not null, shared) and starts at `frame` (no transition).
  void init(std::shared_ptr<const Database> db, int frame);
  // Jumps to `frame`, starting an inertialized transition from the output `out` (rotations
  // `animated` before any IK).
  void jump(int frame, const PoseBuffers& out, const std::vector<Quat>& animated);
  // Advances dt seconds (stopping at the clip's last frame), samples the pose and writes joints
  // 1.. of `out` through the inertializer.
  void advance(float dt, float halflife, PoseBuffers& out);
  // Root velocity and angular velocity to integrate, in character space (with the transition's
  // decaying offsets).
  Vec3 local_root_velocity() const;
  Vec3 local_root_angular() const;

  // The frame times the last advance() played (none after init or a jump).
  const PlayedSpan& played() const { return played_; }
  // The events of the frames the last advance() played, in frame order (time measured from the
  // span's start): writes up to `capacity` to `out` and returns how many there were. No allocation.
  int events(CharacterEvent* out, int capacity) const;
  // Whether the frames an advance by dt plays from here (the current one and the ceil(dt * fps)
  // + 1 after it, within the clip) include one whose tags `constraint` rejects. No allocation.
  bool leaves(const TagConstraint& constraint, float dt) const;
  // Database frame being played (the whole part of the fractional frame).
  int frame() const { return frame_; }
  // Clip (range index) being played.
  int range() const { return range_; }
  // One past the last frame of the clip being played.
  int clip_stop() const { return db_->ranges()[size_t(range_)].stop; }
  // The sampled database pose (local; joint 0 in database world). The velocities of joints 1..
  // are those of the last jump (or init): advance() samples only the root's.
  const PoseBuffers& sample() const { return sample_; }

 private:
  // The two frames a fractional frame time of the playing clip lies between, and its weight.
  struct SamplePoint {
    int frame, next;
    float weight;
  };
  SamplePoint sample_point(double frame_time) const;
  // Samples positions and rotations of every joint and the root's velocities; sets frame_.
  void sample(double frame_time);
  // Samples the velocities of joints 1.. (for a transition).
  void sample_joint_velocities(double frame_time);
  // Starts playing at `frame` (its clip's range, nothing played yet) and samples its pose and
  // joint velocities.
  void start_at(int frame);

  std::shared_ptr<const Database> db_;
  double frame_time_ = 0.0;  // fractional database frame
  PlayedSpan played_;
  bool started_ = true;  // init or jump since the last advance
  int frame_ = 0;
  int range_ = 0;
  PoseBuffers sample_;
  Inertializer inertializer_;
};

}  // namespace lmm
