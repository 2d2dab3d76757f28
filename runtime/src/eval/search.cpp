// FeatureSearch: its queries (the boxes bounded level by level, the frames of the boxes that may
// hold an answer), brute force, and build, which picks the layout (search_layout.cpp) by probes.
#include "lmm/eval/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

// The layout split by tags is kept when the search a character makes without a constraint costs
// at most this much of the feature layout's (FeatureSearch::build): on all of bandai-loco the
// tags of walk, run, turn and sides split it at 0.8 yet slowed that search 1.07-1.11x
// (docs/lab/2026-12-07-search-layout-probe.md); on normal + bandai-actions the split layout is the
// faster one for it too.
constexpr double kTagLayoutSlack = 1.02;
constexpr int kLayoutProbes = 256;  // probe queries per layout

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
  use(database, path);
  const bool by_tags = db.annotations().restricts_search();
  build_layout(by_tags);
  if (!by_tags) return true;
  // A layout split by tags helps constrained searches but may slow the search a character makes
  // without a constraint; it is kept only when that search costs at most kTagLayoutSlack of the
  // feature layout's (measured with probe queries).
  FeatureSearch by_features;
  by_features.use(database, path);
  by_features.build_layout(false);
  if (double(probe_work()) > kTagLayoutSlack * double(by_features.probe_work())) *this = std::move(by_features);
  return true;
}

void FeatureSearch::use(std::shared_ptr<const Database> database, KernelPath path) {
  db_ = std::move(database);
  path_ = path;
  const detail::SearchKernels kernels = kernels_for(path);
  large_bounds_ = kernels.large_bounds, small_bounds_ = kernels.small_bounds, block_costs_ = kernels.block_costs;
  dims_ = db_->schema().dims;
  const std::vector<int>& offsets = db_->schema().trajectory_offsets;
  look_ahead_ = offsets.empty() ? 0 : std::max(0, *std::max_element(offsets.begin(), offsets.end()));
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
