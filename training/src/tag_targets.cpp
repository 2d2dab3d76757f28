#include "lmm/training/tag_targets.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include "lmm/asset/model.hpp"

namespace lmm::training {
namespace {

// Random draws per constrained query before it goes unconstrained.
constexpr int kConstraintDraws = 4;

// Bit of tag `t`.
TagMask bit(int64_t t) { return TagMask(1) << t; }

// Range of the random integers one constraint is drawn from.
constexpr int64_t kDrawRange = int64_t(1) << 30;

// The constraint of the five kinds over `tags` tags and the run starts of the action tags
// `actions` (indices into the tags) that the random integers draw[0..2] pick.
TagConstraint random_constraint(const int64_t* draw, int64_t tags, const std::vector<int64_t>& actions) {
  const int64_t kind = draw[0] % (actions.empty() ? 4 : 5), a = draw[1] % tags;
  const int64_t b = (a + 1 + draw[2] % std::max<int64_t>(tags - 1, 1)) % tags;  // another tag (when there is one)
  TagConstraint c;
  if (kind == 0) c.require_all = bit(a);
  if (kind == 1) c.exclude = bit(a);
  if (kind == 2) c.require_any = bit(a) | bit(b);
  if (kind == 3 && a != b) c.require_all = bit(a), c.exclude = bit(b);
  if (kind == 4) {  // play_action: an action tag from its run's start
    const int64_t action = draw[1] % int64_t(actions.size());
    c.require_all = bit(actions[size_t(action)]) | bit(tags + action);
  }
  return c;
}

}  // namespace

std::vector<TagMask> frame_tag_masks(const Database& db, const std::vector<std::string>& names) {
  std::vector<TagMask> masks;
  std::string error;
  if (!frame_tags_over(db, names, masks, error)) throw std::runtime_error("[tags] names: " + error);
  return masks;
}

torch::Tensor tag_state(const Database& db, const std::vector<TagMask>& masks, const std::vector<std::string>& names,
                        const std::vector<std::string>& actions) {
  const int64_t tags = int64_t(names.size()), width = tags + int64_t(actions.size());
  torch::Tensor values = torch::zeros({int64_t(masks.size()), width});
  float* v = values.data_ptr<float>();
  for (size_t f = 0; f < masks.size(); ++f) {
    for (int64_t t = 0; t < tags; ++t) v[int64_t(f) * width + t] = (masks[f] & bit(t)) != 0 ? 1.0f : 0.0f;
  }
  for (size_t a = 0; a < actions.size(); ++a) {
    const std::vector<float> left = run_seconds_left(db, db.annotations().known_tags(actions[a]));
    for (size_t f = 0; f < left.size(); ++f) v[int64_t(f) * width + tags + int64_t(a)] = left[f];
  }
  return values;
}

std::vector<TagMask> action_start_bits(const Database& db, const std::vector<std::string>& actions) {
  std::vector<TagMask> starts(size_t(db.frame_count()), 0);
  const FrameAnnotations& an = db.annotations();
  for (size_t a = 0; a < actions.size(); ++a) {
    const TagMask tag = an.known_tags(actions[a]);
    const auto holds = [&](int f) { return tag != 0 && (an.tags(f) & tag) == tag; };
    for (const DatabaseRange& r : db.ranges()) {
      int run_start = -1;
      for (int f = r.start; f < r.stop; ++f) {
        run_start = !holds(f) ? -1 : run_start < 0 ? f : run_start;
        if (run_start >= 0 && float(f - run_start) / db.fps() <= kActionStartSeconds) starts[size_t(f)] |= bit(int64_t(a));
      }
    }
  }
  return starts;
}

void check_preset_tags(const TrainingConfig& c, const Database& db) {
  const std::string where = c.source + " [tags]";
  std::vector<TagMask> masks;
  std::string error;
  if (!frame_tags_over(db, c.tags, masks, error)) throw std::runtime_error(where + " names: " + error);
  for (const int64_t a : action_indices(c)) {
    const TagMask bit_of_action = bit(a);
    if (std::none_of(masks.begin(), masks.end(), [&](TagMask m) { return (m & bit_of_action) != 0; })) {
      throw std::runtime_error(where + " actions: no frame of the database holds '" + c.tags[size_t(a)] +
                               "', so play_action could never play it");
    }
  }
}

TagConstraint constraint_of_row(const int64_t* row) {
  return TagConstraint{TagMask(row[0]), TagMask(row[1]), TagMask(row[2])};
}

TagConstraint tag_constraint_of_row(const int64_t* row, int64_t tags) {
  const TagMask known = tags >= 64 ? ~TagMask(0) : (TagMask(1) << tags) - 1;
  return TagConstraint{TagMask(row[0]) & known, TagMask(row[1]) & known, TagMask(row[2]) & known};
}

int64_t constraint_code_width(const TrainingConfig& c) {
  return kConstraintCodeWidth * int64_t(c.tags.size()) + int64_t(c.actions.size());
}

torch::Tensor constraint_codes(const torch::Tensor& constraints, int64_t tags, int64_t actions) {
  const torch::Tensor rows = constraints.contiguous();
  torch::Tensor codes = torch::zeros({rows.size(0), kConstraintCodeWidth * tags + actions});
  for (int64_t r = 0; r < rows.size(0); ++r) {
    const int64_t* row = rows.data_ptr<int64_t>() + 3 * r;
    float* code = codes.data_ptr<float>() + r * codes.size(1);
    write_constraint_code(tag_constraint_of_row(row, tags), int(tags), code);
    for (int64_t a = 0; a < actions; ++a) code[kConstraintCodeWidth * tags + a] = (TagMask(row[0]) & bit(tags + a)) != 0 ? 1.0f : 0.0f;
  }
  return codes;
}

ConstrainedNearest::ConstrainedNearest(const torch::Tensor& features, const std::vector<TagMask>& masks) {
  std::map<TagMask, std::vector<int64_t>> groups;
  for (size_t f = 0; f < masks.size(); ++f) groups[masks[f]].push_back(int64_t(f));
  for (const auto& [mask, frames] : groups) {
    group_masks_.push_back(mask);
    group_frames_.push_back(torch::tensor(frames, torch::kInt64));
    const torch::Tensor rows = features.index_select(0, group_frames_.back()).contiguous();
    indexes_.push_back(std::make_unique<FlatIndex>(rows.data_ptr<float>(), rows.size(0), rows.size(1)));
  }
}

torch::Tensor ConstrainedNearest::nearest(const torch::Tensor& queries, const torch::Tensor& constraints,
                                          int threads) const {
  const int64_t count = queries.size(0);
  const torch::Tensor rows = constraints.contiguous();
  std::vector<TagConstraint> decoded(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) decoded[size_t(r)] = constraint_of_row(rows.data_ptr<int64_t>() + 3 * r);
  torch::Tensor best = torch::full({count}, int64_t(-1), torch::kInt64);
  std::vector<float> best_distance(size_t(count), std::numeric_limits<float>::infinity());
  for (size_t g = 0; g < group_masks_.size(); ++g) {
    std::vector<int64_t> allowed;
    for (int64_t r = 0; r < count; ++r) {
      if (decoded[size_t(r)].allows(group_masks_[g])) allowed.push_back(r);
    }
    if (allowed.empty()) continue;
    const torch::Tensor which = torch::tensor(allowed, torch::kInt64);
    const torch::Tensor q = queries.index_select(0, which).contiguous();
    std::vector<int64_t> labels(allowed.size());
    std::vector<float> distances(allowed.size());
    indexes_[g]->nearest_batch(q.data_ptr<float>(), q.size(0), labels.data(), threads, distances.data());
    const int64_t* frames = group_frames_[g].data_ptr<int64_t>();
    for (size_t i = 0; i < allowed.size(); ++i) {
      const size_t r = size_t(allowed[i]);
      if (labels[i] < 0 || !(distances[i] < best_distance[r])) continue;
      best_distance[r] = distances[i];
      best.data_ptr<int64_t>()[r] = frames[labels[i]];
    }
  }
  return best;
}

bool ConstrainedNearest::satisfiable(const TagConstraint& constraint) const {
  for (const TagMask mask : group_masks_) {
    if (constraint.allows(mask)) return true;
  }
  return false;
}

torch::Tensor ConstrainedNearest::random_constraints(int64_t count, int64_t tags, const std::vector<int64_t>& actions,
                                                     double share, TagMask kept_out) const {
  torch::Tensor rows = torch::zeros({count, 3}, torch::kInt64);
  const torch::Tensor constrained = (torch::rand({count}) < share).contiguous();
  const torch::Tensor draws = torch::randint(kDrawRange, {count, kConstraintDraws, 3}, torch::kInt64).contiguous();
  for (int64_t r = 0; r < count && tags > 0; ++r) {
    TagConstraint chosen;
    for (int draw = 0; constrained.data_ptr<bool>()[r] && draw < kConstraintDraws; ++draw) {
      const TagConstraint c = random_constraint(draws.data_ptr<int64_t>() + (r * kConstraintDraws + draw) * 3, tags, actions);
      if (satisfiable(c.keeping_out(kept_out))) {
        chosen = c;
        break;
      }
    }
    chosen = chosen.keeping_out(kept_out);
    int64_t* row = rows.data_ptr<int64_t>() + 3 * r;
    row[0] = int64_t(chosen.require_all), row[1] = int64_t(chosen.require_any), row[2] = int64_t(chosen.exclude);
  }
  return rows;
}

}  // namespace lmm::training
