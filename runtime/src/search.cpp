#include "lmm/search.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

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
// Infinite while the list is not full, so nothing is pruned then (not even infinite costs).
float kth_cost(const SearchResult* out, int k, int found) {
  return found < k ? INFINITY : out[k - 1].cost;
}

// Squared distance of two padded vectors, summed in kSearchLanes lanes then combined in a
// fixed order, so the accelerated and brute-force paths agree to the last bit.
float squared_distance(const float* a, const float* b, int padded_dims) {
  float lanes[kSearchLanes] = {};
  for (int i = 0; i < padded_dims; i += kSearchLanes) {
    for (int l = 0; l < kSearchLanes; ++l) {
      const float d = a[i + l] - b[i + l];
      lanes[l] += d * d;
    }
  }
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}
static_assert(kSearchLanes == 8, "the final sums above combine exactly eight lanes");

// Squared distance from a padded query to a box, summed like squared_distance: every lane term
// is at most the matching term of any frame inside the box, so the result is a lower bound of
// every frame cost in the box, exactly, in floating point.
float box_distance(const float* q, const float* min, const float* max, int padded_dims) {
  float lanes[kSearchLanes] = {};
  for (int i = 0; i < padded_dims; i += kSearchLanes) {
    for (int l = 0; l < kSearchLanes; ++l) {
      const float d = q[i + l] - std::min(std::max(q[i + l], min[i + l]), max[i + l]);
      lanes[l] += d * d;
    }
  }
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// The current frame is a candidate once (without transition cost), never again in the scan.
bool skipped(int frame, int current_frame, const SearchParams& params) {
  return current_frame >= 0 && (frame == current_frame || std::abs(frame - current_frame) < params.ignore_surrounding);
}

// First excluded frame at the end of `range`.
int searchable_end(int start, int stop, const SearchParams& params) {
  return std::max(start, stop - std::max(0, params.ignore_range_end));
}

// Sets [min, max] rows (padded_dims wide) to the bounds of rows [start, stop) of `features`.
void box_bounds(const std::vector<float>& features, int padded_dims, int start, int stop, float* min, float* max) {
  for (int d = 0; d < padded_dims; ++d) {
    min[d] = FLT_MAX;
    max[d] = -FLT_MAX;
  }
  for (int f = start; f < stop; ++f) {
    const float* x = &features[size_t(f) * padded_dims];
    for (int d = 0; d < padded_dims; ++d) {
      min[d] = std::min(min[d], x[d]);
      max[d] = std::max(max[d], x[d]);
    }
  }
}

}  // namespace

bool FeatureSearch::build(std::shared_ptr<const Database> database, std::string& error) {
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
  db_ = database;
  dims_ = db.schema().dims;
  padded_dims_ = (dims_ + kSearchLanes - 1) / kSearchLanes * kSearchLanes;
  features_.assign(size_t(db.frame_count()) * padded_dims_, 0.0f);
  for (int f = 0; f < db.frame_count(); ++f) {
    std::copy(db.features(f), db.features(f) + dims_, &features_[size_t(f) * padded_dims_]);
  }
  ranges_.clear();
  large_.clear();
  small_.clear();
  large_first_small_.clear();
  for (const DatabaseRange& r : db.ranges()) {
    RangeBoxes rb{r.start, r.stop, static_cast<int>(large_.size()), 0};
    for (int l = r.start; l < r.stop; l += kLargeBoxFrames) {
      large_.push_back(Box{l, std::min(l + kLargeBoxFrames, r.stop)});
      large_first_small_.push_back(static_cast<int>(small_.size()));
      for (int s = l; s < large_.back().stop; s += kSmallBoxFrames) {
        small_.push_back(Box{s, std::min(s + kSmallBoxFrames, r.stop)});
      }
      ++rb.large_count;
    }
    ranges_.push_back(rb);
  }
  large_first_small_.push_back(static_cast<int>(small_.size()));
  const size_t p = size_t(padded_dims_);
  small_min_.resize(small_.size() * p);
  small_max_.resize(small_.size() * p);
  large_min_.resize(large_.size() * p);
  large_max_.resize(large_.size() * p);
  for (size_t i = 0; i < small_.size(); ++i) {
    box_bounds(features_, padded_dims_, small_[i].start, small_[i].stop, &small_min_[i * p], &small_max_[i * p]);
  }
  for (size_t i = 0; i < large_.size(); ++i) {
    box_bounds(features_, padded_dims_, large_[i].start, large_[i].stop, &large_min_[i * p], &large_max_[i * p]);
  }
  return true;
}

float FeatureSearch::frame_cost(const float* padded_query, int frame) const {
  return squared_distance(padded_query, &features_[size_t(frame) * padded_dims_], padded_dims_);
}

SearchScratch FeatureSearch::make_scratch() const {
  SearchScratch scratch;
  scratch.large_bounds.assign(large_.size(), 0.0f);
  return scratch;
}

int FeatureSearch::searchable_large_count(const RangeBoxes& range, int end) const {
  int count = 0;
  while (count < range.large_count && large_[size_t(range.first_large + count)].start < end) ++count;
  return count;
}

void FeatureSearch::search_large_box(const float* q, int current_frame, const SearchParams& params, int l,
                                     int end, SearchResult* out, int k, int& found) const {
  const size_t p = size_t(padded_dims_);
  const float base = params.transition_cost;
  for (int s = large_first_small_[size_t(l)]; s < large_first_small_[size_t(l) + 1]; ++s) {
    const Box& small = small_[size_t(s)];
    if (small.start >= end) return;
    if (base + box_distance(q, &small_min_[size_t(s) * p], &small_max_[size_t(s) * p], padded_dims_) >
        kth_cost(out, k, found)) {
      continue;
    }
    for (int f = small.start; f < std::min(small.stop, end); ++f) {
      if (!skipped(f, current_frame, params)) insert_sorted(out, k, found, f, base + frame_cost(q, f));
    }
  }
}

int FeatureSearch::start(const float* query, int current_frame, float* q, SearchResult* out, int k) const {
  std::copy(query, query + dims_, q);
  int found = 0;
  for (int d = 0; d < dims_; ++d) {
    if (!std::isfinite(q[d])) return -1;  // no answer for a non-finite query
  }
  if (current_frame >= 0 && current_frame < db_->frame_count()) {
    insert_sorted(out, k, found, current_frame, frame_cost(q, current_frame));
  }
  return found;
}

int FeatureSearch::search(const float* query, int current_frame, const SearchParams& params, SearchResult* out,
                          int k, SearchScratch& scratch) const {
  if (db_ == nullptr || k <= 0 || scratch.large_bounds.size() != large_.size()) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  // Pass 1: the lower bound of every searchable large box; remember the most promising one.
  const size_t p = size_t(padded_dims_);
  int best = -1, best_end = 0;
  for (const RangeBoxes& range : ranges_) {
    const int end = searchable_end(range.start, range.stop, params);
    const int count = searchable_large_count(range, end);
    for (int l = range.first_large; l < range.first_large + count; ++l) {
      const float bound = params.transition_cost +
                          box_distance(q, &large_min_[size_t(l) * p], &large_max_[size_t(l) * p], padded_dims_);
      scratch.large_bounds[size_t(l)] = bound;
      if (best < 0 || bound < scratch.large_bounds[size_t(best)]) {
        best = l;
        best_end = end;
      }
    }
  }
  if (best < 0) return found;
  // Pass 2: the most promising box first (a tight bound early), then every box that can still
  // hold a better frame.
  search_large_box(q, current_frame, params, best, best_end, out, k, found);
  for (const RangeBoxes& range : ranges_) {
    const int end = searchable_end(range.start, range.stop, params);
    const int count = searchable_large_count(range, end);
    for (int l = range.first_large; l < range.first_large + count; ++l) {
      if (l == best || scratch.large_bounds[size_t(l)] > kth_cost(out, k, found)) continue;
      search_large_box(q, current_frame, params, l, end, out, k, found);
    }
  }
  return found;
}

int FeatureSearch::brute_force(const float* query, int current_frame, const SearchParams& params,
                               SearchResult* out, int k) const {
  if (db_ == nullptr || k <= 0) return 0;
  float q[kMaxSearchDims] = {};
  int found = start(query, current_frame, q, out, k);
  if (found < 0) return 0;
  if (current_frame >= db_->frame_count()) current_frame = -1;
  for (const RangeBoxes& range : ranges_) {
    for (int f = range.start; f < searchable_end(range.start, range.stop, params); ++f) {
      if (!skipped(f, current_frame, params)) insert_sorted(out, k, found, f, params.transition_cost + frame_cost(q, f));
    }
  }
  return found;
}

}  // namespace lmm
