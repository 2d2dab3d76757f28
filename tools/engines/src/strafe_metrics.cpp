#include "lmm/engines/strafe_metrics.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "lmm/common/report.hpp"

namespace lmm::pipeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kCone = 0.70710678f;        // cos 45 degrees, as SpeedProfile's cones
constexpr float kHalfDeflection = 0.25f;    // squared stick length of a half-deflected stick

double median_or_nan(const std::vector<double>& values) { return values.empty() ? kNaN : median(values); }

}  // namespace

Travel travel_of(Vec3 local_velocity) {
  const Vec3 v = on_ground(local_velocity);
  const float speed = length(v);
  if (!(speed >= kMovingSpeed)) return Travel::Still;
  const float along = v.z / speed;
  return along >= kCone ? Travel::Forward : along <= -kCone ? Travel::Back : Travel::Side;
}

std::vector<Travel> clip_travel(const Database& db) {
  std::vector<Travel> travel;
  travel.reserve(db.ranges().size());
  for (const DatabaseRange& range : db.ranges()) {
    int counts[4] = {0, 0, 0, 0};
    for (int f = range.start; f < range.stop; ++f) {
      ++counts[int(travel_of(inverse_rotate(db.rotations(f)[0], db.velocities(f)[0])))];
    }
    Travel most = Travel::Forward;
    for (Travel t : {Travel::Side, Travel::Back}) {
      if (counts[int(t)] > counts[int(most)]) most = t;
    }
    travel.push_back(counts[int(most)] > 0 ? most : Travel::Still);
  }
  return travel;
}

Request classify_request(const GamepadInput& input, Quat desired_facing, Vec3 desired_velocity) {
  const bool held = input.left_x * input.left_x + input.left_y * input.left_y >= kHalfDeflection;
  const Travel travel = travel_of(inverse_rotate(desired_facing, desired_velocity));
  if (!held || travel == Travel::Still) return Request::Idle;
  return input.strafe && travel != Travel::Forward ? Request::Strafe : Request::Forward;
}

double facing_error_deg(Quat facing, Quat desired_facing) {
  const Vec3 a = on_ground(rotate(facing, Vec3{0.0f, 0.0f, 1.0f}));
  const Vec3 b = on_ground(rotate(desired_facing, Vec3{0.0f, 0.0f, 1.0f}));
  const double cross = double(a.z) * b.x - double(a.x) * b.z, dot = double(a.x) * b.x + double(a.z) * b.z;
  return std::fabs(std::atan2(cross, dot)) * 180.0 / 3.14159265358979323846;
}

double velocity_error_m_s(Vec3 velocity, Vec3 desired_velocity) {
  return length(on_ground(velocity - desired_velocity));
}

StrafeMetrics::StrafeMetrics(std::vector<Travel> clip_travel)
    : clip_travel_(std::move(clip_travel)), strafe_per_clip_(clip_travel_.size(), 0) {}

void StrafeMetrics::add(Request request, Quat facing, Vec3 velocity, Quat desired_facing, Vec3 desired_velocity,
                        int clip) {
  if (request == Request::Idle) return;
  Samples& s = request == Request::Strafe ? strafe_ : forward_;
  s.facing.push_back(facing_error_deg(facing, desired_facing));
  s.velocity.push_back(velocity_error_m_s(velocity, desired_velocity));
  s.speed += length(on_ground(velocity));
  s.desired_speed += length(on_ground(desired_velocity));
  if (request == Request::Strafe && clip >= 0 && size_t(clip) < strafe_per_clip_.size()) ++strafe_per_clip_[size_t(clip)];
}

double StrafeMetrics::strafe_clip_share() const {
  int known = 0, side_or_back = 0;
  for (size_t c = 0; c < strafe_per_clip_.size(); ++c) {
    known += strafe_per_clip_[c];
    side_or_back += clip_travel_[c] == Travel::Side || clip_travel_[c] == Travel::Back ? strafe_per_clip_[c] : 0;
  }
  return known ? double(side_or_back) / known : kNaN;
}

RequestErrors StrafeMetrics::summary(const Samples& s) {
  return RequestErrors{int(s.facing.size()), median_or_nan(s.facing), median_or_nan(s.velocity),
                       s.facing.empty() ? kNaN : s.speed / s.desired_speed};
}

}  // namespace lmm::pipeline
