// Gameplay tags in training (issue 43): the 0/1 tag dimensions a state carries after its features
// (Holden et al. 2020 Sec. 3: what matching must keep becomes part of the features), random tag
// constraints, and the projector's constrained labels: the exact nearest frame a constraint allows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/flat_index.hpp"

namespace lmm::training {

// The tags `names` of every frame of `db` as masks with bit t for names[t]. Throws
// std::runtime_error naming a tag the database lacks and listing the ones it has.
std::vector<TagMask> frame_tag_masks(const Database& db, const std::vector<std::string>& names);

// Throws std::runtime_error naming the preset `c` when its [tags] names a tag `db` lacks or an
// action no frame of `db` holds (before any training: play_action could never play it).
void check_preset_tags(const TrainingConfig& c, const Database& db);

// The state's tag part of every frame of `db` [frames, names.size() + actions.size()]: per tag of
// `names` 1 where the frame's mask (of `masks`, frame_tag_masks') has it, else 0; then per action
// tag (a name) run_seconds_left of it.
torch::Tensor tag_state(const Database& db, const std::vector<TagMask>& masks, const std::vector<std::string>& names,
                        const std::vector<std::string>& actions);

// Per frame of `db`, bit a set when the frame lies within kActionStartSeconds of the first frame of
// its run of action tag actions[a] (a name): the run starts a projection for play_action may enter.
std::vector<TagMask> action_start_bits(const Database& db, const std::vector<std::string>& actions);

// Constraints as rows of an int64 tensor [count, 3]: require_all, require_any, exclude. Over the
// masks of ConstrainedNearest: bit t < tags a tag, bit tags + a the start of action tag a's run.
TagConstraint constraint_of_row(const int64_t* row);
// The constraint of a row over the tags alone (the run-start bits dropped).
TagConstraint tag_constraint_of_row(const int64_t* row, int64_t tags);

// Width of the projector's constraint code under preset `c`: kConstraintCodeWidth per tag, then one
// per action tag (the projector's input is the feature query, then this code).
int64_t constraint_code_width(const TrainingConfig& c);

// The projector's constraint inputs of `constraints` ([count, 3], constraint_of_row) over `tags`
// tags and `actions` action tags: [count, kConstraintCodeWidth x tags + actions]
// (Model::constraint_code's layout: the run-start bits of require_all last).
torch::Tensor constraint_codes(const torch::Tensor& constraints, int64_t tags, int64_t actions);

// The exact nearest frame under a tag constraint: frames grouped by their tag mask, one FAISS flat
// index per group, so a batch costs one unconstrained search whatever its constraints.
class ConstrainedNearest {
 public:
  // Over `features` [frames, dims] with `masks` (one per frame).
  ConstrainedNearest(const torch::Tensor& features, const std::vector<TagMask>& masks);
  // Per row of `queries` [count, dims], the nearest frame that row `r` of `constraints` ([count, 3])
  // allows, or -1 when it allows none; on `threads` threads.
  torch::Tensor nearest(const torch::Tensor& queries, const torch::Tensor& constraints, int threads) const;
  // `count` random constraints over `tags` tags and the run starts of `actions` action tags
  // (indices into the tags) ([count, 3]; torch's generator): with probability `share` one of
  // require a tag, exclude a tag, require any of two, require one and exclude another, or (with
  // actions) an action's tag from its run's start (each allowing some frame; redrawn a few times,
  // else none), otherwise none; a constraint requiring no tag then excludes `kept_out` too (as
  // the runtime's projections do, TagConstraint::keeping_out).
  torch::Tensor random_constraints(int64_t count, int64_t tags, const std::vector<int64_t>& actions, double share,
                                   TagMask kept_out) const;
  // Whether some frame is allowed.
  bool satisfiable(const TagConstraint& constraint) const;

 private:
  std::vector<TagMask> group_masks_;
  std::vector<torch::Tensor> group_frames_;  // int64 frame indices of each group
  std::vector<std::unique_ptr<FlatIndex>> indexes_;
};

}  // namespace lmm::training
