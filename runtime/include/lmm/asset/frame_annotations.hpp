// Gameplay annotations of a motion database's frames (database version 3): tags, frames that may
// be played into but never jumped to (no-entry), per-frame cost biases and named events. All are
// optional; a database without them has no tags, no no-entry frames, zero biases and no events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"

namespace lmm {

constexpr int kMaxTags = 64;                 // tags per database: one bit each of a TagMask
constexpr float kMaxCostBias = 1.0e6f;       // largest |cost bias| the loader accepts
constexpr int kMaxEventNames = 1 << 16;      // distinct event names per database
using TagMask = uint64_t;                    // bit t set: the frame has tag t

// Tensor names of the annotations (shared by the writer and the reader).
namespace annotation_tensor {
constexpr const char* kTagNames = "tags.names";            // text: one tag name per line
constexpr const char* kTagMasks = "tags.masks";            // i32 [frames, 2]: low and high 32 bits of a TagMask
constexpr const char* kKeptOutNames = "tags.kept_out";     // text: tags searches requiring no tag leave out (actions), one per line
constexpr const char* kNoEntry = "frames.no_entry";        // u8 [frames]: 1 = never a search result
constexpr const char* kCostBias = "frames.cost_bias";      // f32 [frames]: added to the frame's matching cost
constexpr const char* kEventNames = "events.names";        // text: one event name per line
constexpr const char* kEventFrames = "events.frames";      // i32 [events]: frame of each event, ascending
constexpr const char* kEventNameIndex = "events.name";     // i32 [events]: index into events.names
}  // namespace annotation_tensor

// Which frames a search may return, by their tags: a frame is allowed when it has every tag of
// `require_all`, at least one of `require_any` (when not 0) and none of `exclude`. The default
// allows every frame. Built once from tag names (FrameAnnotations::tag_mask), used per update.
struct TagConstraint {
  TagMask require_all = 0;
  TagMask require_any = 0;  // 0: no such condition
  TagMask exclude = 0;

  // Whether a frame with `tags` is allowed.
  bool allows(TagMask tags) const {
    return (tags & require_all) == require_all && (require_any == 0 || (tags & require_any) != 0) &&
           (tags & exclude) == 0;
  }
  // Whether every frame is allowed.
  bool allows_all() const { return require_all == 0 && require_any == 0 && exclude == 0; }
  // This constraint with the tags `kept_out` (actions) excluded too when it requires no tag: the
  // frames of actions are entered only by play_action or a constraint that requires a tag.
  TagConstraint keeping_out(TagMask kept_out) const {
    const bool requires_tag = require_all != 0 || require_any != 0;
    return TagConstraint{require_all, require_any, requires_tag ? exclude : exclude | kept_out};
  }
};

// Tag names in bit order (a database's or a model bundle's) and the lookups between names and
// TagMask bits. `owner` ("database", "model") names whose tags they are in error messages.
class TagNames {
 public:
  explicit TagNames(const char* owner = "database") : owner_(owner) {}
  // Reads the names of text tensor `text` (named `tensor` in messages): one per line, non-empty,
  // distinct, at most kMaxTags; false with a message.
  bool read(const TensorView& text, const char* tensor, std::string& error);
  // The names in bit order.
  const std::vector<std::string>& names() const { return names_; }
  // Number of tags.
  int size() const { return int(names_.size()); }
  // Bit index of tag `name`, or -1.
  int tag(const std::string& name) const;
  // The mask of the comma-separated tag names in `names` ("" gives 0; spaces around a name are
  // ignored); false with a message naming the first unknown tag and listing the known ones.
  bool tag_mask(const std::string& names, TagMask& mask, std::string& error) const;
  // The mask of those comma-separated tag names that are known (the others are ignored).
  TagMask known_tags(const std::string& names) const;
  // The names of the tags of `mask`, comma-separated ("a, b"; bits beyond the names as "#N").
  // Allocates (for messages).
  std::string names_of(TagMask mask) const;
  // Every known tag's bit.
  TagMask all() const { return names_.size() == 64 ? ~TagMask(0) : (TagMask(1) << names_.size()) - 1; }

 private:
  const char* owner_;
  std::vector<std::string> names_;
};

// A named marker on one frame (e.g. a foot plant), `name` indexing FrameAnnotations::event_names().
struct DatabaseEvent {
  int frame = 0;
  int name = 0;
};

// The annotations of a database, read in place from its blob (which must outlive them).
class FrameAnnotations {
 public:
  // Reads the optional annotation tensors of `view` for `frames` frames; false with a message
  // naming the tensor and frame at fault. Annotations need database version 3 or later.
  bool read(const BlobView& view, int frames, std::string& error);

  // Tag names in bit order (at most kMaxTags).
  const std::vector<std::string>& tag_names() const { return tag_names_.names(); }
  // The tag names and their lookups (TagNames::tag, tag_mask, known_tags).
  const TagNames& tag_set() const { return tag_names_; }
  // Bit index of tag `name`, or -1.
  int tag(const std::string& name) const { return tag_names_.tag(name); }
  // TagNames::tag_mask over the database's tags.
  bool tag_mask(const std::string& names, TagMask& mask, std::string& error) const {
    return tag_names_.tag_mask(names, mask, error);
  }
  // The mask of those comma-separated tag names the database has (the others are ignored).
  TagMask known_tags(const std::string& names) const { return tag_names_.known_tags(names); }
  // The tags (of tags.kept_out: the import config's actions) that some frame holds: searches
  // whose constraint requires no tag leave their frames out (TagConstraint::keeping_out).
  TagMask kept_out_tags() const { return kept_out_; }
  // Tags of `frame` (0 when the database has none).
  TagMask tags(int frame) const {
    return masks_ == nullptr ? 0 : TagMask(uint32_t(masks_[2 * size_t(frame)])) |
                                       TagMask(uint32_t(masks_[2 * size_t(frame) + 1])) << 32;
  }
  // Whether `frame` may be played into but never jumped to.
  bool no_entry(int frame) const { return no_entry_ != nullptr && no_entry_[frame] != 0; }
  // Cost added to `frame`'s matching cost (0 when the database has none).
  float cost_bias(int frame) const { return cost_bias_ == nullptr ? 0.0f : cost_bias_[frame]; }
  // Whether any frame has a cost bias tensor (so a search must add them).
  bool has_cost_bias() const { return cost_bias_ != nullptr; }
  // Whether any frame has a no-entry tensor.
  bool has_no_entry() const { return no_entry_ != nullptr; }
  // Whether the database has tags, no-entry flags or cost biases (so a search must consult them).
  bool restricts_search() const { return masks_ != nullptr || no_entry_ != nullptr || cost_bias_ != nullptr; }
  // Events in frame order.
  const std::vector<DatabaseEvent>& events() const { return events_; }
  // Distinct event names.
  const std::vector<std::string>& event_names() const { return event_names_; }

 private:
  bool read_tags(const BlobView& view, int frames, std::string& error);
  // The tags of tensor tags.kept_out (names of tags.names) among the `held` tags.
  bool read_kept_out(const BlobView& view, TagMask held, std::string& error);
  bool read_frame_flags(const BlobView& view, int frames, std::string& error);
  bool read_events(const BlobView& view, int frames, std::string& error);

  TagNames tag_names_;
  TagMask kept_out_ = 0;
  const int32_t* masks_ = nullptr;
  const uint8_t* no_entry_ = nullptr;
  const float* cost_bias_ = nullptr;
  std::vector<DatabaseEvent> events_;
  std::vector<std::string> event_names_;
};

}  // namespace lmm
