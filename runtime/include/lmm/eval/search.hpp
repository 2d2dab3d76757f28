// Exact nearest-neighbour search over a motion database's normalised features, accelerated by a
// four-level tree of bounding boxes: small boxes of 16 frames and large boxes of 4 small boxes as
// in basic motion matching (D. Holden's motion_matching_search), under groups of 8 large boxes
// and super groups of 8 groups. The frames are clustered by their features (a k-d tree), not
// taken in clip order, so that every box is tight; in a database with tags, a split apart of the
// frames holding a tag from those that do not is taken instead of a split by features when its
// halves are clearly tighter (and both fill half a box), so that a constraint skips whole boxes
// and the boxes it keeps bound only the frames it allows.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/core/kernel_path.hpp"

namespace lmm {

// Rules of one search, shared by the accelerated and the brute-force paths.
struct SearchParams {
  float transition_cost = 0.0f;  // added to every candidate except the current frame
  int ignore_range_end = 20;     // frames at the end of each clip that are never returned
  int ignore_surrounding = 20;   // candidates closer than this to the current frame are skipped
  // Answers costing more are left out (fewer than k may be found); a finite limit lets the
  // search skip the boxes whose bound exceeds it from the start.
  float max_cost = INFINITY;
  // Frames allowed as answers, by their tags (see FeatureSearch::search); the default allows all.
  TagConstraint constraint{};  // braces: positional SearchParams{cost, end, surrounding} stays warning-free
};

// One search answer: a frame and its squared distance (plus transition cost).
struct SearchResult {
  int frame = -1;
  float cost = 0.0f;
};

constexpr int kSearchLanes = 8;      // distances are summed in 8 independent lanes (SIMD-friendly)
constexpr int kMaxSearchDims = 256;  // feature dimensions the search supports
constexpr int kSmallBoxFrames = 16;  // frames per small box (basic motion matching's BOUND_SM_SIZE)
constexpr int kLargeBoxFrames = 64;  // frames per large box (basic motion matching's BOUND_LR_SIZE)

// Per-caller working memory of FeatureSearch::search (one per thread or character).
struct SearchScratch {
  std::vector<float> super_bounds;  // lower bound of every super group for the current query
};

// Bounding boxes over a database's features, clustered. Build once after loading (about 0.15 s
// for 425k frames); search calls never allocate and may run concurrently with distinct scratches.
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
  // found. `current_frame` (or -1) is a candidate without transition cost. The super group and
  // group with the lowest bound are searched first, to tighten the bound early; the answer does
  // not depend on the visiting order. `scratch` must come from make_scratch of this index. A
  // query with a non-finite value has no answer (returns 0).
  // Annotations (database version 3) restrict and bias the answers: a frame other than
  // `current_frame` is an answer only when it is not no-entry and params.constraint allows every
  // frame of its look-ahead (from it to the furthest future trajectory sample of the schema,
  // within its clip), so the tags hold while its trajectory is played; `current_frame` only when
  // the constraint allows its own tags. Every frame's cost bias is added to its cost. Boxes
  // carry a summary of their frames' tags and biases, so boxes that cannot hold an answer are
  // skipped whole.
  int search(const float* query, int current_frame, const SearchParams& params, SearchResult* out, int k,
             SearchScratch& scratch) const;
  // The same answer computed without the boxes, their tag summaries or the SIMD kernels: every
  // frame through the portable kernel, its look-ahead's tags read one frame at a time
  // (reference and benchmark baseline).
  int brute_force(const float* query, int current_frame, const SearchParams& params, SearchResult* out, int k) const;
  // Number of feature dimensions.
  int dims() const { return dims_; }
  // The kernel path chosen by build (Auto resolved).
  KernelPath path() const { return path_; }
  // Whether `frame` may be an answer other than the current frame under `constraint`: not
  // no-entry, and the constraint allows every frame of its look-ahead (clip ends and
  // SearchParams aside).
  bool entry_allowed(int frame, const TagConstraint& constraint) const;
  // Frames after a frame that its look-ahead spans (the schema's furthest future trajectory
  // offset, 0 without one).
  int look_ahead() const { return look_ahead_; }
  // The database this index was built over (null before build).
  const std::shared_ptr<const Database>& database() const { return db_; }
  // The floats the kernels read over kLayoutProbes controller-like queries (one frame's pose
  // features, another's trajectory) searched as a character searches without a constraint (the
  // database's kept-out action tags excluded): build's measure of a layout.
  long probe_work() const;
  // Whether build kept the layout split by tags: a tagged database whose probe_work there is at
  // most 1.02x that of the layout by features alone (false for an untagged database).
  bool split_by_tags() const { return split_by_tags_; }
  // True when `db` has frames and trajectory groups (steering `purpose`, e.g. "to steer with")
  // and this index was built over it; else false with what is wrong in `error`.
  bool steers(const std::shared_ptr<const Database>& db, const std::string& purpose, std::string& error) const;

 private:
  // What an entry frame or a box holds, for skipping it under a constraint (boxes merge their
  // children's).
  struct BoxNotes {
    TagMask all = 0;               // tags some frame holds on every frame of its look-ahead
    TagMask any = 0;               // tags some frame meets somewhere in its look-ahead
    TagMask common = ~TagMask(0);  // tags every frame meets somewhere in its look-ahead
    float bias = INFINITY;         // lowest cost bias of its frames
    bool entry = false;            // some frame is not no-entry
    TagMask held_by_every = ~TagMask(0);  // tags every frame holds on every frame of its look-ahead
    bool every_entry = true;              // no frame is no-entry

    // Whether a frame allowed by `constraint` may be here (for a frame: exactly whether it is
    // one, but for a require_any of several tags none of which it holds throughout).
    bool may_hold(const TagConstraint& constraint) const {
      return entry && (all & constraint.require_all) == constraint.require_all &&
             (constraint.require_any == 0 || (any & constraint.require_any) != 0) && (common & constraint.exclude) == 0;
    }
    // Whether `constraint` allows every frame here (they then need no test one by one).
    bool allows_every(const TagConstraint& constraint) const {
      return every_entry && (held_by_every & constraint.require_all) == constraint.require_all &&
             (constraint.require_any == 0 || (held_by_every & constraint.require_any) != 0) &&
             (any & constraint.exclude) == 0;
    }
    // Widens this summary to cover `child`'s frames too.
    void merge(const BoxNotes& child);
  };
  // One level of the tree: frames (in tree order), small boxes, large boxes, groups or super groups.
  struct Level {
    // Per frame or box, the most frames from one of its frames to its clip's stop (it holds a
    // searchable frame when this exceeds the excluded clip end; 0 for no frame).
    std::vector<int> reach;
    std::vector<BoxNotes> notes;  // per frame or box; empty when the database has no annotations
  };

  float frame_cost(const float* query, int frame) const;
  // Whether the notes decide anything for a search with `params`: the database has no-entry
  // frames or cost biases, or the search has a constraint (tags alone change nothing).
  bool uses_notes(const SearchParams& params) const {
    return notes_always_ || (!frame_level_.notes.empty() && !params.constraint.allows_all());
  }
  // One search's test of the boxes (or frames) of a level, its inputs read once per search
  // rather than per box: the clip ends excluded, whether the notes decide, the biases, the
  // transition cost (inline: the hot path).
  struct BoxTest {
    int excluded = 0;     // frames at a clip's end never returned
    bool notes = false;   // uses_notes(params)
    bool biased = false;  // the database has cost biases
    float transition = 0.0f;
    const TagConstraint* constraint = nullptr;
    long* work = nullptr;  // when not null, counts the floats the kernels read (the layout probe)
    // Whether item i of `level` may hold an answer.
    bool searchable(const Level& level, size_t i) const {
      return level.reach[i] > excluded && (!notes || level.notes[i].may_hold(*constraint));
    }
    // Adds the lowest cost bias of items first..last - 1 of `level` to bounds[0..last - first)
    // (nothing without biases).
    void add_biases(const Level& level, int first, int last, float* bounds) const {
      for (int i = first; biased && i < last; ++i) bounds[i - first] += level.notes[size_t(i)].bias;
    }
  };
  // The BoxTest of a search with `params`.
  BoxTest box_test(const SearchParams& params, long* work = nullptr) const {
    return BoxTest{params.ignore_range_end > 0 ? params.ignore_range_end : 0, uses_notes(params), has_bias_,
                   params.transition_cost, &params.constraint, work};
  }
  // Whether frame i (in tree order) is an answer under `params` when the notes decide, besides
  // its cost.
  bool annotated_frame_allowed(size_t i, const SearchParams& params) const;
  // entry_allowed for `frame`, `reach` frames before its clip's stop, read one frame at a time
  // without the summaries (brute_force's test, and the search's for require_any).
  bool entry_allowed(int frame, int reach, const TagConstraint& constraint) const;
  // Adds the transition cost and lowest biases to bounds[0..last - first) of children first..last
  // - 1 of `level`; returns the searchable child with the lowest bound (-1 when none is searchable).
  int searchable_children(float* bounds, const BoxTest& test, const Level& level, int first, int last) const;
  // Calls search_child(i) for `best` (from searchable_children), then for every other searchable
  // child i of first..last - 1 whose bound does not exceed the k-th cost at the time.
  template <class Search>
  void search_children(const float* bounds, const SearchParams& params, const BoxTest& test, const Level& level,
                       int first, int last, int best, const SearchResult* out, int k, const int& found,
                       const Search& search_child) const;
  // Bounds the children of `node` (boxes of one level: kLargeGroup children per node, their
  // bounds in mins / maxs) and calls search_child on the searchable ones whose bound does not
  // exceed the k-th cost, the lowest bound first.
  template <class Search>
  void search_boxes(const float* query, const SearchParams& params, const BoxTest& test, int node,
                    const std::vector<float>& mins, const std::vector<float>& maxs, const Level& level, SearchResult* out,
                    int k, int& found, const Search& search_child) const;
  // Searches the searchable groups of super group `super` whose bound does not exceed the k-th
  // cost, the lowest bound first.
  void search_super(const float* query, int current_frame, const SearchParams& params, const BoxTest& test, int super,
                    SearchResult* out, int k, int& found) const;
  // Searches the searchable large boxes of `group` whose bound does not exceed the k-th cost,
  // the lowest bound first.
  void search_group(const float* query, int current_frame, const SearchParams& params, const BoxTest& test, int group,
                    SearchResult* out, int k, int& found) const;
  void search_large_box(const float* query, int current_frame, const SearchParams& params, const BoxTest& test,
                        int large, SearchResult* out, int k, int& found) const;
  // Searches the searchable frames of small box `small` (its block's costs in `costs`).
  void search_block(int current_frame, const SearchParams& params, int small, const float* costs, SearchResult* out,
                    int k, int& found) const;
  // search_block's loop over the frames first..first + 15 in tree order: bias(i) is frame i's
  // cost bias, allowed(i) whether the notes allow it, asked last (0 and true for a database
  // without annotations, which then scans as before them).
  template <class Bias, class Allowed>
  void scan_block(int current_frame, const SearchParams& params, size_t first, const float* costs, SearchResult* out,
                  int k, int& found, const Bias& bias, const Allowed& allowed) const;
  int start(const float* query, int current_frame, const SearchParams& params, float* query_copy, SearchResult* out,
            int k) const;
  // search(), adding to *work (when not null) the floats its kernels read.
  int search_counted(const float* query, int current_frame, const SearchParams& params, SearchResult* out, int k,
                     SearchScratch& scratch, long* work) const;
  // Takes `database` (checked by build) and the kernels of `path` (resolved, available), before a layout.
  void use(std::shared_ptr<const Database> database, KernelPath path);
  // Lays out and tabulates the boxes, with tag splits (`by_tags`) or by features alone.
  void build_layout(bool by_tags);
  // Lays out frames_ and the reaches of the frames, small and large boxes: every frame, ordered
  // so that each small box, large box, group and super group holds nearby features, whatever
  // their clips (with `by_tags`, split by a tag where that is tighter).
  void build_boxes(bool by_tags);
  // Fills blocks_ and the bound tables from db_ (after the boxes are laid out).
  void build_tables();
  // Fills the notes of every level from db_'s annotations (none when it has none).
  void build_notes();

  std::shared_ptr<const Database> db_;
  int dims_ = 0;
  int look_ahead_ = 0;
  bool notes_always_ = false;  // the database has no-entry frames or cost biases
  bool has_bias_ = false;      // the database has cost biases
  bool split_by_tags_ = false;  // the boxes were laid out with tag splits
  KernelPath path_ = KernelPath::Scalar;
  // The distance kernels of path_ (see runtime/src/eval/search_kernels.hpp): box bounds of a
  // large-box table and of a small-box table, and a block's frame costs.
  void (*large_bounds_)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  void (*small_bounds_)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  void (*block_costs_)(const float* query, int dims, const float* block, float* out) = nullptr;
  // The frames in search-tree order: small box s holds frames_[16s..16s+16) (-1: none), large box
  // l small boxes 4l..4l+3, group g large boxes 8g..8g+7, super group u groups 8u..8u+7.
  std::vector<int> frames_;
  Level frame_level_, small_level_, large_level_, group_level_, super_level_;
  // Structure-of-arrays copies (unused columns zero): the features of small box s as block s
  // ([dim][16 frames]); the bounds of the small boxes of large box l as table l ([dim][4 boxes]);
  // the bounds of large boxes 8g..8g+7 (group g) as table g ([dim][8 boxes]); the bounds of
  // groups 8t..8t+7 (super group t) as table t ([dim][8 groups]); the bounds of super groups
  // 8u..8u+7 as table u.
  std::vector<float> blocks_;
  std::vector<float> small_min_, small_max_, large_min_, large_max_, group_min_, group_max_, super_min_, super_max_;
};

}  // namespace lmm
