// C API: crowds updated over job ranges (lmm/lmm.h).
#include "c_api/internal.hpp"

using namespace lmm::capi;

extern "C" {

lmm_crowd* lmm_crowd_create_database(const lmm_database* database, size_t count) {
  if (!require_live(database, Kind::Database, "database")) return nullptr;
  return create_crowd(count, [&](lmm_crowd& c, int n, std::string& error) {
    c.database = database->asset;
    return c.database_crowd.init(c.database->database, c.database->search, lmm::CharacterSettings{}, n, error);
  });
}

lmm_crowd* lmm_crowd_create_learned(const lmm_model* model, size_t count, int workers) {
  if (!require_live(model, Kind::Model, "model")) return nullptr;
  const size_t most = std::min(count, size_t(LMM_MAX_CROWD_WORKERS));
  if (count >= 1 && (workers < 1 || size_t(workers) > most)) {  // (create_crowd refuses count 0)
    last_error = "workers " + std::to_string(workers) + " is outside 1.." + std::to_string(most) +
                 " (at most one per character and " + std::to_string(LMM_MAX_CROWD_WORKERS) + ")";
    return nullptr;
  }
  return create_crowd(count, [&](lmm_crowd& c, int n, std::string& error) {
    c.model = model->asset;
    return c.learned_crowd.init(c.model->model, lmm::LearnedSettings{}, n, workers, error);
  });
}

void lmm_crowd_release(lmm_crowd* crowd) {
  if (crowd == nullptr || !retire(crowd, Kind::Crowd, "crowd")) return;
  forget_members(*crowd);
  destroy(crowd);
}

size_t lmm_crowd_size(const lmm_crowd* crowd) {
  return require_live(crowd, Kind::Crowd, "crowd") ? crowd->members.size() : 0;
}

lmm_character* lmm_crowd_character(lmm_crowd* crowd, size_t i) {
  return require_member(crowd, i) ? &crowd->members[i] : nullptr;
}

int lmm_crowd_set_input(lmm_crowd* crowd, size_t i, const lmm_gamepad* input) {
  if (!require_member(crowd, i) || !require(input, "input")) return 0;
  with_crowd(*crowd, [&](auto& c) {
    c.set_input(int(i), to_input(*input));
    return 0;
  });
  return 1;
}

int lmm_crowd_update(lmm_crowd* crowd, size_t begin, size_t end, float dt, int worker, double budget_seconds) {
  if (!require_live(crowd, Kind::Crowd, "crowd")) return 0;
  if (begin > end || end > crowd->members.size()) {
    last_error = "ranks [" + std::to_string(begin) + ", " + std::to_string(end) + ") are not within a crowd of " +
                 std::to_string(crowd->members.size());
    return 0;
  }
  const int workers = crowd->model != nullptr ? crowd->learned_crowd.workers() : 1;
  if (worker < 0 || worker >= workers) {
    last_error = "worker " + std::to_string(worker) + " is outside 0.." + std::to_string(workers - 1);
    return 0;
  }
  if (std::isnan(budget_seconds)) {
    last_error = "budget_seconds is NaN";
    return 0;
  }
  const int first = int(begin), last = int(end);
  const auto deadline = deadline_after(budget_seconds);
  const bool updated = crowd->model != nullptr ? crowd->learned_crowd.update(first, last, dt, worker, deadline)
                                               : crowd->database_crowd.update(first, last, dt, deadline);
  if (!updated) {
    last_error = "ranks [" + std::to_string(begin) + ", " + std::to_string(end) + ") or worker " +
                 std::to_string(worker) + " are in use by an update running on another thread";
  }
  return updated ? 1 : 0;
}

int lmm_crowd_set_rate_divisor(lmm_crowd* crowd, size_t i, int divisor) {
  if (!require_member(crowd, i)) return 0;
  const int most = lmm::LearnedCrowd::kMaxRateDivisor;
  if (divisor < 1 || divisor > most) {
    last_error = "rate divisor " + std::to_string(divisor) + " is outside 1.." + std::to_string(most);
    return 0;
  }
  with_crowd(*crowd, [&](auto& c) {
    c.set_rate_divisor(int(i), divisor);
    return 0;
  });
  return 1;
}

int lmm_crowd_set_priorities(lmm_crowd* crowd, const float* priorities, size_t count) {
  if (!require_live(crowd, Kind::Crowd, "crowd") || !require(priorities, "priorities")) return 0;
  if (count != crowd->members.size()) {
    last_error = std::to_string(count) + " priorities for a crowd of " + std::to_string(crowd->members.size());
    return 0;
  }
  if (!with_crowd(*crowd, [&](auto& c) { return c.set_priorities(priorities, int(count)); })) {
    last_error = "a priority is NaN";
    return 0;
  }
  return 1;
}

int lmm_crowd_shown_transform(const lmm_crowd* crowd, size_t i, float matrix[16]) {
  if (!require_member(crowd, i) || !require(matrix, "matrix")) return 0;
  const lmm::GroundMove move = with_crowd(*crowd, [&](const auto& c) { return c.shown_move(int(i)); });
  write_matrix(move.to - lmm::rotate(move.turn, move.from), move.turn, matrix);
  return 1;
}

}  // extern "C"
