// FeatureSearch's layout: the frames clustered into small and large boxes, groups and super
// groups (split by a tag where that is tighter, cluster()), the bound tables over them and each
// level's tag notes (build_layout). The queries that read them are in search.cpp.
#include <algorithm>
#include <cfloat>
#include <iterator>
#include <utility>

#include "eval/search_kernels.hpp"
#include "lmm/eval/search.hpp"

namespace lmm {
namespace {

// Offset of box `box`'s column in consecutive [dims][kLargeGroup] tables (large boxes, groups or
// super groups).
size_t table_column(size_t box, size_t dims) {
  return box / detail::kLargeGroup * dims * detail::kLargeGroup + box % detail::kLargeGroup;
}

// Sets min[d * stride] and max[d * stride], d < dims, to the bounds of the first `count` (> 0)
// frames of a feature block ([dim][kBlockFrames]).
void block_bounds(const float* block, int dims, int count, float* min, float* max, int stride) {
  for (int d = 0; d < dims; ++d) {
    const float* row = block + size_t(d) * detail::kBlockFrames;
    min[size_t(d) * stride] = *std::min_element(row, row + count);
    max[size_t(d) * stride] = *std::max_element(row, row + count);
  }
}

// Parent j spans children 8j..8j+7 (of `reach.size()` children, their bounds the columns of
// consecutive [dims][kLargeGroup] tables): its bounds, the columns of the parent tables, and its
// reach are theirs merged.
void merge_columns(const std::vector<float>& min, const std::vector<float>& max, const std::vector<int>& reach,
                   size_t dims, std::vector<float>& parent_min, std::vector<float>& parent_max,
                   std::vector<int>& parent_reach) {
  using detail::kLargeGroup;
  const size_t parents = (reach.size() + kLargeGroup - 1) / kLargeGroup;
  parent_min.assign((parents + kLargeGroup - 1) / kLargeGroup * dims * kLargeGroup, 0.0f);
  parent_max.assign(parent_min.size(), 0.0f);
  parent_reach.assign(parents, 0);
  for (size_t i = 0; i < reach.size(); ++i) {
    const size_t j = i / kLargeGroup, from = table_column(i, dims), to = table_column(j, dims);
    const bool first = i % kLargeGroup == 0;
    parent_reach[j] = std::max(parent_reach[j], reach[i]);
    for (size_t row = 0; row < dims * kLargeGroup; row += kLargeGroup) {
      parent_min[to + row] = first ? min[from + row] : std::min(parent_min[to + row], min[from + row]);
      parent_max[to + row] = first ? max[from + row] : std::max(parent_max[to + row], max[from + row]);
    }
  }
}

// Items of which cluster() measures the spread (the split dimension matters more than its
// precision: 64 gave tighter boxes on bandai-loco than all of them, and builds faster).
constexpr long kClusterSample = 64;

// A split by a tag is taken when its two halves' summed extents are at most this fraction of
// those of the split along the widest feature dimension (see cluster()). Measured on bandai-loco
// and bandai-actions (docs/lab/2026-11-28-tag-split-search.md): at 0.7 locomotion and actions
// were no longer split apart (excluding locomotion cost 1.4x the free search), at 0.9 the tags of
// all of bandai-loco (walk, run, turn, left, right) split it and its free search slowed 1.3-1.5x.
constexpr float kTagSplitSlack = 0.8f;

// The bounds lo[0..dims) and hi[0..dims) of about kClusterSample of the `count` items of
// [first, last) for which pick(item) holds (every stride-th of them; FLT_MAX / -FLT_MAX for none).
template <class Pick>
void sampled_bounds(const int* first, const int* last, long count, const float* rows, size_t dims, Pick pick,
                    float* lo, float* hi) {
  std::fill(lo, lo + dims, FLT_MAX);
  std::fill(hi, hi + dims, -FLT_MAX);
  const long stride = std::max(1L, count / kClusterSample);
  long seen = 0;
  for (const int* i = first; i < last; ++i) {
    if (!pick(*i) || seen++ % stride != 0) continue;
    const float* row = rows + size_t(*i) * dims;
    for (size_t d = 0; d < dims; ++d) {
      lo[d] = row[d] < lo[d] ? row[d] : lo[d];
      hi[d] = row[d] > hi[d] ? row[d] : hi[d];
    }
  }
}

// The summed extent (over the dimensions, max - min) of about kClusterSample of the `count` items
// of [first, last) for which pick(item) holds: how loose a box around them is (0 for none).
template <class Pick>
float sampled_extent(const int* first, const int* last, long count, const float* rows, size_t dims, Pick pick) {
  if (count <= 0) return 0.0f;
  float lo[kMaxSearchDims], hi[kMaxSearchDims];
  sampled_bounds(first, last, count, rows, dims, pick, lo, hi);
  float sum = 0.0f;
  for (size_t d = 0; d < dims; ++d) sum += hi[d] - lo[d];
  return sum;
}

// The dimension in which about kClusterSample of the items [first, last) spread most.
size_t widest_dimension(const int* first, const int* last, const float* rows, size_t dims) {
  float lo[kMaxSearchDims], hi[kMaxSearchDims];
  sampled_bounds(first, last, long(last - first), rows, dims, [](int) { return true; }, lo, hi);
  size_t widest = 0;
  for (size_t d = 1; d < dims; ++d) {
    if (hi[d] - lo[d] > hi[widest] - lo[widest]) widest = d;
  }
  return widest;
}

// The summed extents of the two halves of [first, last) split at the median of dimension
// `widest` (estimated from about kClusterSample of them).
float feature_split_extent(const int* first, const int* last, const float* rows, size_t dims, size_t widest) {
  const long n = long(last - first);
  std::vector<float> sample;
  for (const int* i = first; i < last; i += std::max(1L, n / kClusterSample)) sample.push_back(rows[size_t(*i) * dims + widest]);
  std::nth_element(sample.begin(), sample.begin() + long(sample.size() / 2), sample.end());
  const float median = sample[sample.size() / 2];
  const auto below = [&](int i) { return rows[size_t(i) * dims + widest] < median; };
  const long lower = long(std::count_if(first, last, below));
  return sampled_extent(first, last, lower, rows, dims, below) +
         sampled_extent(first, last, n - lower, rows, dims, [&](int i) { return !below(i); });
}

// Where [first, last) (n items) splits by a tag into two runs of whole chunks (the first run
// without the tag), or -1 when no tag is held by at least half a chunk of them and missed by at
// least as many, or when every such tag's halves are looser than kTagSplitSlack x
// `feature_extent` (the halves of the feature split). The tag with the tightest halves wins.
long tag_split(int* first, int* last, int chunk, const float* rows, size_t dims, const TagMask* tags,
               float feature_extent) {
  const long n = long(last - first);
  TagMask some = 0, every = ~TagMask(0);
  for (const int* i = first; i < last; ++i) some |= tags[*i], every &= tags[*i];
  const TagMask mixed = some & ~every;
  if (mixed == 0) return -1;
  int candidates[kMaxTags], count = 0;
  for (int t = 0; t < kMaxTags; ++t) {
    if ((mixed >> t) & 1) candidates[count++] = t;
  }
  long held[kMaxTags] = {};
  for (const int* i = first; i < last; ++i) {
    for (int c = 0; c < count; ++c) held[c] += long((tags[*i] >> candidates[c]) & 1);
  }
  TagMask bit = 0;
  float tightest = kTagSplitSlack * feature_extent;
  for (int c = 0; c < count; ++c) {
    if (2 * std::min(held[c], n - held[c]) < chunk) continue;
    const TagMask b = TagMask(1) << candidates[c];
    const float extent = sampled_extent(first, last, held[c], rows, dims, [&](int i) { return (tags[i] & b) != 0; }) +
                         sampled_extent(first, last, n - held[c], rows, dims, [&](int i) { return (tags[i] & b) == 0; });
    if (extent <= tightest) tightest = extent, bit = b;
  }
  if (bit == 0) return -1;
  const long without = long(std::stable_partition(first, last, [&](int i) { return (tags[i] & bit) == 0; }) - first);
  const long nearest = (without + chunk / 2) / chunk * chunk, most = (n - 1) / chunk * chunk;
  return std::min(std::max(nearest, long(chunk)), most);
}

// Reorders the items [first, last) (indices of rows of `rows`, `dims` floats each) so that every
// run of `chunk` items from `first` is a cluster: halves split at a multiple of `chunk`,
// recursively (a k-d tree). The split is along the dimension in which (about kClusterSample of)
// the items spread most, at the median; with `tags` (per row, or null) a split apart of the
// items holding a tag from those that do not is taken instead when its halves are about as tight
// (tag_split), so that under a constraint whole boxes can be skipped. `keys` is scratch of at
// least last - first entries.
void cluster(int* first, int* last, int chunk, const float* rows, size_t dims, const TagMask* tags,
             std::vector<std::pair<float, int>>& keys) {
  const long n = long(last - first);
  if (n <= chunk) return;
  const size_t widest = widest_dimension(first, last, rows, dims);
  long middle = tags == nullptr ? -1
                                : tag_split(first, last, chunk, rows, dims, tags,
                                            feature_split_extent(first, last, rows, dims, widest));
  if (middle < 0) {
    for (long i = 0; i < n; ++i) keys[size_t(i)] = {rows[size_t(first[i]) * dims + widest], first[i]};
    middle = (n + chunk - 1) / chunk / 2 * chunk;
    std::nth_element(keys.begin(), keys.begin() + middle, keys.begin() + n);  // by value, then index
    for (long i = 0; i < n; ++i) first[i] = keys[size_t(i)].second;
  }
  cluster(first, first + middle, chunk, rows, dims, tags, keys);
  cluster(first + middle, last, chunk, rows, dims, tags, keys);
}

// cluster() into runs of sizes[0], each of them into runs of sizes[1], ... (a run's subruns
// before the next run, while its rows are in cache).
void cluster_levels(int* first, int* last, const int* sizes, size_t levels, const float* rows, size_t dims,
                    const TagMask* tags, std::vector<std::pair<float, int>>& keys) {
  if (levels == 0) return;
  cluster(first, last, sizes[0], rows, dims, tags, keys);
  for (int* run = first; run < last; run += std::min(long(sizes[0]), long(last - run))) {
    cluster_levels(run, std::min(last, run + sizes[0]), sizes + 1, levels - 1, rows, dims, tags, keys);
  }
}
}  // namespace

void FeatureSearch::build_layout(bool by_tags) {
  split_by_tags_ = by_tags;
  build_boxes(by_tags);
  build_tables();
  build_notes();
}

void FeatureSearch::build_boxes(bool by_tags) {
  using detail::kBlockFrames;
  using detail::kLargeGroup;
  using detail::kSmallPerLarge;
  const Database& db = *db_;
  // Order the frames by their features: the frames of each super group first, then of each group
  // within it, of each large box, of each small box.
  std::vector<int> order(size_t(db.frame_count()));
  for (size_t f = 0; f < order.size(); ++f) order[f] = int(f);
  const int sizes[] = {kBlockFrames * kSmallPerLarge * kLargeGroup * kLargeGroup,
                       kBlockFrames * kSmallPerLarge * kLargeGroup, kBlockFrames * kSmallPerLarge, kBlockFrames};
  std::vector<std::pair<float, int>> keys(order.size());
  const FrameAnnotations& annotations = db.annotations();
  std::vector<TagMask> tags;
  if (by_tags) {
    tags.resize(order.size());
    for (size_t f = 0; f < tags.size(); ++f) tags[f] = annotations.tags(int(f));
  }
  cluster_levels(order.data(), order.data() + order.size(), sizes, std::size(sizes), db.features(0), size_t(dims_),
                 tags.empty() ? nullptr : tags.data(), keys);
  std::vector<int> clip_stop(order.size());
  for (const DatabaseRange& r : db.ranges()) std::fill(clip_stop.begin() + r.start, clip_stop.begin() + r.stop, r.stop);
  const size_t smalls = (order.size() + kBlockFrames - 1) / kBlockFrames;
  frames_.assign(smalls * kBlockFrames, -1);
  frame_level_.reach.assign(frames_.size(), 0);
  small_level_.reach.assign(smalls, 0);
  large_level_.reach.assign((smalls + kSmallPerLarge - 1) / kSmallPerLarge, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    frames_[i] = order[i];
    frame_level_.reach[i] = clip_stop[size_t(order[i])] - order[i];
    int& small_reach = small_level_.reach[i / kBlockFrames];
    int& large_reach = large_level_.reach[i / kBlockFrames / kSmallPerLarge];
    small_reach = std::max(small_reach, frame_level_.reach[i]);
    large_reach = std::max(large_reach, frame_level_.reach[i]);
  }
}

void FeatureSearch::build_tables() {
  using detail::kBlockFrames;
  using detail::kLargeGroup;
  using detail::kSmallPerLarge;
  const Database& db = *db_;
  const size_t p = size_t(dims_);
  const size_t smalls = small_level_.reach.size(), larges = large_level_.reach.size();
  blocks_.assign(smalls * p * kBlockFrames, 0.0f);
  for (size_t i = 0; i < frames_.size() && frames_[i] >= 0; ++i) {
    float* column = &blocks_[i / kBlockFrames * p * kBlockFrames + i % kBlockFrames];
    for (int d = 0; d < dims_; ++d) column[size_t(d) * kBlockFrames] = db.features(frames_[i])[d];
  }
  small_min_.assign(larges * p * kSmallPerLarge, 0.0f);
  small_max_.assign(small_min_.size(), 0.0f);
  for (size_t s = 0; s < smalls; ++s) {
    const size_t at = s / kSmallPerLarge * p * kSmallPerLarge + s % kSmallPerLarge;
    const int count = int(std::count_if(&frames_[s * kBlockFrames], &frames_[s * kBlockFrames] + kBlockFrames,
                                        [](int f) { return f >= 0; }));
    block_bounds(&blocks_[s * p * kBlockFrames], dims_, count, &small_min_[at], &small_max_[at], kSmallPerLarge);
  }
  const size_t groups = (larges + kLargeGroup - 1) / kLargeGroup;
  large_min_.assign(groups * p * kLargeGroup, 0.0f);
  large_max_.assign(large_min_.size(), 0.0f);
  for (size_t l = 0; l < larges; ++l) {
    const size_t at = table_column(l, p), from = l * p * kSmallPerLarge;
    const size_t count = std::min(smalls - l * kSmallPerLarge, size_t(kSmallPerLarge));
    for (size_t d = 0; d < p; ++d) {
      const float* lo = &small_min_[from + d * kSmallPerLarge];
      const float* hi = &small_max_[from + d * kSmallPerLarge];
      large_min_[at + d * kLargeGroup] = *std::min_element(lo, lo + count);
      large_max_[at + d * kLargeGroup] = *std::max_element(hi, hi + count);
    }
  }
  // A group's bounds span its large boxes' and a super group's its groups' (possibly across
  // clips and excluded clip ends: still a lower bound of every searchable frame in it).
  merge_columns(large_min_, large_max_, large_level_.reach, p, group_min_, group_max_, group_level_.reach);
  merge_columns(group_min_, group_max_, group_level_.reach, p, super_min_, super_max_, super_level_.reach);
}

void FeatureSearch::BoxNotes::merge(const BoxNotes& child) {
  all |= child.all;
  any |= child.any;
  common &= child.common;
  bias = std::min(bias, child.bias);
  entry = entry || child.entry;
  held_by_every &= child.held_by_every;
  every_entry = every_entry && child.every_entry;
}

void FeatureSearch::build_notes() {
  const FrameAnnotations& annotations = db_->annotations();
  Level* const levels[] = {&frame_level_, &small_level_, &large_level_, &group_level_, &super_level_};
  for (Level* level : levels) level->notes.clear();
  has_bias_ = annotations.has_cost_bias();
  notes_always_ = has_bias_ || annotations.has_no_entry();
  if (!annotations.restricts_search()) return;
  frame_level_.notes.assign(frames_.size(), BoxNotes{});
  for (size_t i = 0; i < frames_.size() && frames_[i] >= 0; ++i) {
    const int frame = frames_[i], last = frame + std::min(look_ahead_, frame_level_.reach[i] - 1);
    BoxNotes& notes = frame_level_.notes[i];
    notes.all = ~TagMask(0);
    for (int f = frame; f <= last; ++f) {
      notes.all &= annotations.tags(f);
      notes.any |= annotations.tags(f);
    }
    notes.common = notes.any;
    notes.held_by_every = notes.all;
    notes.bias = annotations.cost_bias(frame);
    notes.every_entry = notes.entry = !annotations.no_entry(frame);
  }
  // Each level's boxes merge their children: 16 frames, 4 small boxes, 8 large boxes, 8 groups.
  const size_t children[] = {detail::kBlockFrames, detail::kSmallPerLarge, detail::kLargeGroup, detail::kLargeGroup};
  for (size_t l = 1; l < std::size(levels); ++l) {
    levels[l]->notes.assign(levels[l]->reach.size(), BoxNotes{});
    const std::vector<BoxNotes>& below = levels[l - 1]->notes;
    for (size_t i = 0; i < below.size(); ++i) levels[l]->notes[i / children[l - 1]].merge(below[i]);
  }
}

}  // namespace lmm
