#include "lmm/search.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "search_kernels.hpp"

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

// First excluded frame at the end of `range`.
int searchable_end(int start, int stop, const SearchParams& params) {
  return std::max(start, stop - excluded_frames(params));
}

// Offset of box `box`'s column in consecutive [dims][kLargeGroup] tables (large boxes or groups).
size_t table_column(size_t box, size_t dims) {
  return box / detail::kLargeGroup * dims * detail::kLargeGroup + box % detail::kLargeGroup;
}

// Sets min[d * stride] and max[d * stride], d < dims, to the bounds of frames [start, stop) of `db`.
void box_bounds(const Database& db, int dims, int start, int stop, float* min, float* max, int stride) {
  for (int d = 0; d < dims; ++d) {
    min[size_t(d) * stride] = FLT_MAX;
    max[size_t(d) * stride] = -FLT_MAX;
  }
  for (int f = start; f < stop; ++f) {
    const float* x = db.features(f);
    for (int d = 0; d < dims; ++d) {
      min[size_t(d) * stride] = std::min(min[size_t(d) * stride], x[d]);
      max[size_t(d) * stride] = std::max(max[size_t(d) * stride], x[d]);
    }
  }
}

}  // namespace

namespace detail {

SearchKernels search_kernels_scalar() {
  return {&box_bounds_scalar<kLargeGroup>, &box_bounds_scalar<kSmallPerLarge>, &block_costs_scalar};
}

}  // namespace detail

bool FeatureSearch::build(std::shared_ptr<const Database> database, std::string& error, KernelPath path) {
  if (database == nullptr) {
    error = "search: no database (null pointer)";
    return false;
  }
  const Database& db = *database;
  if (db.frame_count() == 0 || db.schema().dims == 0 || db.schema().dims > kMaxSearchDims) {
    error = "search: the database has no frames, no features or more than " +
            std::to_string(kMaxSearchDims) + " feature dimensions";
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
  kernels_ = kernels_for(path);
  dims_ = db.schema().dims;
  ranges_.clear();
  large_.clear();
  small_.clear();
  large_first_small_.clear();
  large_clip_stop_.clear();
  for (const DatabaseRange& r : db.ranges()) {
    RangeBoxes rb{r.start, r.stop, static_cast<int>(large_.size()), 0};
    for (int l = r.start; l < r.stop; l += kLargeBoxFrames) {
      large_.push_back(Box{l, std::min(l + kLargeBoxFrames, r.stop)});
      large_clip_stop_.push_back(r.stop);
      large_first_small_.push_back(static_cast<int>(small_.size()));
      for (int s = l; s < large_.back().stop; s += kSmallBoxFrames) {
        small_.push_back(Box{s, std::min(s + kSmallBoxFrames, r.stop)});
      }
      ++rb.large_count;
    }
    ranges_.push_back(rb);
  }
  large_first_small_.push_back(static_cast<int>(small_.size()));
  build_tables();
  return true;
}

void FeatureSearch::build_tables() {
  using detail::kBlockFrames;
  using detail::kLargeGroup;
  using detail::kSmallPerLarge;
  const Database& db = *db_;
  const size_t p = size_t(dims_);
  blocks_.assign(small_.size() * p * kBlockFrames, 0.0f);
  for (size_t s = 0; s < small_.size(); ++s) {
    for (int f = small_[s].start; f < small_[s].stop; ++f) {
      float* column = &blocks_[s * p * kBlockFrames + size_t(f - small_[s].start)];
      for (int d = 0; d < dims_; ++d) column[size_t(d) * kBlockFrames] = db.features(f)[d];
    }
  }
  small_min_.assign(large_.size() * p * kSmallPerLarge, 0.0f);
  small_max_.assign(small_min_.size(), 0.0f);
  for (size_t l = 0; l < large_.size(); ++l) {
    for (int s = large_first_small_[l]; s < large_first_small_[l + 1]; ++s) {
      const size_t at = l * p * kSmallPerLarge + size_t(s - large_first_small_[l]);
      box_bounds(db, dims_, small_[size_t(s)].start, small_[size_t(s)].stop, &small_min_[at], &small_max_[at], kSmallPerLarge);
    }
  }
  const size_t groups = (large_.size() + kLargeGroup - 1) / kLargeGroup;
  large_min_.assign(groups * p * kLargeGroup, 0.0f);
  large_max_.assign(large_min_.size(), 0.0f);
  for (size_t l = 0; l < large_.size(); ++l) {
    const size_t at = table_column(l, p);
    box_bounds(db, dims_, large_[l].start, large_[l].stop, &large_min_[at], &large_max_[at], kLargeGroup);
  }
  // A group's bounds span its large boxes' (possibly across clips and excluded clip ends: still
  // a lower bound of every searchable frame in it).
  group_min_.assign((groups + kLargeGroup - 1) / kLargeGroup * p * kLargeGroup, 0.0f);
  group_max_.assign(group_min_.size(), 0.0f);
  group_reach_.assign(groups, 0);
  for (size_t l = 0; l < large_.size(); ++l) {
    const size_t g = l / kLargeGroup, from = table_column(l, p), to = table_column(g, p);
    const bool first = l % kLargeGroup == 0;
    group_reach_[g] = std::max(group_reach_[g], large_clip_stop_[l] - large_[l].start);
    for (size_t row = 0; row < p * kLargeGroup; row += kLargeGroup) {
      group_min_[to + row] = first ? large_min_[from + row] : std::min(group_min_[to + row], large_min_[from + row]);
      group_max_[to + row] = first ? large_max_[from + row] : std::max(group_max_[to + row], large_max_[from + row]);
    }
  }
}

float FeatureSearch::frame_cost(const float* query, int frame) const {
  return squared_distance(query, db_->features(frame), dims_);
}

SearchScratch FeatureSearch::make_scratch() const {
  SearchScratch scratch;
  scratch.group_bounds.assign(group_min_.size() / size_t(std::max(1, dims_)), 0.0f);
  return scratch;
}

void FeatureSearch::search_large_box(const float* q, int current_frame, const SearchParams& params, int l,
                                     int end, SearchResult* out, int k, int& found) const {
  using detail::kBlockFrames;
  using detail::kSmallPerLarge;
  const size_t p = size_t(dims_);
  const float base = params.transition_cost;
  float bounds[kSmallPerLarge], costs[kBlockFrames];
  const size_t group = size_t(l) * p * kSmallPerLarge;
  kernels_.small_bounds(q, dims_, &small_min_[group], &small_max_[group], bounds);
  const int first = large_first_small_[size_t(l)];
  for (int s = first; s < large_first_small_[size_t(l) + 1]; ++s) {
    const Box& small = small_[size_t(s)];
    if (small.start >= end) return;
    if (base + bounds[s - first] > kth_cost(out, k, found, params)) continue;
    kernels_.block_costs(q, dims_, &blocks_[size_t(s) * p * kBlockFrames], costs);
    for (int f = small.start; f < std::min(small.stop, end); ++f) {
      const float cost = base + costs[f - small.start];
      if (cost > kth_cost(out, k, found, params) || skipped(f, current_frame, params)) continue;
      insert_sorted(out, k, found, f, cost);
    }
  }
}

int FeatureSearch::group_bounds(const float* q, const SearchParams& params, float* bounds) const {
  const size_t table = size_t(dims_) * detail::kLargeGroup;
  for (size_t t = 0; t * table < group_min_.size(); ++t) {
    kernels_.large_bounds(q, dims_, &group_min_[t * table], &group_max_[t * table], &bounds[t * detail::kLargeGroup]);
  }
  const int excluded = excluded_frames(params);
  int best = -1;
  for (int g = 0; g < static_cast<int>(group_reach_.size()); ++g) {
    bounds[g] += params.transition_cost;
    if (group_reach_[size_t(g)] > excluded && (best < 0 || bounds[g] < bounds[best])) best = g;
  }
  return best;
}

void FeatureSearch::search_group(const float* q, int current_frame, const SearchParams& params, int g,
                                 SearchResult* out, int k, int& found) const {
  using detail::kLargeGroup;
  const size_t at = size_t(g) * size_t(dims_) * kLargeGroup;
  float bounds[kLargeGroup];
  kernels_.large_bounds(q, dims_, &large_min_[at], &large_max_[at], bounds);
  // Every searchable large box of the group (its clip's excluded end starts after its first
  // frame) that can still hold a better frame, in index order (visiting them by ascending bound
  // saved few boxes and cost more than it saved).
  const int excluded = excluded_frames(params);
  const int last = std::min(static_cast<int>(large_.size()), (g + 1) * kLargeGroup);
  for (int l = g * kLargeGroup; l < last; ++l) {
    const int end = large_clip_stop_[size_t(l)] - excluded;
    if (end <= large_[size_t(l)].start || params.transition_cost + bounds[l - g * kLargeGroup] > kth_cost(out, k, found, params)) continue;
    search_large_box(q, current_frame, params, l, end, out, k, found);
  }
}

int FeatureSearch::start(const float* query, int current_frame, const SearchParams& params, float* q,
                         SearchResult* out, int k) const {
  std::copy(query, query + dims_, q);
  int found = 0;
  for (int d = 0; d < dims_; ++d) {
    if (!std::isfinite(q[d])) return -1;  // no answer for a non-finite query
  }
  if (current_frame >= 0 && current_frame < db_->frame_count()) {
    const float cost = frame_cost(q, current_frame);
    if (cost <= params.max_cost) insert_sorted(out, k, found, current_frame, cost);
  }
  return found;
}

int FeatureSearch::search(const float* query, int current_frame, const SearchParams& params, SearchResult* out,
                          int k, SearchScratch& scratch) const {
  if (db_ == nullptr || k <= 0 || scratch.group_bounds.size() != group_min_.size() / size_t(dims_)) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, params, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  // Pass 1: the bound of every group; pass 2: the most promising group first (a tight bound
  // early), then every searchable group that can still hold a better frame.
  float* bounds = scratch.group_bounds.data();
  const int best = group_bounds(q, params, bounds);
  if (best < 0) return found;
  search_group(q, current_frame, params, best, out, k, found);
  const int excluded = excluded_frames(params);
  for (int g = 0; g < static_cast<int>(group_reach_.size()); ++g) {
    if (g == best || group_reach_[size_t(g)] <= excluded || bounds[g] > kth_cost(out, k, found, params)) continue;
    search_group(q, current_frame, params, g, out, k, found);
  }
  return found;
}

int FeatureSearch::brute_force(const float* query, int current_frame, const SearchParams& params,
                               SearchResult* out, int k) const {
  if (db_ == nullptr || k <= 0) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, params, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  // Every frame, a block at a time through the portable kernel.
  float costs[detail::kBlockFrames];
  for (const RangeBoxes& range : ranges_) {
    const int end = searchable_end(range.start, range.stop, params);
    const int last_small = large_first_small_[size_t(range.first_large + range.large_count)];
    for (int s = large_first_small_[size_t(range.first_large)]; s < last_small && small_[size_t(s)].start < end; ++s) {
      block_costs_scalar(q, dims_, &blocks_[size_t(s) * size_t(dims_) * detail::kBlockFrames], costs);
      for (int f = small_[size_t(s)].start; f < std::min(small_[size_t(s)].stop, end); ++f) {
        const float cost = params.transition_cost + costs[f - small_[size_t(s)].start];
        if (!skipped(f, current_frame, params) && cost <= params.max_cost) insert_sorted(out, k, found, f, cost);
      }
    }
  }
  return found;
}

}  // namespace lmm
