#include "bench_common.hpp"

#include "lmm/common/errors.hpp"

namespace lmm::bench {

std::shared_ptr<const Database> load_database(const std::string& path) {
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(path, error);
  if (db == nullptr) throw pipeline::InputError(error);
  return db;
}

}  // namespace lmm::bench
