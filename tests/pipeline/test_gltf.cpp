// glTF 2.0: .glb writing and reading back, import of .glb files next to BVH files, sampling of
// foreign key layouts, --convert bvh of what BVH files can and cannot hold, and the errors (of
// glTF and FBX files: their node tree's checks) that name the file and node, accessor or key.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>

#include "lmm/asset/database.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/fbx.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/import/import.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/clip_world_positions.hpp"
#include "support/temp_files.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

// The skeleton and clip of a synthetic circle walk BVH (metres: unit scale 1).
AnimationFile circle_walk(int frames = 90) {
  AnimationFile file;
  Clip clip;
  clip_from_bvh(parse_bvh(test::circle_walk_bvh(1.4f, 3.0f, frames, 30.0f), "walk.bvh"), 1.0f, "walk", file.skeleton, clip);
  file.clips.push_back(clip);
  return file;
}

// `glb` re-serialised after `edit` changed its model.
std::string edited(const std::string& glb, const std::function<void(tinygltf::Model&)>& edit) {
  tinygltf::TinyGLTF io;
  tinygltf::Model model;
  std::string error, warning;
  EXPECT_TRUE(io.LoadBinaryFromMemory(&model, &error, &warning, reinterpret_cast<const unsigned char*>(glb.data()),
                                      unsigned(glb.size())))
      << error;
  edit(model);
  std::ostringstream out;
  io.WriteGltfSceneToStream(&model, out, false, true);
  return out.str();
}

std::string gltf_error(const std::string& bytes) {
  try {
    parse_gltf(bytes, "rig.glb", ".");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// `values` appended to buffer 0 of `m` as a new accessor of `type`; returns its index.
int add_accessor(tinygltf::Model& m, const std::vector<float>& values, int type) {
  if (m.buffers.empty()) m.buffers.emplace_back();
  std::vector<unsigned char>& data = m.buffers[0].data;
  tinygltf::BufferView view;
  view.buffer = 0;
  view.byteOffset = data.size();
  view.byteLength = values.size() * 4;
  data.resize(data.size() + view.byteLength);
  std::memcpy(&data[view.byteOffset], values.data(), view.byteLength);
  m.bufferViews.push_back(view);
  tinygltf::Accessor a;
  a.bufferView = int(m.bufferViews.size()) - 1;
  a.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
  a.type = type;
  a.count = values.size() / (type == TINYGLTF_TYPE_SCALAR ? 1 : type == TINYGLTF_TYPE_VEC3 ? 3 : 4);
  m.accessors.push_back(a);
  return int(m.accessors.size()) - 1;
}

}  // namespace

TEST(Gltf, GlbRoundTripKeepsSkeletonAndEveryFramesWorldPositions) {
  const AnimationFile walk = circle_walk();
  const AnimationFile back = parse_gltf(write_glb(walk.skeleton, walk.clips), "walk.glb", ".");
  EXPECT_EQ(back.skeleton.names, walk.skeleton.names);
  EXPECT_EQ(back.skeleton.parents, walk.skeleton.parents);
  ASSERT_EQ(back.clips.size(), 1u);
  const Clip &a = walk.clips[0], &b = back.clips[0];
  EXPECT_EQ(b.name, "walk");
  EXPECT_EQ(b.fps, 30.0f);
  ASSERT_EQ(b.frames, a.frames);
  EXPECT_LT(test::largest_world_distance(walk.skeleton, a, back.skeleton, b), 1e-5f);
  EXPECT_NE(back.units.find("metres and Y-up"), std::string::npos) << back.units;
}

TEST(Gltf, NamesThatAreNotUtf8AreWrittenWithTheirStrayBytesMarked) {
  // fuzz_fbx: a joint name in Latin-1 made tinygltf's JSON writer abort the process.
  AnimationFile walk = circle_walk(4);
  walk.skeleton.names[1] = "Sp\xe9ine";     // Latin-1 e-acute
  walk.skeleton.names[2] = "Leg_\xc3\xa9";  // UTF-8 e-acute, kept
  walk.clips[0].name = "walk\xff";
  const AnimationFile back = parse_gltf(write_glb(walk.skeleton, walk.clips), "walk.glb", ".");
  EXPECT_EQ(back.skeleton.names[1], "Sp?ine");
  EXPECT_EQ(back.skeleton.names[2], "Leg_\xc3\xa9");
  EXPECT_EQ(back.clips.at(0).name, "walk?");
}

TEST(Gltf, SeveralAnimationsBecomeSeveralClips) {
  AnimationFile walk = circle_walk();
  Clip second = walk.clips[0];
  second.name = "second";
  for (Vec3& p : second.positions) p.y += 0.5f;
  walk.clips.push_back(second);
  const AnimationFile back = parse_gltf(write_glb(walk.skeleton, walk.clips), "walk.glb", ".");
  ASSERT_EQ(back.clips.size(), 2u);
  EXPECT_EQ(back.clips[1].name, "second");
  EXPECT_NEAR(back.clips[1].position(0, 0).y - back.clips[0].position(0, 0).y, 0.5f, 1e-5f);
}

TEST(Gltf, TransformAboveTheSkeletonIsApplied) {
  const AnimationFile walk = circle_walk();
  // An "Armature" parent at 1 cm per unit, turned 90 degrees about Y, 2 m along X, with the
  // skeleton's translations in centimetres (as Blender writes a centimetre rig).
  const std::string glb = edited(write_glb(walk.skeleton, walk.clips), [](tinygltf::Model& m) {
    tinygltf::Node armature;
    armature.name = "Armature";
    armature.children = {0};
    armature.scale = {0.01, 0.01, 0.01};
    armature.rotation = {0.0, std::sqrt(0.5), 0.0, std::sqrt(0.5)};
    armature.translation = {2.0, 0.0, 0.0};
    m.nodes.push_back(armature);
    m.scenes[0].nodes = {int(m.nodes.size()) - 1};
    for (tinygltf::Node& n : m.nodes) {
      for (double& t : n.translation) t *= n.name == "Armature" ? 1.0 : 100.0;
    }
    for (tinygltf::Animation& a : m.animations) {
      for (const tinygltf::AnimationChannel& c : a.channels) {
        if (c.target_path != "translation") continue;
        const tinygltf::BufferView& v = m.bufferViews[size_t(m.accessors[size_t(a.samplers[size_t(c.sampler)].output)].bufferView)];
        float* values = reinterpret_cast<float*>(&m.buffers[0].data[v.byteOffset]);
        for (size_t i = 0; i < v.byteLength / 4; ++i) values[i] *= 100.0f;
      }
    }
  });
  const AnimationFile back = parse_gltf(glb, "walk.glb", ".");
  const Quat turn = quat_from_angle_axis(1.5707964f, Vec3{0.0f, 1.0f, 0.0f});
  const std::vector<Vec3> expected = test::clip_world_positions(walk.skeleton, walk.clips[0], 10);
  const std::vector<Vec3> got = test::clip_world_positions(back.skeleton, back.clips[0], 10);
  for (size_t j = 0; j < got.size(); ++j) {
    const Vec3 want = Vec3{2.0f, 0.0f, 0.0f} + rotate(turn, expected[j]);
    EXPECT_LT(length(got[j] - want), 1e-4f) << back.skeleton.names[j];
  }
  EXPECT_NE(back.units.find("scaled by 0.01 to metres"), std::string::npos) << back.units;
}

TEST(Gltf, StepCubicAndUnevenKeysAreSampledAsTheSpecSays) {
  const AnimationFile walk = circle_walk(4);
  const std::string glb = edited(write_glb(walk.skeleton, {}), [](tinygltf::Model& m) {
    const int times = add_accessor(m, {0.0f, 0.25f, 1.0f}, TINYGLTF_TYPE_SCALAR);
    // Cubic spline on the root's translation: in-tangent, value, out-tangent per key.
    const int cubic = add_accessor(m, {0, 0, 0, 0, 0, 0, 4, 0, 0,   0, 0, 0, 1, 0, 0, 0, 0, 0,   0, 0, 0, 2, 0, 0, 0, 0, 0},
                                   TINYGLTF_TYPE_VEC3);
    const int step = add_accessor(m, {0, 0, 0, 1, 0, 0.7071068f, 0, 0.7071068f, 0, 1, 0, 0}, TINYGLTF_TYPE_VEC4);
    tinygltf::Animation a;
    a.name = "keys";
    a.samplers = {{}, {}};
    a.samplers[0].input = a.samplers[1].input = times;
    a.samplers[0].output = cubic;
    a.samplers[0].interpolation = "CUBICSPLINE";
    a.samplers[1].output = step;
    a.samplers[1].interpolation = "STEP";
    a.channels = {{}, {}};
    a.channels[0].sampler = 0, a.channels[0].target_node = 0, a.channels[0].target_path = "translation";
    a.channels[1].sampler = 1, a.channels[1].target_node = 0, a.channels[1].target_path = "rotation";
    m.animations.push_back(a);
  });
  const AnimationFile back = parse_gltf(glb, "keys.glb", ".");
  const Clip& c = back.clips.at(0);
  EXPECT_EQ(c.fps, kIrregularKeyFps);  // keys at 0, 0.25 and 1 s are not evenly spaced
  EXPECT_EQ(c.frames, int(kIrregularKeyFps) + 1);
  // Hermite at u = 0.5 of the first interval: 0.5 v0 + 0.125 dt m0 + 0.5 v1 - 0.125 dt m1 with
  // v0 = 0, out-tangent m0 = 4, v1 = 1, in-tangent m1 = 0, dt = 0.25.
  const int mid = int(std::lround(0.125 * kIrregularKeyFps));
  const float u = float(mid) / kIrregularKeyFps / 0.25f;
  const float want = (-2 * u * u * u + 3 * u * u) + (u * u * u - 2 * u * u + u) * 0.25f * 4.0f;
  EXPECT_NEAR(c.position(mid, 0).x, want, 1e-5f);
  EXPECT_NEAR(c.position(c.frames - 1, 0).x, 2.0f, 1e-6f);
  // STEP holds key 1 (a quarter turn about Y) from 0.25 s until 1 s.
  EXPECT_NEAR(c.rotation(mid, 0).w, 1.0f, 1e-6f);
  EXPECT_NEAR(c.rotation(int(0.5f * kIrregularKeyFps), 0).y, 0.7071068f, 1e-6f);
}

TEST(Gltf, ForeignSkinnedFileReadsItsSkinsJoints) {
  // simple_skin.gltf of the glTF tutorials (Debian's assimp-testmodels): two skin joints, one
  // rotation channel, a mesh that is read past.
  const std::string path = "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf";
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: install assimp-testmodels (scripts/install-deps.sh)";
  const AnimationFile file = read_gltf(path);
  EXPECT_EQ(file.skeleton.names, (std::vector<std::string>{"node_1", "node_2"}));
  EXPECT_EQ(file.skeleton.parents, (std::vector<int>{-1, 0}));
  ASSERT_EQ(file.clips.size(), 1u);
  EXPECT_NEAR(file.skeleton.offsets[0].y, 1.0f, 1e-6f);
  const Clip& clip = file.clips[0];
  EXPECT_EQ(clip.fps, 2.0f);  // keys every 0.5 s from 0 to 5.5 s
  EXPECT_EQ(clip.frames, 12);
  EXPECT_NEAR(clip.rotation(2, 1).z, 0.7071f, 1e-3f);  // the key at 1 s: a quarter turn about Z
}

TEST(GltfErrors, NameTheFileAndTheNodeAtFault) {
  const AnimationFile walk = circle_walk(4);
  const std::string glb = write_glb(walk.skeleton, walk.clips);
  auto expect_error = [](const std::string& bytes, const std::string& needle) {
    const std::string error = gltf_error(bytes);
    EXPECT_EQ(error.rfind("rig.glb: ", 0), 0u) << error;
    EXPECT_NE(error.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << error;
  };
  expect_error("not a gltf", "not a readable glTF 2.0 file");
  expect_error(edited(glb, [](tinygltf::Model& m) { m.animations.clear(); }), "no animation");
  expect_error(edited(glb, [](tinygltf::Model& m) { m.nodes[2].scale = {1.0, 2.0, 1.0}; }),
               "node 2 '" + walk.skeleton.names[2] + "' has the scale (1, 2, 1)");
  expect_error(edited(glb, [](tinygltf::Model& m) { m.nodes[1].matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1}; m.nodes[1].translation.clear(); m.nodes[1].rotation.clear(); }),
               "shear or a reflection");
  expect_error(edited(glb, [](tinygltf::Model& m) { m.accessors[1].count = 1000000; }), "accessor 1 runs past its buffer view");
  expect_error(edited(glb, [](tinygltf::Model& m) { m.nodes[3].name = m.nodes[2].name; }), "have the same name");
  expect_error(edited(glb, [&](tinygltf::Model& m) {
                 const int scales = add_accessor(m, std::vector<float>(size_t(3 * 4), 1.0f), TINYGLTF_TYPE_VEC3);
                 reinterpret_cast<float*>(&m.buffers[0].data[m.bufferViews.back().byteOffset])[4] = 1.5f;
                 tinygltf::AnimationSampler s = m.animations[0].samplers[0];
                 s.output = scales;
                 m.animations[0].samplers.push_back(s);
                 tinygltf::AnimationChannel c;
                 c.sampler = int(m.animations[0].samplers.size()) - 1, c.target_node = 1, c.target_path = "scale";
                 m.animations[0].channels.push_back(c);
               }),
               "has an animated scale");
  expect_error(edited(glb, [](tinygltf::Model& m) {
                 tinygltf::Node other;
                 other.name = "Prop";
                 m.nodes.push_back(other);
                 m.scenes[0].nodes.push_back(int(m.nodes.size()) - 1);
                 tinygltf::AnimationChannel c = m.animations[0].channels.back();
                 c.target_node = int(m.nodes.size()) - 1;
                 m.animations[0].channels.push_back(c);
               }),
               "two roots");
}

TEST(GltfImport, GlbFilesImportAsTheirBvhSources) {
  const std::string dir = test::temp_folder("gltf_import");
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", test::biped_skeleton_toml()));
  o.features = load_feature_config(test::write_text(dir + "/features.toml", test::biped_features_toml()));
  fs::create_directories(dir + "/bvh");
  fs::create_directories(dir + "/glb");
  const std::string circle = test::circle_walk_bvh(1.4f, 3.0f, 120, 30.0f), line = test::straight_walk_bvh(1.2f, 100, 30.0f);
  for (const auto& [name, text] : {std::pair{"circle", circle}, std::pair{"line", line}}) {
    test::write_text(dir + "/bvh/" + name + ".bvh", text);
    Skeleton skeleton;
    Clip clip;
    clip_from_bvh(parse_bvh(text, name), o.skeleton.unit_scale, name, skeleton, clip);
    convert_up_axis(o.skeleton.up_axis, skeleton, clip);
    test::write_text(dir + "/glb/" + std::string(name) + ".glb", write_glb(skeleton, {clip}));
  }
  std::vector<std::string> infos;
  o.info = [&](const std::string& m) { infos.push_back(m); };
  o.inputs = {dir + "/bvh"};
  import_database(o, dir + "/bvh.mmdb");
  o.inputs = {dir + "/glb"};
  import_database(o, dir + "/glb.mmdb");
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_NE(infos[0].find("circle.glb: glTF 2.0: metres and Y-up"), std::string::npos) << infos[0];
  std::string error;
  const auto a = Database::load_file(dir + "/bvh.mmdb", error), b = Database::load_file(dir + "/glb.mmdb", error);
  ASSERT_TRUE(a && b) << error;
  ASSERT_EQ(a->frame_count(), b->frame_count());
  ASSERT_EQ(a->schema().dims, b->schema().dims);
  float worst = 0.0f;
  for (int f = 0; f < a->frame_count(); ++f) {
    for (int d = 0; d < a->schema().dims; ++d) worst = std::max(worst, std::fabs(a->features(f)[d] - b->features(f)[d]));
  }
  EXPECT_LT(worst, 1e-3f);
}

namespace {

// The point of segment [a, b] nearest `p`.
Vec3 nearest_on_segment(Vec3 a, Vec3 b, Vec3 p) {
  const float t = std::clamp(dot(p - a, b - a) / std::max(dot(b - a, b - a), 1e-12f), 0.0f, 1.0f);
  return a + (b - a) * t;
}

// The point nearest `p` on the bones from joint `j` to its children, given joint positions `world`.
Vec3 nearest_on_bones(const Skeleton& s, const std::vector<Vec3>& world, int j, Vec3 p) {
  Vec3 best = world[size_t(j)];
  for (int c = 0; c < s.joint_count(); ++c) {
    if (s.parents[size_t(c)] != j) continue;
    const Vec3 q = nearest_on_segment(world[size_t(j)], world[size_t(c)], p);
    if (length(q - p) < length(best - p)) best = q;
  }
  return best;
}

}  // namespace

TEST(Gltf, SpindleMeshIsClosedOutwardAndItsVerticesFollowTheirJoints) {
  const AnimationFile walk = circle_walk();  // a biped of about 2 m (its centimetres read as decimetres)
  Skeleton skeleton = walk.skeleton;
  Clip clip = walk.clips[0];
  for (Vec3& o : skeleton.offsets) o = o * 0.01f;
  for (Vec3& p : clip.positions) p = p * 0.01f;
  const SkinnedMesh mesh = bone_spindles(skeleton);
  ASSERT_FALSE(mesh.indices.empty());
  ASSERT_EQ(mesh.joints.size(), 4 * mesh.positions.size());
  std::vector<Vec3> rest(skeleton.offsets.size());
  for (size_t j = 0; j < rest.size(); ++j) rest[j] = skeleton.offsets[j] + (skeleton.parents[j] >= 0 ? rest[size_t(skeleton.parents[j])] : Vec3{});
  // Every triangle faces away from its bone.
  for (size_t t = 0; t < mesh.indices.size(); t += 3) {
    const Vec3 a = mesh.positions[mesh.indices[t]], b = mesh.positions[mesh.indices[t + 1]], c = mesh.positions[mesh.indices[t + 2]];
    const Vec3 centre = (a + b + c) / 3.0f;
    const Vec3 axis_point = nearest_on_bones(skeleton, rest, mesh.joints[4 * mesh.indices[t]], centre);
    EXPECT_GT(dot(cross(b - a, c - a), centre - axis_point), 0.0f) << "triangle " << t / 3;
  }
  // Written with the walk and read back by tinygltf: one skin over every joint. Skinned as glTF
  // skins (the joint's world matrix times its inverse bind matrix from the file), every vertex stays
  // within its spindle's 6 cm of its bone on every frame.
  const std::string glb = write_glb(skeleton, {clip}, &mesh);
  tinygltf::TinyGLTF io;
  tinygltf::Model model;
  std::string error, warning;
  ASSERT_TRUE(io.LoadBinaryFromMemory(&model, &error, &warning, reinterpret_cast<const unsigned char*>(glb.data()), unsigned(glb.size())))
      << error;
  ASSERT_EQ(model.skins.size(), 1u);
  ASSERT_EQ(int(model.skins[0].joints.size()), skeleton.joint_count());
  const tinygltf::Accessor& binds = model.accessors[size_t(model.skins[0].inverseBindMatrices)];
  const float* inverse_bind = reinterpret_cast<const float*>(
      &model.buffers[0].data[model.bufferViews[size_t(binds.bufferView)].byteOffset + binds.byteOffset]);
  EXPECT_EQ(parse_gltf(glb, "walk.glb", ".").skeleton.names, skeleton.names);  // the mesh node is not a joint
  for (int f = 0; f < clip.frames; f += 10) {
    const std::vector<Vec3> world = test::clip_world_positions(skeleton, clip, f);
    std::vector<Vec3> positions(size_t(clip.joints));
    std::vector<Quat> rotations(size_t(clip.joints));
    forward_kinematics(skeleton.parents.data(), clip.joints, &clip.positions[size_t(f * clip.joints)],
                       &clip.rotations[size_t(f * clip.joints)], positions.data(), rotations.data());
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
      const int j = mesh.joints[4 * v];
      const float* m = inverse_bind + 16 * j;  // column-major
      const Vec3 p = mesh.positions[v];
      const Vec3 bound{m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12], m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13],
                       m[2] * p.x + m[6] * p.y + m[10] * p.z + m[14]};
      const Vec3 skinned = positions[size_t(j)] + rotate(rotations[size_t(j)], bound);
      EXPECT_LT(length(skinned - nearest_on_bones(skeleton, world, j, skinned)), 0.0601f) << "vertex " << v << " frame " << f;
    }
  }
}

namespace {

// The spindle mesh of the circle walk's skeleton in metres, that skeleton, and a .glb of both
// (its bytes and the file `dir`/character.glb).
struct SpindleFile {
  Skeleton skeleton;
  SkinnedMesh mesh;
  std::string bytes, path;
};
SpindleFile spindle_file(const std::string& dir) {
  const AnimationFile walk = circle_walk();
  SpindleFile s{walk.skeleton, {}, "", dir + "/character.glb"};
  Clip clip = walk.clips[0];
  for (Vec3& o : s.skeleton.offsets) o = o * 0.01f;
  for (Vec3& p : clip.positions) p = p * 0.01f;
  s.mesh = bone_spindles(s.skeleton);
  s.bytes = write_glb(s.skeleton, {clip}, &s.mesh);
  test::write_text(s.path, s.bytes);
  return s;
}

std::string mesh_error(const std::string& path, const Skeleton& skeleton) {
  try {
    read_skinned_mesh(path, skeleton);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GltfMesh, ASkinnedMeshReadsBackAsTheMeshWritten) {
  const SpindleFile s = spindle_file(test::temp_folder("mesh"));
  const SkinnedMesh back = read_skinned_mesh(s.path, s.skeleton);
  ASSERT_EQ(back.positions.size(), s.mesh.positions.size());
  EXPECT_EQ(back.indices, s.mesh.indices);
  EXPECT_EQ(back.joints, s.mesh.joints);
  EXPECT_EQ(back.weights, s.mesh.weights);
  for (size_t v = 0; v < back.positions.size(); ++v) {
    EXPECT_LT(length(back.positions[v] - s.mesh.positions[v]), 1e-6f) << "vertex " << v;
    EXPECT_LT(length(back.normals[v] - s.mesh.normals[v]), 1e-5f) << "vertex " << v;
  }
  // Joints match by name whatever their case and order in the other skeleton: a skeleton with the
  // joints renamed in capitals binds the same vertices to the same named joints.
  Skeleton shouting = s.skeleton;
  for (std::string& name : shouting.names) std::transform(name.begin(), name.end(), name.begin(), ::toupper);
  EXPECT_EQ(read_skinned_mesh(s.path, shouting).joints, s.mesh.joints);
}

TEST(GltfMesh, BadCharacterFilesAreRefusedNamingTheFileAndJoint) {
  const std::string dir = test::temp_folder("mesh");
  const SpindleFile s = spindle_file(dir);
  // No skin at all: the walk without a mesh.
  const AnimationFile walk = circle_walk();
  const std::string bare = test::write_text(dir + "/bare.glb", write_glb(walk.skeleton, walk.clips));
  EXPECT_NE(mesh_error(bare, s.skeleton).find("bare.glb: no skinned mesh"), std::string::npos) << mesh_error(bare, s.skeleton);
  // A skeleton whose rest pose is 10% taller: the bind pose is too far from it, named by joint.
  Skeleton taller = s.skeleton;
  for (Vec3& o : taller.offsets) o = o * 1.1f;
  const std::string far = mesh_error(s.path, taller);
  EXPECT_NE(far.find("character.glb: node"), std::string::npos) << far;
  EXPECT_NE(far.find("in the mesh's bind pose"), std::string::npos) << far;
  // No joint of the same name.
  Skeleton strangers = s.skeleton;
  for (std::string& name : strangers.names) name = "other_" + name;
  EXPECT_NE(mesh_error(s.path, strangers).find("no joint of its skin is named as a joint of the skeleton"), std::string::npos);
  // A vertex weighted to a joint the skeleton lacks, with no named joint above it: the root.
  Skeleton rootless = s.skeleton;
  rootless.names[0] = "elsewhere";
  const std::string edited_path = test::write_text(dir + "/root-weighted.glb", edited(s.bytes, [](tinygltf::Model& m) {
    const tinygltf::Accessor& joints = m.accessors[size_t(m.meshes[0].primitives[0].attributes["JOINTS_0"])];
    const size_t at = m.bufferViews[size_t(joints.bufferView)].byteOffset + joints.byteOffset;
    const uint16_t root = 0;
    std::memcpy(&m.buffers[0].data[at], &root, 2);  // vertex 0's first joint (weight 1)
  }));
  const std::string orphan = mesh_error(edited_path, rootless);
  EXPECT_NE(orphan.find("vertex 0 is weighted to node 0"), std::string::npos) << orphan;
  // Options: a name that is none of the three kinds.
  EXPECT_THROW(check_mesh_option("cubes"), InputError);
  EXPECT_NO_THROW(check_mesh_option("my.GLB"));
}

TEST(GltfErrors, OddNamesScalesAndRotationKeysNameTheNodeOrAccessorAndKey) {
  // The issue "glTF conversion and odd keys": a newline in a joint's name failed later as
  // "skeleton: names, parents and offsets have different lengths"; an armature scale of 1e-30 as a
  // feature group of zero variance; a rotation key of length 0 or 1e-10 read as some rotation.
  const AnimationFile walk = circle_walk(4);
  const std::string glb = write_glb(walk.skeleton, walk.clips);
  const auto error_of = [](const std::string& bytes) {
    const std::string error = gltf_error(bytes);
    EXPECT_EQ(error.rfind("rig.glb: ", 0), 0u) << error;
    return error;
  };
  const std::string newline = error_of(edited(glb, [](tinygltf::Model& m) { m.nodes[2].name = "Ne\nck"; }));
  EXPECT_NE(newline.find("node 2 'Ne\\nck' has a control character in its name"), std::string::npos) << newline;
  const std::string tiny = error_of(edited(glb, [](tinygltf::Model& m) {
    tinygltf::Node armature;
    armature.name = "Armature";
    armature.children = {0};
    armature.scale = {1e-30, 1e-30, 1e-30};
    m.nodes.push_back(armature);
    m.scenes[0].nodes = {int(m.nodes.size()) - 1};
  }));
  EXPECT_NE(tiny.find("node " + std::to_string(walk.skeleton.joint_count()) + " 'Armature' has the scale 1e-30"),
            std::string::npos)
      << tiny;
  EXPECT_NE(tiny.find("[1e-06, 1e+06]"), std::string::npos) << tiny;
  const std::string rest = error_of(edited(glb, [](tinygltf::Model& m) {
    m.nodes[3].rotation = {0.0, 0.0, 0.0, 0.0};
  }));
  EXPECT_NE(rest.find("node 3 '" + walk.skeleton.names[3] + "' has the rotation (0, 0, 0, 0) (x, y, z, w) of length 0"),
            std::string::npos)
      << rest;
  for (const float w : {0.0f, 1e-10f}) {
    AnimationFile bad = walk;
    bad.clips[0].rotation(2, 1) = Quat{w, 0.0f, 0.0f, 0.0f};
    const std::string key = error_of(write_glb(bad.skeleton, bad.clips));
    // Joint 1's rotation is channel 1 or 2 (after its translation, when that moves) of animation 0.
    EXPECT_NE(key.find("animation 0 'walk' channel "), std::string::npos) << key;
    EXPECT_NE(key.find("(rotation) key values: accessor "), std::string::npos) << key;
    EXPECT_NE(key.find(" key 2 is the rotation (0, 0, 0, " + format_number(w) + ") (x, y, z, w) of length " +
                       format_number(w)),
              std::string::npos)
        << key;
    EXPECT_NE(key.find("normalises ones of length 1e-06 or more and refuses shorter ones"), std::string::npos) << key;
  }
}

TEST(FbxErrors, ATinyUnitAndANewlineInANodeNameNameTheFileAndNode) {
  // Blender's dash.fbx with its UnitScaleFactor (a double after the property's name and types)
  // made 1e-30, and with "Neck" renamed "Ne\nk".
  const std::string dash =
      read_text_file(std::string(LMM_TEST_SOURCE_DIR) + "/data/blender/dash.fbx", 1 << 20, "FBX file");
  const std::string unit_property = "UnitScaleFactorS\x06\0\0\0doubleS\x06\0\0\0NumberS\0\0\0\0D"s;
  const size_t unit = dash.find(unit_property);
  ASSERT_NE(unit, std::string::npos);
  std::string tiny = dash;
  const double scale = 1e-30;
  std::memcpy(&tiny[unit + unit_property.size()], &scale, 8);
  try {
    parse_fbx(tiny, "tiny.fbx");
    ADD_FAILURE() << "a unit of 1e-30 cm read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "tiny.fbx: UnitScaleFactor 1e-30 is outside [0.0001, 1e+06] cm per unit");
  }
  std::string renamed = dash;
  renamed.replace(renamed.find("Neck\0\x01Model"s), 4, "Ne\nk");
  try {
    parse_fbx(renamed, "renamed.fbx");
    ADD_FAILURE() << "a joint name with a newline read";
  } catch (const InputError& e) {
    const std::string error = e.what();
    EXPECT_EQ(error.rfind("renamed.fbx: node ", 0), 0u) << error;
    EXPECT_NE(error.find(" 'Ne\\nk' has a control character in its name"), std::string::npos) << error;
  }
}

namespace {

// Options for the biped of test::biped_skeleton_toml in `dir`, warnings collected in `warnings`.
ImportOptions biped_options(const std::string& dir, std::vector<std::string>& warnings) {
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", test::biped_skeleton_toml()));
  o.features = load_feature_config(test::write_text(dir + "/features.toml", test::biped_features_toml()));
  o.warn = [&warnings](const std::string& m) { warnings.push_back(m); };
  return o;
}

// A circle walk of the biped in metres (its centimetres at the config's unit_scale), `frames`
// frames at 30 Hz.
AnimationFile biped_walk(const ImportOptions& o, int frames) {
  AnimationFile file;
  Clip clip;
  clip_from_bvh(parse_bvh(test::circle_walk_bvh(140.0f, 300.0f, frames, 30.0f), "walk.bvh"), o.skeleton.unit_scale,
                "walk", file.skeleton, clip);
  file.clips.push_back(clip);
  return file;
}

// The files in folder `dir` (none when it does not exist).
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path().string());
  return out;
}

}  // namespace

TEST(GltfConvert, JointNamesBvhCannotHoldAreWrittenSanitisedAndListed) {
  const std::string dir = test::temp_folder("convert");
  std::vector<std::string> warnings;
  ImportOptions o = biped_options(dir, warnings);
  AnimationFile walk = biped_walk(o, 60);
  walk.skeleton.names[1] = "Ne ck{ }";  // the spine, which the config does not name
  fs::create_directories(dir + "/glb");
  const std::string glb = test::write_text(dir + "/glb/odd.glb", write_glb(walk.skeleton, walk.clips));
  o.inputs = {glb};
  const std::vector<std::string> written = convert_motion_files(o, MotionFormat::Bvh, dir + "/bvh");
  ASSERT_EQ(written, std::vector<std::string>{dir + "/bvh/odd.bvh"});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            glb +
                ": joint 'Ne ck{ }' is written to BVH as 'Ne_ck___' (a BVH joint name is unique and holds no "
                "whitespace, brace or control character)");
  BvhFile back;
  ASSERT_NO_THROW(back = read_bvh(written[0]));
  EXPECT_EQ(back.joints.at(1).name, "Ne_ck___");
  // The written folder imports as the .glb it came from.
  const ImportSummary from_glb = import_database(o, dir + "/glb.mmdb");
  o.inputs = {dir + "/bvh"};
  const ImportSummary from_bvh = import_database(o, dir + "/bvh.mmdb");
  EXPECT_EQ(from_bvh.files, 1);
  EXPECT_EQ(from_bvh.frames, from_glb.frames);
}

TEST(GltfConvert, ClipsABvhFileCannotHoldAreRefusedBeforeAnythingIsWritten) {
  const std::string dir = test::temp_folder("convert");
  std::vector<std::string> warnings;
  ImportOptions o = biped_options(dir, warnings);
  const AnimationFile walk = biped_walk(o, 30);
  fs::create_directories(dir + "/in");
  test::write_text(dir + "/in/a_good.glb", write_glb(walk.skeleton, walk.clips));
  // What each bad file holds, and what its refusal says after the file's name.
  struct Bad {
    std::string name;
    std::function<void(AnimationFile&)> edit;
    std::string error;
  };
  const std::vector<Bad> bad = {
      {"fast",
       [](AnimationFile& f) { f.clips[0].fps = 100000.0f, f.clips[0].frames = 3; },  // keys 10 microseconds apart
       ": its frames are 1e-05 s apart (100000 Hz): a BVH frame time is within [0.0001, 1] s"},
      {"one_key", [](AnimationFile& f) { f.clips[0].frames = 1; },
       ": the clip has 1 frame at 60 Hz: a clip needs at least 2 frames"},  // one key: kIrregularKeyFps
      {"far", [](AnimationFile& f) { f.clips[0].position(1, 0).x = 1e32f; },
       ": joint 'Hips': its Xposition at frame 1 is 1e+34: a BVH file holds values within [-1e+06, 1e+06]"},
  };
  for (const Bad& b : bad) {
    AnimationFile file = walk;
    b.edit(file);
    file.clips[0].positions.resize(size_t(file.clips[0].frames * file.clips[0].joints));
    file.clips[0].rotations.resize(file.clips[0].positions.size());
    const std::string path = test::write_text(dir + "/in/" + b.name + ".glb", write_glb(file.skeleton, file.clips));
    o.inputs = {dir + "/in/a_good.glb", path};
    o.skip_bad = false;
    try {
      convert_motion_files(o, MotionFormat::Bvh, dir + "/out");
      ADD_FAILURE() << b.name << ": converted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + b.error, 0), 0u) << e.what();
    }
    EXPECT_TRUE(files_in(dir + "/out").empty()) << b.name;
    // Skipped, the good file is written, and read back.
    o.skip_bad = true;
    const std::vector<std::string> written = convert_motion_files(o, MotionFormat::Bvh, dir + "/out");
    ASSERT_EQ(written, std::vector<std::string>{dir + "/out/a_good.bvh"});
    EXPECT_NO_THROW(read_bvh(written[0]));
    fs::remove_all(dir + "/out");
    fs::remove(path);
  }
  // An animation without channels on joints (only morph weights) beside the walk: one frame of
  // the rest pose.
  const std::string still =
      test::write_text(dir + "/in/still.glb", edited(write_glb(walk.skeleton, walk.clips), [](tinygltf::Model& m) {
                         tinygltf::Animation none;
                         none.name = "nothing";
                         none.samplers = {m.animations[0].samplers[0]};
                         none.channels = {m.animations[0].channels[0]};
                         none.channels[0].target_path = "weights";
                         m.animations.push_back(none);
                       }));
  o.inputs = {still};
  o.skip_bad = false;
  try {
    convert_motion_files(o, MotionFormat::Bvh, dir + "/out");
    ADD_FAILURE() << "an animation without channels converted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(still + " (animation 'nothing'): the clip has 1 frame", 0), 0u) << e.what();
  }
  EXPECT_TRUE(files_in(dir + "/out").empty());
}
