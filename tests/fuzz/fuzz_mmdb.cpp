// libFuzzer target: the motion database loader (lmm::Database::load_buffer, as load_file uses
// it) on the fuzzer's bytes. Built twice: raw (the header and payload hashes reject almost every
// mutation, which is what they are for) and with LMM_FUZZ_RESEAL, where the size and hash fields
// are rewritten after mutation so the fuzzer reaches the table and tensor checks behind them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/asset/skeleton.hpp"

namespace {

// Global pose of frame 0, as every consumer of a database computes it.
void pose_first_frame(const lmm::Database& db) {
  std::vector<lmm::Vec3> positions(size_t(db.joint_count()));
  std::vector<lmm::Quat> rotations(size_t(db.joint_count()));
  lmm::forward_kinematics(db.skeleton().parents.data(), db.joint_count(), db.positions(0), db.rotations(0),
                          positions.data(), rotations.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lmm::fuzz::load_blob_input<lmm::Database>(data, size, [](const std::shared_ptr<const lmm::Database>& db) {
    if (db->frame_count() > 0) pose_first_frame(*db);
  });
  return 0;
}
