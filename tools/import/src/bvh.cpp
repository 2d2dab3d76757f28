#include "lmm/import/bvh.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "lmm/common/report.hpp"

namespace lmm::pipeline {
namespace {

constexpr double kDegToRad = 3.14159265358979323846 / 180.0;

const char* const kChannelNames[] = {"Xposition", "Yposition", "Zposition",
                                     "Xrotation", "Yrotation", "Zrotation"};

bool is_rotation(BvhChannel c) { return c >= BvhChannel::Xrotation; }

// Unit axis of a channel (X, Y or Z).
Vec3 channel_axis(BvhChannel c) {
  const int a = static_cast<int>(c) % 3;
  return Vec3{a == 0 ? 1.0f : 0.0f, a == 1 ? 1.0f : 0.0f, a == 2 ? 1.0f : 0.0f};
}

// Whitespace tokenizer over the HIERARCHY section that tracks line numbers.
class Tokenizer {
 public:
  Tokenizer(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  // Next token; throws at end of input.
  std::string next() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end of file (truncated?)");
    const size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Next token, which must equal `expected`.
  void expect(const std::string& expected) {
    const std::string t = next();
    if (t != expected) fail("expected '" + expected + "', found '" + t + "'");
  }
  // `token` parsed as a finite number; throws quoting it otherwise.
  double to_number(const std::string& token) const {
    double v = 0.0;
    const auto r = std::from_chars(token.data(), token.data() + token.size(), v);
    if (r.ec != std::errc() || r.ptr != token.data() + token.size()) fail("'" + token + "' is not a number");
    if (!std::isfinite(v)) fail("value '" + token + "' is not finite");
    return v;
  }
  // Next token as a number in [lo, hi]; the error names it `what` and quotes it as written.
  double number_in(double lo, double hi, const std::string& what) {
    const std::string t = next();
    const double v = to_number(t);
    if (!(v >= lo && v <= hi)) fail(what + " '" + t + "' is outside " + range_text(lo, hi));
    return v;
  }
  // Rest of the current line, trimmed (used for "Frame Time:" style lines).
  std::string rest_of_line() {
    const size_t end = text_.find('\n', pos_);
    std::string s = text_.substr(pos_, end == std::string::npos ? std::string::npos : end - pos_);
    pos_ = end == std::string::npos ? text_.size() : end;
    return s;
  }
  // Throws InputError "source:line: message".
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(source_ + ":" + std::to_string(line_) + ": " + message);
  }
  // Byte offset of the cursor.
  size_t position() const { return pos_; }
  // Current line number (1-based).
  int line() const { return line_; }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }

  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
};

BvhChannel parse_channel(Tokenizer& tok) {
  const std::string name = tok.next();
  for (int i = 0; i < 6; ++i) {
    if (name == kChannelNames[i]) return static_cast<BvhChannel>(i);
  }
  tok.fail("unknown channel '" + name + "'");
}

void parse_channels(Tokenizer& tok, BvhJoint& joint) {
  tok.expect("CHANNELS");
  const std::string written = tok.next();
  const double count = tok.to_number(written);
  if (count != 3.0 && count != 6.0) {
    tok.fail("joint '" + joint.name + "' has " + written + " channels; 3 or 6 are supported");
  }
  for (int i = 0; i < int(count); ++i) {
    const BvhChannel c = parse_channel(tok);
    for (BvhChannel seen : joint.channels) {
      if (seen == c) tok.fail("joint '" + joint.name + "' lists a channel twice");
    }
    joint.channels.push_back(c);
  }
}

Vec3 parse_offset(Tokenizer& tok) {
  tok.expect("OFFSET");
  Vec3 v;
  for (float* c : {&v.x, &v.y, &v.z}) *c = float(tok.number_in(-kBvhMaxValue, kBvhMaxValue, "offset"));
  return v;
}

// Next token as a joint name; control characters would corrupt the database's name lists.
std::string joint_name(Tokenizer& tok) {
  const std::string name = tok.next();
  for (char c : name) {
    if (std::iscntrl(static_cast<unsigned char>(c))) {
      tok.fail("joint name '" + printable(name) + "' contains a control character");
    }
  }
  return name;
}

// Parses "NAME { OFFSET ... CHANNELS ... children }" after ROOT/JOINT, `depth` levels below ROOT.
void parse_joint(Tokenizer& tok, BvhFile& file, int parent, int depth) {
  if (file.joints.size() >= size_t(kBvhMaxJoints)) {
    tok.fail("more than " + std::to_string(kBvhMaxJoints) + " joints");
  }
  BvhJoint joint;
  joint.name = joint_name(tok);
  joint.parent = parent;
  tok.expect("{");
  joint.offset = parse_offset(tok);
  parse_channels(tok, joint);
  const int index = static_cast<int>(file.joints.size());
  file.joints.push_back(joint);
  for (;;) {
    const std::string t = tok.next();
    if (t == "}") return;
    if (t == "JOINT") {
      if (depth >= kBvhMaxDepth) {
        tok.fail("joints nested deeper than " + std::to_string(kBvhMaxDepth) + " levels below ROOT");
      }
      parse_joint(tok, file, index, depth + 1);
    } else if (t == "End") {
      tok.expect("Site");
      tok.expect("{");
      file.joints[index].has_end_site = true;
      file.joints[index].end_site = parse_offset(tok);
      tok.expect("}");
    } else {
      tok.fail("unexpected '" + t + "' in joint '" + file.joints[index].name + "'");
    }
  }
}

// Parses the value rows of the MOTION section starting at `pos`, one frame per line.
void parse_frames(const std::string& text, size_t pos, int first_line, const std::string& source,
                  BvhFile& file) {
  const int channels = file.channel_count();
  // Every value takes at least two bytes ("0 "): a header claiming more frames than the rest of
  // the file can hold is rejected before anything is allocated.
  const size_t remaining = pos < text.size() ? text.size() - pos : 0;
  if (size_t(file.frame_count) > remaining / (2 * size_t(std::max(channels, 1))) + 1) {
    throw InputError(source + ": header declares " + std::to_string(file.frame_count) +
                     " frames but the file is too short to hold them");
  }
  file.values.resize(size_t(file.frame_count) * channels);
  int line = first_line;
  int frame = 0;
  while (frame < file.frame_count) {
    if (pos >= text.size()) {
      throw InputError(source + ": header declares " + std::to_string(file.frame_count) +
                       " frames but the data ends after " + std::to_string(frame));
    }
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const char* p = text.data() + pos;
    const char* e = text.data() + end;
    int count = 0;
    float* row = file.values.data() + size_t(frame) * channels;
    while (true) {
      while (p < e && std::isspace(static_cast<unsigned char>(*p))) ++p;
      if (p == e) break;
      const char* start = p;
      while (p < e && !std::isspace(static_cast<unsigned char>(*p))) ++p;
      float v = 0.0f;
      const auto r = std::from_chars(start, p, v);
      const std::string token(start, p);
      if (r.ec != std::errc() || r.ptr != p) {
        throw InputError(source + ":" + std::to_string(line) + ": '" + token + "' is not a number");
      }
      if (!std::isfinite(v)) {
        throw InputError(source + ":" + std::to_string(line) + ": value '" + token + "' is not finite");
      }
      if (!(std::fabs(v) <= kBvhMaxValue)) {
        throw InputError(source + ":" + std::to_string(line) + ": value '" + token + "' is outside " +
                         range_text(-kBvhMaxValue, kBvhMaxValue));
      }
      if (count < channels) row[count] = v;
      ++count;
    }
    if (count != 0) {
      if (count != channels) {
        throw InputError(source + ":" + std::to_string(line) + ": expected " +
                         std::to_string(channels) + " values, found " + std::to_string(count));
      }
      ++frame;
    }
    pos = end + 1;
    ++line;
  }
}

// `v` as write_bvh prints a number: 9 significant digits, a float's value exactly.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// The frame time parse_bvh reads where write_bvh wrote `frame_time`.
double written_frame_time(double frame_time) {
  const std::string text = number_text(frame_time);
  double v = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// True for a character a BVH joint name cannot hold: whitespace or a control character ends or
// corrupts the name's token, and braces are the format's own.
bool breaks_name(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return std::isspace(u) || std::iscntrl(u) || c == '{' || c == '}';
}

// Throws "source: joint 'NAME': its WHAT is V: ..." for a value a BVH file cannot hold.
[[noreturn]] void value_error(const std::string& source, const BvhJoint& joint, const std::string& what, double v) {
  throw InputError(source + ": joint '" + printable(joint.name) + "': its " + what + " is " + format_number(v) +
                   ": a BVH file holds values within " + range_text(-kBvhMaxValue, kBvhMaxValue) +
                   " (the skeleton config's units, degrees)");
}

// True when parse_bvh reads `v` back: |v| <= kBvhMaxValue (not NaN).
bool writable_value(double v) { return std::fabs(v) <= kBvhMaxValue; }

// Throws value_error for a coordinate of `offset` (`what`: "offset", "End Site offset") of `joint`
// that a BVH file cannot hold.
void check_written_offset(const BvhJoint& joint, Vec3 offset, const char* what, const std::string& source) {
  for (const float c : {offset.x, offset.y, offset.z}) {
    if (!writable_value(c)) value_error(source, joint, what, c);
  }
}

// Throws naming `source` when a joint of `file` lies deeper than kBvhMaxDepth below the root.
void check_written_depth(const BvhFile& file, const std::string& source) {
  std::vector<int> depth(file.joints.size(), 0);
  for (size_t j = 0; j < file.joints.size(); ++j) {
    const int parent = file.joints[j].parent;
    depth[j] = parent < 0 ? 0 : depth[size_t(parent)] + 1;
    if (depth[j] > kBvhMaxDepth) {
      throw InputError(source + ": joint '" + printable(file.joints[j].name) + "' is nested " +
                       std::to_string(depth[j]) + " levels below the root: a BVH file nests at most " +
                       std::to_string(kBvhMaxDepth));
    }
  }
}

}  // namespace

int BvhFile::channel_count() const {
  int n = 0;
  for (const BvhJoint& j : joints) n += static_cast<int>(j.channels.size());
  return n;
}

BvhFile parse_bvh(const std::string& text, const std::string& source) {
  BvhFile file;
  Tokenizer tok(text, source);
  tok.expect("HIERARCHY");
  tok.expect("ROOT");
  parse_joint(tok, file, -1, 0);
  tok.expect("MOTION");
  tok.expect("Frames:");
  const std::string frames_written = tok.next();
  const double frames = tok.to_number(frames_written);
  if (!(frames >= 1.0 && frames <= kBvhMaxFrames && frames == std::floor(frames))) {
    tok.fail("frame count must be a positive integer of at most " + std::to_string(kBvhMaxFrames) +
             ", found '" + frames_written + "'");
  }
  file.frame_count = static_cast<int>(frames);
  tok.expect("Frame");
  tok.expect("Time:");
  file.frame_time = tok.number_in(kBvhMinFrameTime, kBvhMaxFrameTime, "frame time");
  const double seconds = (frames - 1.0) * file.frame_time;
  if (seconds > kBvhMaxSeconds) {
    tok.fail("the clip lasts " + format_number(seconds) + " s ((frames - 1) x frame time), more than " +
             format_number(kBvhMaxSeconds) + " s");
  }
  tok.rest_of_line();
  parse_frames(text, tok.position() + 1, tok.line() + 1, source, file);
  return file;
}

BvhFile read_bvh(const std::string& path) { return parse_bvh(read_text_file(path, kBvhMaxFileBytes, "BVH file"), path); }

std::string write_bvh(const BvhFile& file) {
  std::string out = "HIERARCHY\n";
  char buf[64];
  auto vec = [&](Vec3 v) {
    std::snprintf(buf, sizeof buf, "%.9g %.9g %.9g", v.x, v.y, v.z);
    return std::string(buf);
  };
  std::vector<int> depth(file.joints.size(), 0);
  auto close_until = [&](int level, int& open) {
    while (open > level) {
      --open;
      out += std::string(size_t(open), '\t') + "}\n";
    }
  };
  int open = 0;
  for (size_t i = 0; i < file.joints.size(); ++i) {
    const BvhJoint& j = file.joints[i];
    depth[i] = j.parent < 0 ? 0 : depth[size_t(j.parent)] + 1;
    close_until(depth[i], open);
    const std::string ind(size_t(depth[i]), '\t');
    out += ind + (j.parent < 0 ? "ROOT " : "JOINT ") + j.name + "\n" + ind + "{\n";
    out += ind + "\tOFFSET " + vec(j.offset) + "\n" + ind + "\tCHANNELS " +
           std::to_string(j.channels.size());
    for (BvhChannel c : j.channels) out += std::string(" ") + kChannelNames[int(c)];
    out += "\n";
    if (j.has_end_site) {
      out += ind + "\tEnd Site\n" + ind + "\t{\n" + ind + "\t\tOFFSET " + vec(j.end_site) +
             "\n" + ind + "\t}\n";
    }
    open = depth[i] + 1;
  }
  close_until(0, open);
  out += "MOTION\nFrames: " + std::to_string(file.frame_count) + "\nFrame Time: " + number_text(file.frame_time) + "\n";
  const int channels = file.channel_count();
  for (int f = 0; f < file.frame_count; ++f) {
    for (int c = 0; c < channels; ++c) {
      std::snprintf(buf, sizeof buf, c == 0 ? "%.9g" : " %.9g", file.values[size_t(f) * channels + c]);
      out += buf;
    }
    out += "\n";
  }
  return out;
}

std::vector<BvhRename> make_joint_names_writable(BvhFile& file) {
  std::set<std::string> taken;
  std::vector<size_t> renamed;
  for (size_t j = 0; j < file.joints.size(); ++j) {
    const std::string& name = file.joints[j].name;
    const bool writable = !name.empty() && std::none_of(name.begin(), name.end(), breaks_name);
    if (!writable || !taken.insert(name).second) renamed.push_back(j);
  }
  std::vector<BvhRename> renames;
  for (size_t j : renamed) {
    std::string base = file.joints[j].name.empty() ? "_" : file.joints[j].name;
    std::replace_if(base.begin(), base.end(), breaks_name, '_');
    std::string name = base;
    for (int n = 2; !taken.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    renames.push_back(BvhRename{file.joints[j].name, name});
    file.joints[j].name = name;
  }
  return renames;
}

void check_bvh_writable(const BvhFile& file, const std::string& source) {
  const double frame_time = written_frame_time(file.frame_time);
  if (!(frame_time >= kBvhMinFrameTime && frame_time <= kBvhMaxFrameTime)) {
    throw InputError(source + ": its frames are " + format_number(file.frame_time) + " s apart (" +
                     format_number(1.0 / file.frame_time) + " Hz): a BVH frame time is within " +
                     range_text(kBvhMinFrameTime, kBvhMaxFrameTime) + " s");
  }
  if (!(file.frame_count >= 1 && file.frame_count <= kBvhMaxFrames)) {
    throw InputError(source + ": " + std::to_string(file.frame_count) + " frames: a BVH file holds 1 to " +
                     std::to_string(kBvhMaxFrames));
  }
  const double seconds = (double(file.frame_count) - 1.0) * frame_time;
  if (seconds > kBvhMaxSeconds) {
    throw InputError(source + ": it lasts " + format_number(seconds) +
                     " s ((frames - 1) x frame time): a BVH file lasts at most " + format_number(kBvhMaxSeconds) +
                     " s");
  }
  check_written_depth(file, source);
  for (const BvhJoint& joint : file.joints) {
    check_written_offset(joint, joint.offset, "offset", source);
    if (joint.has_end_site) check_written_offset(joint, joint.end_site, "End Site offset", source);
  }
  const float* value = file.values.data();
  for (int f = 0; f < file.frame_count; ++f) {
    for (const BvhJoint& joint : file.joints) {
      for (const BvhChannel channel : joint.channels) {
        if (!writable_value(*value))
          value_error(source, joint, std::string(kChannelNames[int(channel)]) + " at frame " + std::to_string(f),
                      *value);
        ++value;
      }
    }
  }
}

Quat bvh_rotation(const std::vector<BvhChannel>& channels, const float* values) {
  Quat q;
  for (size_t i = 0; i < channels.size(); ++i) {
    if (!is_rotation(channels[i])) continue;
    q = q * quat_from_angle_axis(float(values[i] * kDegToRad), channel_axis(channels[i]));
  }
  return normalize(q);
}

void bvh_euler(const std::vector<BvhChannel>& rotation_channels, Quat q, float* degrees) {
  // Rotation matrix of q, then the Tait-Bryan decomposition R = R_i(a) R_j(b) R_k(c).
  const float w = q.w, x = q.x, y = q.y, z = q.z;
  const float m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                         {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                         {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  const int i = int(rotation_channels[0]) % 3, j = int(rotation_channels[1]) % 3,
            k = int(rotation_channels[2]) % 3;
  const float s = ((j - i + 3) % 3 == 1) ? 1.0f : -1.0f;  // +1 for cyclic orders (XYZ, YZX, ZXY)
  const float sb = std::fmax(-1.0f, std::fmin(1.0f, s * m[i][k]));
  const double to_deg = 1.0 / kDegToRad;
  degrees[0] = float(std::atan2(-s * m[j][k], m[k][k]) * to_deg);
  degrees[1] = float(std::asin(sb) * to_deg);
  degrees[2] = float(std::atan2(-s * m[i][j], m[i][i]) * to_deg);
}

std::vector<BvhChannel> rotation_order(const std::string& order) {
  std::vector<BvhChannel> channels;
  for (char c : order) {
    const int axis = c == 'X' ? 0 : c == 'Y' ? 1 : c == 'Z' ? 2 : -1;
    if (axis < 0) break;
    channels.push_back(static_cast<BvhChannel>(3 + axis));
  }
  const bool distinct = channels.size() == 3 && channels[0] != channels[1] &&
                        channels[1] != channels[2] && channels[0] != channels[2];
  if (order.size() != 3 || !distinct) {
    throw InputError("rotation order '" + order + "' must be a permutation of XYZ");
  }
  return channels;
}

}  // namespace lmm::pipeline
