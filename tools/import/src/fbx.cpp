#include "lmm/import/fbx.hpp"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"

#include "child_process.hpp"
#include "node_scene.hpp"

namespace lmm::pipeline {
namespace {

// Seconds the child process reading one FBX file may take.
constexpr unsigned kFbxReadSeconds = 120;
// Assimp's default when a file states no rate (aiAnimation::mTicksPerSecond of 0).
constexpr double kDefaultTicksPerSecond = 25.0;

// A metadata value of the scene as a double (assimp stores FBX settings as int32, float or double).
bool metadata_number(const aiScene& scene, const char* key, double& out) {
  if (scene.mMetaData == nullptr) return false;
  int32_t i = 0;
  float f = 0.0f;
  double d = 0.0;
  if (scene.mMetaData->Get(key, i)) return out = i, true;
  if (scene.mMetaData->Get(key, f)) return out = f, true;
  if (scene.mMetaData->Get(key, d)) return out = d, true;
  return false;
}

// The FBX nodes by name (the first of a name) and which of them are Nulls (an armature or group
// object rather than a bone: assimp's "IsNull" node metadata).
struct NodeIndex {
  std::map<std::string, int> index_of;
  std::vector<char> is_null;
};

// Adds `node` and its subtree to `scene` and `index` depth first.
void add_nodes(const aiNode& node, int parent, NodeScene& scene, NodeIndex& index) {
  const aiMatrix4x4& t = node.mTransformation;  // row-major
  const float column_major[16] = {t.a1, t.b1, t.c1, t.d1, t.a2, t.b2, t.c2, t.d2,
                                  t.a3, t.b3, t.c3, t.d3, t.a4, t.b4, t.c4, t.d4};
  SceneNode n = node_from_matrix(column_major);
  n.name = node.mName.C_Str();
  n.parent = parent;
  const int node_index = int(scene.nodes.size());
  scene.nodes.push_back(n);
  index.index_of.emplace(n.name, node_index);
  bool is_null = false;
  index.is_null.push_back(node.mMetaData != nullptr && node.mMetaData->Get("IsNull", is_null) && is_null ? 1 : 0);
  if (scene.nodes.size() > size_t(16 * kSceneMaxJoints)) throw InputError(scene.source + ": more than " + std::to_string(16 * kSceneMaxJoints) + " nodes");
  for (unsigned c = 0; c < node.mNumChildren; ++c) add_nodes(*node.mChildren[c], node_index, scene, index);
}

// The node named `name`; throws when there is none.
int named_node(const NodeScene& scene, const NodeIndex& index, const std::string& name, const char* what) {
  const auto it = index.index_of.find(name);
  if (it == index.index_of.end()) throw InputError(scene.source + ": " + what + " '" + printable(name) + "' names no node");
  return it->second;
}

// The meshes' bones, or without any the animated nodes that are not Nulls (Blender animates its
// armature object; the skeleton's root is then the common parent of the bones).
std::vector<int> seed_joints(const aiScene& s, const NodeScene& scene, const NodeIndex& index) {
  std::vector<int> seeds;
  for (unsigned m = 0; m < s.mNumMeshes; ++m) {
    for (unsigned b = 0; b < s.mMeshes[m]->mNumBones; ++b) seeds.push_back(named_node(scene, index, s.mMeshes[m]->mBones[b]->mName.C_Str(), "bone"));
  }
  for (unsigned a = 0; seeds.empty() && a < s.mNumAnimations; ++a) {
    for (unsigned c = 0; c < s.mAnimations[a]->mNumChannels; ++c) {
      const int node = named_node(scene, index, s.mAnimations[a]->mChannels[c]->mNodeName.C_Str(), "animated node");
      if (index.is_null[size_t(node)] == 0) seeds.push_back(node);
    }
  }
  return seeds;
}

// Keys (time in ticks, `width` values each) as a track, in seconds from the animation's start
// `start_ticks`; a key at the same time as the one before replaces it.
template <typename Key, typename Values>
KeyTrack key_track(int node, KeyPath path, const Key* keys, unsigned count, double start_ticks, double ticks_per_second, Values values) {
  KeyTrack t;
  t.node = node;
  t.path = path;
  for (unsigned k = 0; k < count; ++k) {
    const float time = float((keys[k].mTime - start_ticks) / ticks_per_second);
    const std::vector<float> v = values(keys[k].mValue);
    if (!t.times.empty() && time == t.times.back()) t.values.resize(t.values.size() - v.size());
    else t.times.push_back(time);
    t.values.insert(t.values.end(), v.begin(), v.end());
  }
  return t;
}

// The earliest key time of `a`'s channels (ticks).
double first_key(const aiAnimation& a) {
  double first = 0.0;
  bool any = false;
  for (unsigned c = 0; c < a.mNumChannels; ++c) {
    const aiNodeAnim& ch = *a.mChannels[c];
    for (const double t : {ch.mNumPositionKeys ? ch.mPositionKeys[0].mTime : 0.0, ch.mNumRotationKeys ? ch.mRotationKeys[0].mTime : 0.0,
                           ch.mNumScalingKeys ? ch.mScalingKeys[0].mTime : 0.0}) {
      first = any ? std::min(first, t) : t;
      any = true;
    }
  }
  return first;
}

SceneAnimation scene_animation(const aiAnimation& a, const NodeScene& scene, const NodeIndex& index) {
  SceneAnimation out;
  out.name = a.mName.C_Str();
  const std::string::size_type bar = out.name.find('|');  // "Armature|Take 001": the stack's name
  if (bar != std::string::npos) out.name = out.name.substr(bar + 1);
  const double tps = a.mTicksPerSecond > 0.0 ? a.mTicksPerSecond : kDefaultTicksPerSecond;
  const double start = first_key(a);
  const auto vec3 = [](const aiVector3D& v) { return std::vector<float>{v.x, v.y, v.z}; };
  const auto quat = [](const aiQuaternion& q) { return std::vector<float>{q.x, q.y, q.z, q.w}; };
  for (unsigned c = 0; c < a.mNumChannels; ++c) {
    const aiNodeAnim& ch = *a.mChannels[c];
    const int node = named_node(scene, index, ch.mNodeName.C_Str(), "animated node");
    if (ch.mNumPositionKeys > 0) out.tracks.push_back(key_track(node, KeyPath::Translation, ch.mPositionKeys, ch.mNumPositionKeys, start, tps, vec3));
    if (ch.mNumRotationKeys > 0) out.tracks.push_back(key_track(node, KeyPath::Rotation, ch.mRotationKeys, ch.mNumRotationKeys, start, tps, quat));
    if (ch.mNumScalingKeys > 0) out.tracks.push_back(key_track(node, KeyPath::Scale, ch.mScalingKeys, ch.mNumScalingKeys, start, tps, vec3));
  }
  return out;
}

// Unit vector along axis `axis` (0, 1, 2) with sign `sign`.
Vec3 axis_vector(int axis, double sign) {
  Vec3 v;
  (axis == 0 ? v.x : axis == 1 ? v.y : v.z) = sign < 0.0 ? -1.0f : 1.0f;
  return v;
}

// The file's unit and axis system as the world transform above the skeleton (to metres, Y-up,
// right-handed with the front along +Z) and its description.
void world_transform(const aiScene& s, NodeScene& scene) {
  double unit = 1.0, up = 1, up_sign = 1, front = 2, front_sign = 1, coord = 0, coord_sign = 1;
  metadata_number(s, "UnitScaleFactor", unit);  // centimetres per file unit
  metadata_number(s, "UpAxis", up);
  metadata_number(s, "UpAxisSign", up_sign);
  metadata_number(s, "FrontAxis", front);
  metadata_number(s, "FrontAxisSign", front_sign);
  metadata_number(s, "CoordAxis", coord);
  metadata_number(s, "CoordAxisSign", coord_sign);
  const double lowest_unit = 100.0 * kSceneMinScale, highest_unit = 1e6;  // cm per unit
  if (!(unit >= lowest_unit && unit <= highest_unit)) {
    throw InputError(scene.source + ": UnitScaleFactor " + format_number(unit) + " is outside " +
                     range_text(lowest_unit, highest_unit) + " cm per unit");
  }
  const auto valid = [](double a) { return a == 0 || a == 1 || a == 2; };
  if (!valid(up) || !valid(front) || !valid(coord) || up == front || up == coord || front == coord) {
    throw InputError(scene.source + ": unreadable axis settings (UpAxis " + format_number(up) + ", FrontAxis " +
                     format_number(front) + ", CoordAxis " + format_number(coord) + ")");
  }
  // Rows of the file-to-lmmkit rotation: lmmkit's X, Y and Z are the file's coord, up and front axes.
  const Vec3 x = axis_vector(int(coord), coord_sign), y = axis_vector(int(up), up_sign), z = axis_vector(int(front), front_sign);
  if (dot(cross(x, y), z) < 0.0f) {
    throw InputError(scene.source + ": a left-handed axis system (CoordAxis " + format_number(coord) + ", UpAxis " + format_number(up) +
                     ", FrontAxis " + format_number(front) + " with their signs): lmmkit reads right-handed files");
  }
  const float rows_as_columns[16] = {x.x, y.x, z.x, 0, x.y, y.y, z.y, 0, x.z, y.z, z.z, 0, 0, 0, 0, 1};
  scene.world_rotation = node_from_matrix(rows_as_columns).rotation;
  scene.world_scale = float(unit / 100.0);
  const char* names[] = {"X", "Y", "Z"};
  scene.units = "FBX: " + format_number(unit) + " cm per unit (UnitScaleFactor), " + (up_sign < 0 ? "-" : "+") + names[int(up)] + " up";
}

// The nodes, unit and axes, skeleton seeds and animations assimp reads from `bytes`.
NodeScene assimp_scene(const std::string& bytes, const std::string& source) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_TEXTURES, false);
  const aiScene* s = importer.ReadFileFromMemory(bytes.data(), bytes.size(), aiProcess_ValidateDataStructure, "fbx");
  if (s == nullptr || s->mRootNode == nullptr) {
    throw InputError(source + ": not a readable FBX file: " + printable(importer.GetErrorString()));
  }
  NodeScene scene;
  scene.source = source;
  NodeIndex index;
  add_nodes(*s->mRootNode, -1, scene, index);
  world_transform(*s, scene);
  scene.seeds = seed_joints(*s, scene, index);
  for (unsigned a = 0; a < s->mNumAnimations; ++a) scene.animations.push_back(scene_animation(*s->mAnimations[a], scene, index));
  return scene;
}

// A request for the reader's child: the source's length and name, then the file's bytes.
std::string encode_request(const std::string& bytes, const std::string& source) {
  const uint64_t size = source.size();
  return std::string(reinterpret_cast<const char*>(&size), sizeof size) + source + bytes;
}

// The child's work: the encoded scene assimp reads from an encode_request request.
std::string read_in_child(const std::string& request) {
  uint64_t size = 0;
  std::memcpy(&size, request.data(), sizeof size);
  const std::string source = request.substr(sizeof size, size_t(size));
  return encode_scene(assimp_scene(request.substr(sizeof size + size_t(size)), source));
}

}  // namespace

AnimationFile parse_fbx(const std::string& bytes, const std::string& source) {
  // assimp 5.2.5 double-frees, leaks and runs out of memory on some malformed files (fuzz_fbx):
  // it reads in a child process of this thread's, which hands back the scene it found.
  thread_local ChildWorker reader(read_in_child);
  const std::string scene = reader.run(encode_request(bytes, source), source + ": the FBX reader (assimp)", kFbxReadSeconds);
  return sample_scene(decode_scene(scene));
}

AnimationFile read_fbx(const std::string& path) { return parse_fbx(read_text_file(path, kSceneMaxFileBytes, "FBX file"), path); }

bool is_fbx_path(const std::string& path) { return has_extension(path, {".fbx"}); }

}  // namespace lmm::pipeline
