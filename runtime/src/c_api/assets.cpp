// C API: version, errors, the allocator, database and model assets, a database's tag and event
// names (lmm/lmm.h).
#include "c_api/internal.hpp"

using namespace lmm::capi;

extern "C" {

const char* lmm_version(void) { return lmm::kVersion; }

const char* lmm_last_error(void) { return last_error.c_str(); }

void lmm_set_allocator(const lmm_allocator* allocator) {
  const bool usable = allocator != nullptr && allocator->allocate != nullptr && allocator->release != nullptr;
  current_allocator = usable ? *allocator : lmm_allocator{default_allocate, default_release, nullptr};
}

lmm_database* lmm_database_load(const char* path) {
  return load_handle<lmm_database, DatabaseAsset>(path, Kind::Database, [](DatabaseAsset& asset, std::string& error) {
    return (asset.database = lmm::Database::load_buffer(asset.file.data(), asset.file.size(), error)) &&
           asset.search.build(asset.database, error);
  });
}

void lmm_database_release(lmm_database* database) {
  if (database != nullptr && retire(database, Kind::Database, "database")) destroy(database);
}

uint64_t lmm_database_id(const lmm_database* database) {
  return require_live(database, Kind::Database, "database") ? database->asset->database->id() : 0;
}

// Name `i` of `list` (an asset's tag or event names); nullptr with a message naming `what` when
// `i` is out of range.
static const char* name_in(const std::vector<std::string>& list, int i, const char* what) {
  if (i >= 0 && size_t(i) < list.size()) return list[size_t(i)].c_str();
  last_error = std::string(what) + " " + std::to_string(i) + " is outside 0.." + std::to_string(int(list.size()) - 1);
  return nullptr;
}

// Name `i` of `names` of the database (its tag or event names); nullptr with a message when
// `database` is not live or `i` is out of range.
static const char* name_at(const lmm_database* database, const std::vector<std::string>& (*names)(const lmm::Database&),
                           int i, const char* what) {
  return require_live(database, Kind::Database, "database") ? name_in(names(*database->asset->database), i, what) : nullptr;
}

// name_at for a model's names.
static const char* model_name_at(const lmm_model* model, const std::vector<std::string>& (*names)(const lmm::Model&), int i,
                           const char* what) {
  return require_live(model, Kind::Model, "model") ? name_in(names(*model->asset->model), i, what) : nullptr;
}

static const std::vector<std::string>& tag_names(const lmm::Database& db) { return db.annotations().tag_names(); }
static const std::vector<std::string>& event_names(const lmm::Database& db) { return db.annotations().event_names(); }
static const std::vector<std::string>& model_tag_names(const lmm::Model& m) { return m.tags().names(); }
static const std::vector<std::string>& model_event_names(const lmm::Model& m) { return m.event_names(); }

// The mask of `names` over `tags` into `mask` (not null); 0 with a message on failure.
static int tag_mask_into(const lmm::TagNames& tags, const char* names, uint64_t* mask) {
  if (!require(mask, "mask")) return 0;
  return guarded([&] {
    lmm::TagMask resolved = 0;
    if (!resolve_tags(tags, names, resolved)) return 0;
    *mask = resolved;
    return 1;
  });
}

int lmm_database_tag_count(const lmm_database* database) {
  return require_live(database, Kind::Database, "database") ? int(tag_names(*database->asset->database).size()) : 0;
}

const char* lmm_database_tag_name(const lmm_database* database, int tag) {
  return name_at(database, tag_names, tag, "tag");
}

int lmm_database_tag_mask(const lmm_database* database, const char* names, uint64_t* mask) {
  if (!require_live(database, Kind::Database, "database")) return 0;
  return tag_mask_into(database->asset->database->annotations().tag_set(), names, mask);
}

int lmm_database_event_name_count(const lmm_database* database) {
  return require_live(database, Kind::Database, "database") ? int(event_names(*database->asset->database).size()) : 0;
}

const char* lmm_database_event_name(const lmm_database* database, int name) {
  return name_at(database, event_names, name, "event name");
}

lmm_model* lmm_model_load(const char* path) {
  return load_handle<lmm_model, ModelAsset>(path, Kind::Model, [](ModelAsset& asset, std::string& error) {
    return bool(asset.model = lmm::Model::load_buffer(asset.file.data(), asset.file.size(), error));
  });
}

void lmm_model_release(lmm_model* model) {
  if (model != nullptr && retire(model, Kind::Model, "model")) destroy(model);
}

int lmm_model_tag_count(const lmm_model* model) {
  return require_live(model, Kind::Model, "model") ? model->asset->model->tag_count() : 0;
}

const char* lmm_model_tag_name(const lmm_model* model, int tag) { return model_name_at(model, model_tag_names, tag, "tag"); }

int lmm_model_tag_mask(const lmm_model* model, const char* names, uint64_t* mask) {
  if (!require_live(model, Kind::Model, "model")) return 0;
  return tag_mask_into(model->asset->model->tags(), names, mask);
}

int lmm_model_action_tags(const lmm_model* model, uint64_t* actions, uint64_t* kept_out) {
  if (!require_live(model, Kind::Model, "model") || !require(actions, "actions")) return 0;
  *actions = model->asset->model->action_tags();
  if (kept_out != nullptr) *kept_out = model->asset->model->kept_out_tags();
  return 1;
}

int lmm_model_event_name_count(const lmm_model* model) {
  return require_live(model, Kind::Model, "model") ? int(model->asset->model->event_names().size()) : 0;
}

const char* lmm_model_event_name(const lmm_model* model, int name) {
  return model_name_at(model, model_event_names, name, "event name");
}

uint64_t lmm_model_id(const lmm_model* model) {
  return require_live(model, Kind::Model, "model") ? model->asset->model->id() : 0;
}

}  // extern "C"
