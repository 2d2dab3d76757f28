// The synthetic walks database (support/synthetic_walks.hpp) with annotations added in memory,
// for tests of tags, constraints and events on real playback in every configuration.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/database_writer.hpp"
#include "lmm/eval/search.hpp"
#include "support/synthetic_walks.hpp"

namespace lmm::test {

// Annotations to add: tag names (one per line) and each frame's tags by (frame, clip index), and
// optionally events as (frame, name) in frame order.
struct WalkAnnotations {
  std::string tag_names;
  std::string kept_out_names;  // the action tags free searches leave out (tags.kept_out)
  std::function<TagMask(int frame, int clip)> tags;
  std::string event_names;
  std::vector<int32_t> event_frames, event_name_index;
};

// Frames of the committed synthetic walks (loading events past them fails).
constexpr int kSyntheticWalkFrames = 2874;

// The first frame of each clip of the synthetic walks (for tagging frames by clip).
inline std::vector<int> synthetic_walk_starts() {
  std::shared_ptr<const Database> plain;
  FeatureSearch unused;
  load_synthetic_walks(plain, unused);
  std::vector<int> starts;
  for (const DatabaseRange& r : plain->ranges()) starts.push_back(r.start);
  return starts;
}

// The synthetic walks with `notes` added, loaded from `buffer` (kept by the caller), and their
// search built (test failures on any error).
inline void load_annotated_walks(const WalkAnnotations& notes, AlignedBuffer& buffer,
                                 std::shared_ptr<const Database>& db, FeatureSearch& search) {
  std::string error;
  AlignedBuffer original;
  ASSERT_TRUE(read_file(synthetic_walks_path(), original, error)) << error;
  BlobView view;
  ASSERT_TRUE(view.open(original.data(), original.size(), kDatabaseKind, 1, kDatabaseVersion, error)) << error;
  BlobBuilder b;
  for (const TensorView& t : view.tensors()) b.add(t.name, t.dtype, std::vector<uint64_t>(t.dims, t.dims + t.rank), t.data);
  std::shared_ptr<const Database> plain = Database::load_buffer(original.data(), original.size(), error);
  ASSERT_NE(plain, nullptr) << error;
  std::vector<int32_t> masks;
  for (size_t c = 0; c < plain->ranges().size(); ++c) {
    for (int f = plain->ranges()[c].start; f < plain->ranges()[c].stop; ++f) {
      const TagMask m = notes.tags(f, int(c));
      masks.insert(masks.end(), {int32_t(uint32_t(m)), int32_t(uint32_t(m >> 32))});
    }
  }
  DatabaseAnnotationTensors annotations;
  annotations.tag_names = notes.tag_names;
  annotations.kept_out_names = notes.kept_out_names;
  annotations.tag_masks = masks;
  annotations.event_names = notes.event_names;
  annotations.event_frames = notes.event_frames;
  annotations.event_name_index = notes.event_name_index;
  annotations.add_to(b);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(b.build(kDatabaseKind, kDatabaseVersion, true, bytes, error)) << error;
  buffer = AlignedBuffer(bytes.size());
  std::copy(bytes.begin(), bytes.end(), buffer.data());
  db = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
}

}  // namespace lmm::test
