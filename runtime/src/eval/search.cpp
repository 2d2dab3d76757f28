#include "lmm/eval/search.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "eval/search_kernels.hpp"
#include "lmm/eval/kernel_support.hpp"

namespace lmm {
namespace {

// True when (cost, frame) orders before `r`: lower cost, or equal cost and lower frame.
bool before(float cost, int frame, const SearchResult& r) {
  return cost < r.cost || (cost == r.cost && frame < r.frame);
}

// Inserts (frame, cost) into the list out[0..found) of at most k entries, kept sorted by
// (cost, frame), so the final list is the k smallest pairs whatever the visiting order.
void insert_sorted(SearchResult* out, int k, int& found, int frame, float cost) {
  if (found == k && !before(cost, frame, out[k - 1])) return;
  int i = found < k ? found++ : k - 1;
  while (i > 0 && before(cost, frame, out[i - 1])) {
    out[i] = out[i - 1];
    --i;
  }
  out[i] = SearchResult{frame, cost};
}

// Pruning bound: a box whose lower bound exceeds the k-th cost cannot contribute (equal
// bounds are kept, as an equal cost with a lower frame index would still enter the list).
// params.max_cost (by default infinite: nothing is pruned, not even infinite costs) while the
// list is not full.
float kth_cost(const SearchResult* out, int k, int found, const SearchParams& params) {
  return found < k ? params.max_cost : out[k - 1].cost;
}

// The kSearchLanes lanes of one distance, `stride` floats apart, combined in a fixed order (the
// order of an AVX2 horizontal sum).
float combine_lanes(const float* lanes, int stride) {
  const auto lane = [&](int l) { return lanes[l * stride]; };
  return ((lane(0) + lane(4)) + (lane(1) + lane(5))) + ((lane(2) + lane(6)) + (lane(3) + lane(7)));
}
static_assert(kSearchLanes == 8, "combine_lanes combines exactly eight lanes");

// Squared distance of two vectors of `dims` values, dimension d summed into lane d mod
// kSearchLanes then combined in a fixed order: the same bits as every kernel path's frame costs.
float squared_distance(const float* a, const float* b, int dims) {
  float lanes[kSearchLanes] = {};
  int d = 0;
  for (; d + kSearchLanes <= dims; d += kSearchLanes) {
    for (int l = 0; l < kSearchLanes; ++l) {
      const float t = a[d + l] - b[d + l];
      lanes[l] += t * t;
    }
  }
  for (int l = 0; l < kSearchLanes; ++l) {  // the last, partial group: a missing dimension adds +0
    const float t = d + l < dims ? a[d + l] - b[d + l] : 0.0f;
    lanes[l] += t * t;
  }
  return combine_lanes(lanes, 1);
}

// The portable kernels: W columns of a structure-of-arrays table with rows `stride` floats apart,
// out[j] = sum over d of (q[d] - clamp(q[d], lo[d][j], hi[d][j]))^2 (with Clamp; else
// (q[d] - lo[d][j])^2), in lanes like squared_distance. With Clamp every term is at most the
// matching term of any vector inside the box, so the sum is an exact lower bound of its costs.
template <int W, bool Clamp>
void lane_sums(const float* q, int dims, const float* lo, const float* hi, int stride, float* out) {
  float lanes[kSearchLanes][W] = {};
  for (int d = 0; d < dims; ++d) {
    const size_t row = size_t(d) * size_t(stride);
    float* lane = lanes[d % kSearchLanes];
    for (int j = 0; j < W; ++j) {
      const float x = Clamp ? std::min(std::max(q[d], lo[row + j]), hi[row + j]) : lo[row + j];
      const float t = q[d] - x;
      lane[j] += t * t;
    }
  }
  for (int j = 0; j < W; ++j) out[j] = combine_lanes(&lanes[0][j], W);
}

template <int W>
void box_bounds_scalar(const float* q, int dims, const float* min, const float* max, float* out) {
  lane_sums<W, true>(q, dims, min, max, W, out);
}

void block_costs_scalar(const float* q, int dims, const float* block, float* out) {
  lane_sums<detail::kBlockFrames, false>(q, dims, block, block, detail::kBlockFrames, out);
}

// The kernels of `path` (Auto already resolved); null kernels when this build has none.
detail::SearchKernels kernels_for(KernelPath path) {
  switch (path) {
    case KernelPath::Avx512: return detail::search_kernels_avx512();
    case KernelPath::Avx2: return detail::search_kernels_avx2();
    default: return detail::search_kernels_scalar();
  }
}

// Whether this build and CPU can run `path` (Auto already resolved).
bool path_available(KernelPath path) {
  const std::vector<KernelPath> paths = available_kernel_paths();
  return std::find(paths.begin(), paths.end(), path) != paths.end() && kernels_for(path).block_costs != nullptr;
}

// The current frame is a candidate once (without transition cost), never again in the scan.
bool skipped(int frame, int current_frame, const SearchParams& params) {
  return current_frame >= 0 && (frame == current_frame || std::abs(frame - current_frame) < params.ignore_surrounding);
}

// Frames excluded at the end of each clip.
int excluded_frames(const SearchParams& params) { return std::max(0, params.ignore_range_end); }

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

// The layout split by tags is kept when the search a character makes without a constraint costs
// at most this much of the feature layout's (FeatureSearch::build): on all of bandai-loco the
// tags of walk, run, turn and sides split it at 0.8 yet slowed that search 1.07-1.11x
// (docs/lab/2026-12-07-search-layout-probe.md); on normal + bandai-actions the split layout is the
// faster one for it too.
constexpr double kTagLayoutSlack = 1.02;
constexpr int kLayoutProbes = 256;  // probe queries per layout

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

namespace detail {

SearchKernels search_kernels_scalar() {
  return {&box_bounds_scalar<kLargeGroup>, &box_bounds_scalar<kSmallPerLarge>, &block_costs_scalar};
}

}  // namespace detail

bool FeatureSearch::steers(const std::shared_ptr<const Database>& db, const std::string& purpose,
                           std::string& error) const {
  if (db == nullptr) {
    error = "no database (null pointer)";
  } else if (db->frame_count() == 0) {
    error = "database has no frames";
  } else if (db_ != db) {
    error = "the search index was not built over this database (" + std::to_string(dims_) + " feature dims, database has " +
            std::to_string(db->schema().dims) + ")";
  } else if (db->schema().trajectory_offsets.empty()) {
    error = "feature schema '" + db->schema().name + "' has no trajectory groups " + purpose;
  } else {
    return true;
  }
  return false;
}

bool FeatureSearch::build(std::shared_ptr<const Database> database, std::string& error, KernelPath path) {
  if (database == nullptr) {
    error = "search: no database (null pointer)";
    return false;
  }
  const Database& db = *database;
  if (db.frame_count() == 0 || db.schema().dims == 0 || db.schema().dims > kMaxSearchDims) {
    error = "search: the database has no frames, no features or more than " + std::to_string(kMaxSearchDims) +
            " feature dimensions";
    return false;
  }
  if (path == KernelPath::Auto) path = available_kernel_paths().back();
  if (!path_available(path)) {
    error = std::string("search: kernel path '") + kernel_path_name(path) +
            "' is not available on this build and CPU (use auto or scalar)";
    return false;
  }
  db_ = database;
  path_ = path;
  const detail::SearchKernels kernels = kernels_for(path);
  large_bounds_ = kernels.large_bounds, small_bounds_ = kernels.small_bounds, block_costs_ = kernels.block_costs;
  dims_ = db.schema().dims;
  const std::vector<int>& offsets = db.schema().trajectory_offsets;
  look_ahead_ = offsets.empty() ? 0 : std::max(0, *std::max_element(offsets.begin(), offsets.end()));
  build_layout(db.annotations().restricts_search());
  if (!db.annotations().restricts_search()) return true;
  // A layout split by tags helps constrained searches but may slow the search a character makes
  // without a constraint; it is kept only when that search costs at most kTagLayoutSlack of the
  // feature layout's (measured with probe queries).
  FeatureSearch by_features = *this;
  by_features.build_layout(false);
  if (double(probe_work()) > kTagLayoutSlack * double(by_features.probe_work())) *this = std::move(by_features);
  return true;
}

void FeatureSearch::build_layout(bool by_tags) {
  split_by_tags_ = by_tags;
  build_boxes(by_tags);
  build_tables();
  build_notes();
}

long FeatureSearch::probe_work() const {
  const Database& db = *db_;
  std::vector<bool> trajectory(size_t(dims_), false);
  for (const FeatureGroup& g : db.schema().groups) {
    if (!is_trajectory_kind(g.kind)) continue;
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); ++d) trajectory[size_t(d)] = true;
  }
  SearchParams params;
  params.constraint = TagConstraint{}.keeping_out(db.annotations().kept_out_tags());
  SearchScratch scratch = make_scratch();
  std::vector<float> query(static_cast<size_t>(dims_));
  SearchResult out[1];
  long work = 0;
  const uint64_t frames = uint64_t(db.frame_count());
  for (uint64_t i = 0; i < uint64_t(kLayoutProbes); ++i) {
    const int pose = int(i * 2654435761u % frames), path = int((i * 40503u + 12345u) % frames);
    for (size_t d = 0; d < query.size(); ++d) query[d] = db.features(trajectory[d] ? path : pose)[d];
    search_counted(query.data(), pose, params, out, 1, scratch, &work);
  }
  return work;
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

float FeatureSearch::frame_cost(const float* query, int frame) const {
  return squared_distance(query, db_->features(frame), dims_);
}

SearchScratch FeatureSearch::make_scratch() const {
  SearchScratch scratch;
  scratch.super_bounds.assign(super_min_.size() / size_t(std::max(1, dims_)), 0.0f);
  return scratch;
}

bool FeatureSearch::entry_allowed(int frame, int reach, const TagConstraint& constraint) const {
  const FrameAnnotations& annotations = db_->annotations();
  if (annotations.no_entry(frame)) return false;
  if (constraint.allows_all()) return true;
  const int last = frame + std::min(look_ahead_, reach - 1);
  for (int f = frame; f <= last; ++f) {
    if (!constraint.allows(annotations.tags(f))) return false;
  }
  return true;
}

bool FeatureSearch::entry_allowed(int frame, const TagConstraint& constraint) const {
  if (frame < 0 || frame >= db_->frame_count()) return false;
  return entry_allowed(frame, db_->ranges()[size_t(clip_index(*db_, frame))].stop - frame, constraint);
}

bool FeatureSearch::annotated_frame_allowed(size_t i, const SearchParams& params) const {
  const BoxNotes& notes = frame_level_.notes[i];
  const TagConstraint& constraint = params.constraint;
  // The summary decides but for a require_any of several tags none of which is held throughout.
  return notes.may_hold(constraint) && (constraint.require_any == 0 || (notes.all & constraint.require_any) != 0 ||
                                        entry_allowed(frames_[i], frame_level_.reach[i], constraint));
}

template <class Bias, class Allowed>
void FeatureSearch::scan_block(int current_frame, const SearchParams& params, size_t first, const float* costs,
                               SearchResult* out, int k, int& found, const Bias& bias, const Allowed& allowed) const {
  const int excluded = excluded_frames(params);
  const float transition = params.transition_cost;
  const int* frames = frames_.data() + first;
  const int* reach = frame_level_.reach.data() + first;
  for (size_t i = 0; i < size_t(detail::kBlockFrames); ++i) {
    const float cost = transition + costs[i] + bias(first + i);
    if (reach[i] <= excluded || cost > kth_cost(out, k, found, params) || skipped(frames[i], current_frame, params) ||
        !allowed(first + i)) {
      continue;
    }
    insert_sorted(out, k, found, frames[i], cost);
  }
}

void FeatureSearch::search_block(int current_frame, const SearchParams& params, int s, const float* costs,
                                 SearchResult* out, int k, int& found) const {
  const size_t first = size_t(s) * detail::kBlockFrames;
  const bool annotated = uses_notes(params) && !small_level_.notes[size_t(s)].allows_every(params.constraint);
  if (!annotated && !has_bias_) {  // the loop of a database without annotations
    scan_block(current_frame, params, first, costs, out, k, found, [](size_t) { return 0.0f; },
               [](size_t) { return true; });
    return;
  }
  scan_block(
      current_frame, params, first, costs, out, k, found,
      [&](size_t i) { return has_bias_ ? frame_level_.notes[i].bias : 0.0f; },
      [&](size_t i) { return !annotated || annotated_frame_allowed(i, params); });
}

void FeatureSearch::search_large_box(const float* q, int current_frame, const SearchParams& params, const BoxTest& test,
                                     int l, SearchResult* out, int k, int& found) const {
  using detail::kBlockFrames;
  using detail::kSmallPerLarge;
  const size_t p = size_t(dims_);
  float bounds[kSmallPerLarge], costs[kBlockFrames];
  const size_t table = size_t(l) * p * kSmallPerLarge;
  small_bounds_(q, dims_, &small_min_[table], &small_max_[table], bounds);
  if (test.work != nullptr) *test.work += long(2 * p * kSmallPerLarge);
  const int first = l * kSmallPerLarge;
  const int last = std::min(static_cast<int>(small_level_.reach.size()), first + kSmallPerLarge);
  test.add_biases(small_level_, first, last, bounds);
  for (int s = first; s < last; ++s) {
    if (!test.searchable(small_level_, size_t(s)) || test.transition + bounds[s - first] > kth_cost(out, k, found, params)) {
      continue;
    }
    block_costs_(q, dims_, &blocks_[size_t(s) * p * kBlockFrames], costs);
    if (test.work != nullptr) *test.work += long(p * kBlockFrames);
    search_block(current_frame, params, s, costs, out, k, found);
  }
}

int FeatureSearch::searchable_children(float* bounds, const BoxTest& test, const Level& level, int first,
                                       int last) const {
  int best = -1;
  test.add_biases(level, first, last, bounds);
  for (int i = first; i < last; ++i) {
    bounds[i - first] += test.transition;
    if (test.searchable(level, size_t(i)) && (best < 0 || bounds[i - first] < bounds[best - first])) best = i;
  }
  return best;
}

template <class Search>
void FeatureSearch::search_children(const float* bounds, const SearchParams& params, const BoxTest& test,
                                    const Level& level, int first, int last, int best, const SearchResult* out, int k,
                                    const int& found, const Search& search_child) const {
  if (best < 0) return;
  if (!(bounds[best - first] > kth_cost(out, k, found, params))) search_child(best);
  for (int i = first; i < last; ++i) {
    if (i == best || bounds[i - first] > kth_cost(out, k, found, params) || !test.searchable(level, size_t(i))) {
      continue;
    }
    search_child(i);
  }
}

template <class Search>
void FeatureSearch::search_boxes(const float* q, const SearchParams& params, const BoxTest& test, int node,
                                 const std::vector<float>& mins, const std::vector<float>& maxs, const Level& level,
                                 SearchResult* out, int k, int& found, const Search& search_child) const {
  using detail::kLargeGroup;
  const size_t at = size_t(node) * size_t(dims_) * kLargeGroup;
  float bounds[kLargeGroup];
  large_bounds_(q, dims_, &mins[at], &maxs[at], bounds);
  if (test.work != nullptr) *test.work += long(2 * size_t(dims_) * kLargeGroup);
  const int first = node * kLargeGroup, last = std::min(static_cast<int>(level.reach.size()), first + kLargeGroup);
  const int best = searchable_children(bounds, test, level, first, last);
  search_children(bounds, params, test, level, first, last, best, out, k, found, search_child);
}

void FeatureSearch::search_super(const float* q, int current_frame, const SearchParams& params, const BoxTest& test,
                                 int u, SearchResult* out, int k, int& found) const {
  search_boxes(q, params, test, u, group_min_, group_max_, group_level_, out, k, found,
               [&](int g) { search_group(q, current_frame, params, test, g, out, k, found); });
}

void FeatureSearch::search_group(const float* q, int current_frame, const SearchParams& params, const BoxTest& test,
                                 int g, SearchResult* out, int k, int& found) const {
  search_boxes(q, params, test, g, large_min_, large_max_, large_level_, out, k, found,
               [&](int l) { search_large_box(q, current_frame, params, test, l, out, k, found); });
}

int FeatureSearch::start(const float* query, int current_frame, const SearchParams& params, float* q, SearchResult* out,
                         int k) const {
  std::copy(query, query + dims_, q);
  int found = 0;
  for (int d = 0; d < dims_; ++d) {
    if (!std::isfinite(q[d])) return -1;  // no answer for a non-finite query
  }
  const FrameAnnotations& annotations = db_->annotations();
  if (current_frame >= 0 && current_frame < db_->frame_count() &&
      params.constraint.allows(annotations.tags(current_frame))) {
    const float cost = frame_cost(q, current_frame) + annotations.cost_bias(current_frame);
    if (cost <= params.max_cost) insert_sorted(out, k, found, current_frame, cost);
  }
  return found;
}

int FeatureSearch::search(const float* query, int current_frame, const SearchParams& params, SearchResult* out, int k,
                          SearchScratch& scratch) const {
  return search_counted(query, current_frame, params, out, k, scratch, nullptr);
}

int FeatureSearch::search_counted(const float* query, int current_frame, const SearchParams& params, SearchResult* out,
                                  int k, SearchScratch& scratch, long* work) const {
  if (db_ == nullptr || k <= 0 || scratch.super_bounds.size() != super_min_.size() / size_t(dims_)) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, params, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  // Pass 1: the bound of every super group; pass 2: the most promising one first (a tight bound
  // early), then every searchable super group that can still hold a better frame.
  float* bounds = scratch.super_bounds.data();
  const size_t table = size_t(dims_) * detail::kLargeGroup;
  for (size_t t = 0; t * table < super_min_.size(); ++t) {
    large_bounds_(q, dims_, &super_min_[t * table], &super_max_[t * table], &bounds[t * detail::kLargeGroup]);
  }
  const int supers = static_cast<int>(super_level_.reach.size());
  const BoxTest test = box_test(params, work);
  const int best = searchable_children(bounds, test, super_level_, 0, supers);
  search_children(bounds, params, test, super_level_, 0, supers, best, out, k, found,
                  [&](int u) { search_super(q, current_frame, params, test, u, out, k, found); });
  return found;
}

int FeatureSearch::brute_force(const float* query, int current_frame, const SearchParams& params, SearchResult* out,
                               int k) const {
  if (db_ == nullptr || k <= 0) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, params, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  // Every frame, a block at a time through the portable kernel (with its own test of each frame,
  // independent of search_block's).
  const FrameAnnotations& annotations = db_->annotations();
  const bool annotated = annotations.has_cost_bias() || annotations.has_no_entry() || !params.constraint.allows_all();
  float costs[detail::kBlockFrames];
  for (size_t s = 0; s < small_level_.reach.size(); ++s) {
    block_costs_scalar(q, dims_, &blocks_[s * size_t(dims_) * detail::kBlockFrames], costs);
    for (size_t i = s * detail::kBlockFrames; i < (s + 1) * detail::kBlockFrames; ++i) {
      const int frame = frames_[i], reach = frame_level_.reach[i];
      if (reach <= excluded_frames(params) || skipped(frame, current_frame, params)) continue;
      float cost = params.transition_cost + costs[i % detail::kBlockFrames];
      if (annotated) cost += annotations.cost_bias(frame);
      if (cost <= params.max_cost && (!annotated || entry_allowed(frame, reach, params.constraint))) {
        insert_sorted(out, k, found, frame, cost);
      }
    }
  }
  return found;
}

}  // namespace lmm
