// C API: version, errors, the allocator, and database and model assets (lmm/lmm.h).
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

lmm_model* lmm_model_load(const char* path) {
  return load_handle<lmm_model, ModelAsset>(path, Kind::Model, [](ModelAsset& asset, std::string& error) {
    return bool(asset.model = lmm::Model::load_buffer(asset.file.data(), asset.file.size(), error));
  });
}

void lmm_model_release(lmm_model* model) {
  if (model != nullptr && retire(model, Kind::Model, "model")) destroy(model);
}

uint64_t lmm_model_id(const lmm_model* model) {
  return require_live(model, Kind::Model, "model") ? model->asset->model->id() : 0;
}

}  // extern "C"
