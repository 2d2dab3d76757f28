// FBX and glTF files not made by lmmkit: Blender's exports of a Bandai clip (tests/data/blender/)
// against the BVH they came from, assimp's test model, unreadable FBX input, and the child process
// that keeps assimp's crashes out of the tools.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <chrono>
#include <thread>

#include "lmm/import/database_comparison.hpp"
#include "lmm/import/fbx.hpp"
#include "lmm/import/gltf.hpp"
#include "support/bandai_data.hpp"
#include "support/clip_world_positions.hpp"
#include "support/temp_files.hpp"

#include "child_process.hpp"

using namespace lmm;
using namespace lmm::pipeline;
namespace fs = std::filesystem;

namespace {

const std::string kBlenderFolder = std::string(LMM_TEST_SOURCE_DIR) + "/data/blender";
const char* kDashClip = "dataset-1_dash_normal_001";

// The largest distance over every frame and joint between `file` and the BVH skeleton and clip
// (the same hierarchy, whatever the joints are called).
float largest_distance(const AnimationFile& file, const Skeleton& bvh_skeleton, const Clip& bvh) {
  EXPECT_EQ(file.skeleton.parents, bvh_skeleton.parents);
  EXPECT_EQ(file.clips.at(0).frames, bvh.frames);
  EXPECT_EQ(file.clips.at(0).fps, bvh.fps);
  if (file.skeleton.parents != bvh_skeleton.parents) return 1e9f;
  return test::largest_world_distance(bvh_skeleton, bvh, file.skeleton, file.clips[0]);
}

}  // namespace

TEST(ForeignFiles, BlenderFbxAndGlbGiveTheBvhsJointPositionsOnEveryFrame) {
  REQUIRE_BANDAI(folder, "normal-extra");
  Skeleton skeleton;
  Clip bvh;
  clip_from_bvh(read_bvh(folder + "/normal-extra/" + kDashClip + ".bvh"), 0.01f, kDashClip, skeleton, bvh);
  const AnimationFile fbx = read_fbx(kBlenderFolder + "/dash.fbx"), mixamo = read_fbx(kBlenderFolder + "/dash-mixamo-z-up.fbx");
  const AnimationFile glb = read_gltf(kBlenderFolder + "/dash.glb");
  EXPECT_LT(largest_distance(fbx, skeleton, bvh), 1e-3f);
  EXPECT_LT(largest_distance(mixamo, skeleton, bvh), 1e-3f);
  EXPECT_LT(largest_distance(glb, skeleton, bvh), 1e-3f);
  EXPECT_NE(fbx.units.find("+Y up"), std::string::npos) << fbx.units;
  EXPECT_NE(mixamo.units.find("+Z up"), std::string::npos) << mixamo.units;
  // Blender's armature object is a Null above the bones, not a joint.
  EXPECT_EQ(fbx.skeleton.names, skeleton.names);
  EXPECT_EQ(glb.skeleton.names, skeleton.names);
  EXPECT_EQ(mixamo.skeleton.names[1], "mixamorig:Hips");
}

TEST(ForeignFiles, BlendersSkinnedMeshBindsToTheBvhSkeletonAsTheMeshItCameFrom) {
  // spindles.glb: lmm-import --convert glb --mesh spindles of the dash clip, imported into Blender
  // and exported by Blender (scripts/blender/glb_mesh.py): Blender's armature, skin and vertex order.
  REQUIRE_BANDAI(folder, "normal-extra");
  Skeleton skeleton;
  Clip bvh;
  clip_from_bvh(read_bvh(folder + "/normal-extra/" + kDashClip + ".bvh"), 0.01f, kDashClip, skeleton, bvh);
  const SkinnedMesh ours = bone_spindles(skeleton), blenders = read_skinned_mesh(kBlenderFolder + "/spindles.glb", skeleton);
  ASSERT_EQ(blenders.positions.size(), ours.positions.size());
  EXPECT_EQ(blenders.indices.size(), ours.indices.size());
  for (size_t v = 0; v < blenders.positions.size(); ++v) {
    float nearest = 1e9f;
    for (size_t u = 0; u < ours.positions.size(); ++u) {
      if (ours.joints[4 * u] == blenders.joints[4 * v]) nearest = std::min(nearest, length(ours.positions[u] - blenders.positions[v]));
    }
    EXPECT_LT(nearest, 1e-3f) << "vertex " << v << " (joint " << skeleton.names[blenders.joints[4 * v]] << ")";
    EXPECT_FLOAT_EQ(blenders.weights[4 * v], 1.0f) << "vertex " << v;
  }
}

TEST(ForeignFiles, DatabasesFromBlenderFilesMatchTheBvhDatabase) {
  REQUIRE_BANDAI(folder, "normal-extra");
  const std::string dir = test::temp_folder("foreign_databases");
  test::import_bandai({folder + "/normal-extra/" + kDashClip + ".bvh"}, dir + "/bvh.mmdb");
  std::string error;
  const auto bvh = Database::load_file(dir + "/bvh.mmdb", error);
  ASSERT_NE(bvh, nullptr) << error;
  for (const char* file : {"dash.fbx", "dash-mixamo-z-up.fbx", "dash.glb"}) {
    SCOPED_TRACE(file);
    // Named as the BVH file, so that the config's file-name tags are the same.
    const std::string copy = dir + "/" + kDashClip + fs::path(file).extension().string();
    fs::copy_file(kBlenderFolder + "/" + file, copy, fs::copy_options::overwrite_existing);
    ImportOptions o;
    o.inputs = {copy};
    // The renamed rig imports with its own skeleton map, a config only.
    o.skeleton = load_skeleton_config(default_config_dir() + "/skeletons/" + (std::string(file).find("mixamo") != std::string::npos ? "mixamo" : "bandai") + ".toml");
    o.features = load_feature_config(default_config_dir() + "/features/locomotion27.toml");
    import_database(o, dir + "/foreign.mmdb");
    fs::remove(copy);
    const auto foreign = Database::load_file(dir + "/foreign.mmdb", error);
    ASSERT_NE(foreign, nullptr) << error;
    const DatabaseDifference d = compare_databases(*bvh, *foreign, 1000);
    EXPECT_LT(d.max_position_m, 1e-3f) << d.max_position_joint << " at frame " << d.max_position_frame;
    EXPECT_LT(d.max_feature, 1e-2f);
    // Queries between two neighbouring frames of the clip are near ties: the nearest frames may
    // differ, but not by more than the features do.
    EXPECT_LT(d.max_cost_gap, 1e-3f) << d.same_nearest << " of 1000 the same";
  }
}

TEST(ForeignFiles, AssimpTestModelFbxReadsItsArmature) {
  // animation_with_skeleton.fbx of Debian's assimp-testmodels: a Blender armature of 14 bones
  // under an "Armature" Null with a 0.01 scale, beside a mesh, a camera and a light.
  const std::string path = "/usr/share/assimp/models/FBX/animation_with_skeleton.fbx";
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: install assimp-testmodels (scripts/install-deps.sh)";
  const AnimationFile file = read_fbx(path);
  ASSERT_EQ(file.skeleton.joint_count(), 15);
  EXPECT_EQ(file.skeleton.names[0], "Armature");  // the bones' common parent
  EXPECT_EQ(file.skeleton.names[1], "Bone");
  ASSERT_EQ(file.clips.size(), 1u);
  EXPECT_EQ(file.clips[0].name, "ArmatureAction");
  EXPECT_EQ(file.clips[0].fps, 60.0f);
  EXPECT_EQ(file.clips[0].frames, 51);
  EXPECT_NE(file.units.find("scaled by 0.01 to metres"), std::string::npos) << file.units;
}

TEST(FbxErrors, UnreadableInputIsNamed) {
  try {
    parse_fbx("Kaydara FBX Binary  \0 truncated", "broken.fbx");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("broken.fbx: not a readable FBX file", 0), 0u) << e.what();
  }
}

namespace {

// A child's work for ChildWorker: fails as the request says, else echoes it.
std::string echo_or_fail(const std::string& request) {
  if (request == "throw") throw InputError("f.fbx: not a readable FBX file: x");
  if (request == "segv") std::raise(SIGSEGV);
  if (request == "abort") std::abort();
  if (request == "hang") std::this_thread::sleep_for(std::chrono::seconds(3));
  return "reply to " + request;
}

}  // namespace

TEST(ChildWorker, RepliesRethrowsErrorsAndOutlivesCrashesAndHangs) {
  ChildWorker worker(echo_or_fail);
  const auto error_of = [&](const std::string& request) {
    try {
      worker.run(request, "f.fbx: the reader", 1);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(worker.run(std::string("a\0b", 3), "f.fbx: the reader", 5), std::string("reply to a\0b", 12));
  EXPECT_EQ(error_of("throw"), "f.fbx: not a readable FBX file: x");
  // A crash: the signal, or under AddressSanitizer (which reports a SIGSEGV and exits) its exit
  // status; the next request gets a new child.
  for (const char* crash : {"segv", "abort"}) {
    const std::string error = error_of(crash);
    EXPECT_EQ(error.rfind("f.fbx: the reader failed (", 0), 0u) << error;
    EXPECT_NE(error.find("): a malformed file"), std::string::npos) << error;
    EXPECT_EQ(worker.run("again", "f.fbx: the reader", 5), "reply to again");
  }
  EXPECT_EQ(error_of("hang"), "f.fbx: the reader took more than 1 s and was stopped: a malformed file?");
  EXPECT_EQ(worker.run("after", "f.fbx: the reader", 5), "reply to after");
}
