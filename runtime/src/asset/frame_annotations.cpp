#include "lmm/asset/frame_annotations.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "lmm/asset/database.hpp"
#include "lmm/core/text.hpp"

namespace lmm {
namespace {

namespace t = annotation_tensor;

constexpr uint32_t kFirstAnnotatedVersion = 3;

// The name lines of text tensor `name`: non-empty, distinct, at most `limit`; false with a message.
bool read_names(const TensorView& text, const char* name, size_t limit, std::vector<std::string>& names,
                std::string& error) {
  names = split_lines(text.text());
  if (names.size() > limit) {
    error = std::string(name) + " holds " + std::to_string(names.size()) + " names, more than " + std::to_string(limit);
    return false;
  }
  std::unordered_set<std::string> seen;  // a hash set: up to 65,536 names must not take quadratic time
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string problem = name_problem(names[i]);
    if (!problem.empty() || !seen.insert(names[i]).second) {
      error = std::string(name) + ": name " + std::to_string(i) + " ('" + printable(names[i]) + "') " +
              (problem.empty() ? "is repeated" : problem);
      return false;
    }
  }
  return true;
}

// Whether `view` holds any annotation tensor.
bool has_annotations(const BlobView& view) {
  for (const char* name : {t::kTagNames, t::kKeptOutNames, t::kTagMasks, t::kNoEntry, t::kCostBias, t::kEventNames, t::kEventFrames,
                           t::kEventNameIndex}) {
    if (view.find(name) != nullptr) return true;
  }
  return false;
}

// `text` without leading and trailing spaces and tabs.
std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// "tags: a, b" or "no tags".
std::string tag_list(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "tags: " : ", ") + n;
  return list.empty() ? "no tags" : list;
}

// Calls visit(name) on each comma-separated name of `names` (trimmed; none in a blank string)
// until it returns false; whether every call returned true.
template <class Visit>
bool each_name(const std::string& names, const Visit& visit) {
  if (trimmed(names).empty()) return true;
  for (size_t begin = 0; begin <= names.size();) {
    const size_t end = std::min(names.find(',', begin), names.size());
    if (!visit(trimmed(names.substr(begin, end - begin)))) return false;
    begin = end + 1;
  }
  return true;
}

}  // namespace

bool FrameAnnotations::read(const BlobView& view, int frames, std::string& error) {
  *this = FrameAnnotations{};
  if (!has_annotations(view)) return true;
  if (view.version() < kFirstAnnotatedVersion) {
    error = "tags, no-entry frames, cost biases and events need database version " +
            std::to_string(kFirstAnnotatedVersion) + ", but this is version " + std::to_string(view.version());
    return false;
  }
  return read_tags(view, frames, error) && read_frame_flags(view, frames, error) && read_events(view, frames, error);
}

bool TagNames::read(const TensorView& text, const char* tensor, std::string& error) {
  return read_names(text, tensor, kMaxTags, names_, error);
}

int TagNames::tag(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : int(it - names_.begin());
}

bool FrameAnnotations::read_tags(const BlobView& view, int frames, std::string& error) {
  if (view.find(t::kTagNames) == nullptr && view.find(t::kTagMasks) == nullptr) return read_kept_out(view, 0, error);
  const TensorView* names = view.require_shape(t::kTagNames, DType::U8, {kAnyDim}, error);
  const TensorView* masks = names ? view.require_shape(t::kTagMasks, DType::I32, {frames, 2}, error) : nullptr;
  if (masks == nullptr || !tag_names_.read(*names, t::kTagNames, error)) return false;
  const TagMask known = tag_names_.all();
  masks_ = masks->i32();
  TagMask held = 0;
  for (int f = 0; f < frames; ++f) {
    if ((tags(f) & ~known) != 0) {
      error = std::string(t::kTagMasks) + ": frame " + std::to_string(f) + " has a tag bit beyond the " +
              std::to_string(tag_names_.size()) + " names of " + t::kTagNames;
      return false;
    }
    held |= tags(f);
  }
  return read_kept_out(view, held, error);
}

bool FrameAnnotations::read_kept_out(const BlobView& view, TagMask held, std::string& error) {
  if (view.find(t::kKeptOutNames) == nullptr) return true;
  const TensorView* text = view.require_shape(t::kKeptOutNames, DType::U8, {kAnyDim}, error);
  if (text == nullptr) return false;
  TagMask actions = 0;
  for (const std::string& name : split_lines(text->text())) {
    std::string problem;
    TagMask bit = 0;
    if (!tag_names_.tag_mask(name, bit, problem) || bit == 0) {
      error = std::string(t::kKeptOutNames) + ": '" + printable(name) + "' is not one of " + t::kTagNames;
      return false;
    }
    actions |= bit;
  }
  kept_out_ = actions & held;
  return true;
}

bool FrameAnnotations::read_frame_flags(const BlobView& view, int frames, std::string& error) {
  if (view.find(t::kNoEntry) != nullptr) {
    const TensorView* no_entry = view.require_shape(t::kNoEntry, DType::U8, {frames}, error);
    if (no_entry == nullptr) return false;
    for (int f = 0; f < frames; ++f) {
      if (no_entry->data[f] > 1) {
        error = std::string(t::kNoEntry) + ": frame " + std::to_string(f) + " holds " +
                std::to_string(no_entry->data[f]) + " (0 or 1 expected)";
        return false;
      }
    }
    no_entry_ = no_entry->data;
  }
  if (view.find(t::kCostBias) != nullptr) {
    const TensorView* bias = view.require_shape(t::kCostBias, DType::F32, {frames}, error);
    if (bias == nullptr) return false;
    for (int f = 0; f < frames; ++f) {
      if (!(std::fabs(bias->f32()[f]) <= kMaxCostBias)) {
        error = std::string(t::kCostBias) + ": frame " + std::to_string(f) + " holds " +
                std::to_string(bias->f32()[f]) + ", outside [-1e6, 1e6]";
        return false;
      }
    }
    cost_bias_ = bias->f32();
  }
  return true;
}

bool FrameAnnotations::read_events(const BlobView& view, int frames, std::string& error) {
  if (view.find(t::kEventNames) == nullptr && view.find(t::kEventFrames) == nullptr &&
      view.find(t::kEventNameIndex) == nullptr) {
    return true;
  }
  const TensorView* names = view.require_shape(t::kEventNames, DType::U8, {kAnyDim}, error);
  const TensorView* at = names ? view.require_shape(t::kEventFrames, DType::I32, {kAnyDim}, error) : nullptr;
  const TensorView* which =
      at ? view.require_shape(t::kEventNameIndex, DType::I32, {int64_t(at->dims[0])}, error) : nullptr;
  if (which == nullptr || !read_names(*names, t::kEventNames, kMaxEventNames, event_names_, error)) return false;
  for (uint64_t e = 0; e < at->dims[0]; ++e) {
    const DatabaseEvent event{at->i32()[e], which->i32()[e]};
    if (event.frame < 0 || event.frame >= frames || (e > 0 && event.frame < events_.back().frame)) {
      error = std::string(t::kEventFrames) + ": event " + std::to_string(e) + " is at frame " +
              std::to_string(event.frame) + " (frames in [0, " + std::to_string(frames) + "), ascending)";
      return false;
    }
    if (event.name < 0 || size_t(event.name) >= event_names_.size()) {
      error = std::string(t::kEventNameIndex) + ": event " + std::to_string(e) + " names entry " +
              std::to_string(event.name) + " of " + std::to_string(event_names_.size());
      return false;
    }
    events_.push_back(event);
  }
  return true;
}

bool TagNames::tag_mask(const std::string& names, TagMask& mask, std::string& error) const {
  mask = 0;
  return each_name(names, [&](const std::string& name) {
    const int bit = tag(name);
    if (bit < 0) error = "unknown tag '" + name + "' in '" + names + "' (the " + owner_ + " has " + tag_list(names_) + ")";
    mask |= bit < 0 ? 0 : TagMask(1) << bit;
    return bit >= 0;
  });
}

std::string TagNames::names_of(TagMask mask) const {
  std::string text;
  for (int t = 0; t < 64; ++t) {
    if ((mask >> t & 1) == 0) continue;
    text += (text.empty() ? "" : ", ") + (size_t(t) < names_.size() ? names_[size_t(t)] : "#" + std::to_string(t));
  }
  return text;
}

TagMask TagNames::known_tags(const std::string& names) const {
  TagMask mask = 0;
  each_name(names, [&](const std::string& name) {
    const int bit = tag(name);
    mask |= bit < 0 ? 0 : TagMask(1) << bit;
    return true;
  });
  return mask;
}

}  // namespace lmm
