// Exact nearest-neighbour search over a motion database's normalised features, accelerated by
// basic motion matching's two-level bounding boxes (D. Holden's motion_matching_search) under a
// third level: groups of 8 consecutive large boxes.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lmm/database.hpp"
#include "lmm/nn.hpp"

namespace lmm {

// Rules of one search, shared by the accelerated and the brute-force paths.
struct SearchParams {
  float transition_cost = 0.0f;  // added to every candidate except the current frame
  int ignore_range_end = 20;     // frames at the end of each clip that are never returned
  int ignore_surrounding = 20;   // candidates closer than this to the current frame are skipped
  // Answers costing more are left out (fewer than k may be found); a finite limit lets the
  // search skip the boxes whose bound exceeds it from the start.
  float max_cost = INFINITY;
};

// One search answer: a frame and its squared distance (plus transition cost).
struct SearchResult {
  int frame = -1;
  float cost = 0.0f;
};

constexpr int kSearchLanes = 8;         // distances are summed in 8 independent lanes (SIMD-friendly)
constexpr int kMaxSearchDims = 256;     // feature dimensions the search supports
constexpr int kSmallBoxFrames = 16;  // basic motion matching's BOUND_SM_SIZE
constexpr int kLargeBoxFrames = 64;  // basic motion matching's BOUND_LR_SIZE

namespace detail {
// Internal: one kernel path's distance kernels (see runtime/src/search_kernels.hpp).
struct SearchKernels {
  // out[j] = squared distance over the first `dims` dimensions from a query to box j of W boxes
  // stored [dim][W] (W = 8 for groups or large boxes, 4 for the small boxes of one large box).
  void (*large_bounds)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  void (*small_bounds)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  // out[j] = squared distance over the first `dims` dimensions from a query to frame j of a
  // block of 16 frames stored [dim][16].
  void (*block_costs)(const float* query, int dims, const float* block, float* out) = nullptr;
};
}  // namespace detail

// Per-caller working memory of FeatureSearch::search (one per thread or character).
struct SearchScratch {
  std::vector<float> group_bounds;  // lower bound of every group of large boxes for the current query
};

// Bounding boxes over a database's features, laid out per clip. Build once after loading;
// search calls never allocate and may run concurrently with distinct scratches.
class FeatureSearch {
 public:
  // Holds `db` (shared) and computes the boxes and a blocked copy of its features; false with a
  // message when the database is null, has no frames, no features or more than kMaxSearchDims
  // dimensions, or when `path` is not available on this build and CPU. Every path gives the
  // same answers to the last bit; Auto picks the widest available one.
  bool build(std::shared_ptr<const Database> db, std::string& error, KernelPath path = KernelPath::Auto);
  // Working memory sized for this index (allocates; call once per caller).
  SearchScratch make_scratch() const;
  // The k lowest (cost, frame) pairs, sorted, written to out[0..k); returns how many were
  // found. `current_frame` (or -1) is a candidate without transition cost. The group with the
  // lowest bound is searched first, to tighten the bound early; the answer does not depend on
  // the visiting order. `scratch` must come from make_scratch of this index. A query with a
  // non-finite value has no answer (returns 0).
  int search(const float* query, int current_frame, const SearchParams& params, SearchResult* out,
             int k, SearchScratch& scratch) const;
  // The same answer computed without the boxes or the SIMD kernels: every frame through the
  // portable kernel (reference and benchmark baseline).
  int brute_force(const float* query, int current_frame, const SearchParams& params,
                  SearchResult* out, int k) const;
  // Number of feature dimensions.
  int dims() const { return dims_; }
  // The kernel path chosen by build (Auto resolved).
  KernelPath path() const { return path_; }
  // The database this index was built over (null before build).
  const std::shared_ptr<const Database>& database() const { return db_; }

 private:
  struct Box {
    int start = 0, stop = 0;  // frames covered
  };
  struct RangeBoxes {
    int start = 0, stop = 0;            // clip frames
    int first_large = 0, large_count = 0;
  };
  float frame_cost(const float* query, int frame) const;
  // Pass 1: writes the bound of every group to `bounds`; returns the searchable group with the
  // lowest bound (-1 when none is searchable).
  int group_bounds(const float* query, const SearchParams& params, float* bounds) const;
  // Searches the searchable large boxes of `group` whose bound does not exceed the k-th cost.
  void search_group(const float* query, int current_frame, const SearchParams& params, int group,
                    SearchResult* out, int k, int& found) const;
  void search_large_box(const float* query, int current_frame, const SearchParams& params,
                        int large, int end, SearchResult* out, int k, int& found) const;
  int start(const float* query, int current_frame, const SearchParams& params, float* query_copy, SearchResult* out,
            int k) const;
  // Fills blocks_ and the bound tables from db_ (after the boxes are laid out).
  void build_tables();

  std::shared_ptr<const Database> db_;
  int dims_ = 0;
  KernelPath path_ = KernelPath::Scalar;
  detail::SearchKernels kernels_;
  std::vector<RangeBoxes> ranges_;
  std::vector<Box> large_, small_;
  std::vector<int> large_first_small_;  // first small box of each large box
  std::vector<int> large_clip_stop_;    // stop of the clip holding each large box
  // Per group: the most frames from one of its large boxes' start to its clip's stop (the group
  // holds a searchable frame when this exceeds the excluded clip end).
  std::vector<int> group_reach_;
  // Structure-of-arrays copies (unused columns zero): the features of small box s as block s
  // ([dim][16 frames]); the bounds of the small boxes of large box l as table l ([dim][4 boxes]);
  // the bounds of large boxes 8g..8g+7 (group g) as table g ([dim][8 boxes]); the bounds of
  // groups 8t..8t+7 as table t ([dim][8 groups]).
  std::vector<float> blocks_;
  std::vector<float> small_min_, small_max_, large_min_, large_max_, group_min_, group_max_;
};

}  // namespace lmm
