#include "lmm/training/shared_data.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training {
namespace {

constexpr const char* kCacheKind = "LMPD";  // the cache file's container kind (docs/formats/blob.md)
constexpr uint32_t kCacheVersion = 1;

// The large tensors of TrainingData, by their names in the cache file.
struct CachedTensor {
  const char* name;
  torch::Tensor TrainingData::*in_data;  // a member of TrainingData, or
  torch::Tensor PoseData::*in_pose;      // a member of its PoseData
};
const CachedTensor kCached[] = {
    {"pose", nullptr, &PoseData::pose},
    {"model_positions", nullptr, &PoseData::model_positions},
    {"features", nullptr, &PoseData::features},
    {"pose_mean", nullptr, &PoseData::pose_mean},
    {"pose_std", nullptr, &PoseData::pose_std},
    {"encoder_input", &TrainingData::x, nullptr},
};

torch::Tensor& member(TrainingData& data, const CachedTensor& c) {
  return c.in_data != nullptr ? data.*c.in_data : data.d.*c.in_pose;
}

// 64-bit hash of every tensor of `db`'s file (names, shapes and bytes): the cache's key.
uint64_t database_key(const Database& db) {
  uint64_t h = hash64(reinterpret_cast<const uint8_t*>(kCacheKind), 4, kCacheVersion);
  for (const TensorView& t : db.blob().tensors()) {
    h = hash64(reinterpret_cast<const uint8_t*>(t.name.data()), t.name.size(), h);
    h = hash64(reinterpret_cast<const uint8_t*>(t.dims), sizeof(t.dims), h);
    h = hash64(t.data, t.element_count * dtype_size(t.dtype), h);
  }
  return h;
}

std::string hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Writes `data`'s large tensors and `key` to `path` atomically.
void write_cache(TrainingData data, uint64_t key, const std::string& path) {
  BlobBuilder builder;
  builder.add_text("key", hex(key));
  for (const CachedTensor& c : kCached) {
    const torch::Tensor& t = member(data, c);
    std::vector<uint64_t> shape(t.sizes().begin(), t.sizes().end());
    builder.add(c.name, DType::F32, shape, t.data_ptr<float>());
  }
  std::vector<uint8_t> bytes;
  std::string error;
  if (!builder.build(kCacheKind, kCacheVersion, false, bytes, error) ||
      !write_file_atomic(path, bytes.data(), bytes.size(), error)) {
    throw std::runtime_error("cannot write the shared training data " + path + ": " + error);
  }
}

// `data` (its layout from pose_data_layout) with its large tensors viewing the cache file at
// `path` in place; false when the file is missing, is not a cache of `key` or does not fit.
bool view_cache(const std::string& path, uint64_t key, const Database& db, TrainingData& data) {
  std::string error;
  const std::shared_ptr<const MappedFile> file = MappedFile::open(path, error);
  BlobView view;
  if (file == nullptr || !view.open(file->data(), file->size(), kCacheKind, kCacheVersion, kCacheVersion, error)) {
    return false;
  }
  const TensorView* stored_key = view.find("key");
  if (stored_key == nullptr || stored_key->dtype != DType::U8 || stored_key->text() != hex(key)) return false;
  const int64_t n = db.frame_count(), p = data.d.layout.size(), j = data.d.layout.joints;
  const std::vector<std::vector<int64_t>> shapes = {{n, p}, {n, j, 3}, {n, int64_t(db.schema().dims)}, {p}, {p}, {n, p + 3 * j}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TensorView* t = view.require_shape(kCached[i].name, DType::F32, shapes[i], error);
    if (t == nullptr) return false;
    // The tensor keeps the mapping alive; it is copy-on-write, so the const_cast cannot change the file.
    member(data, kCached[i]) = torch::from_blob(const_cast<float*>(t->f32()), shapes[i], [file](void*) {});
  }
  data.mapped_from = path;
  return true;
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open for reading (" + std::strerror(errno) + ")";
    return nullptr;
  }
  struct stat info {};
  void* data = MAP_FAILED;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0) {
    error = path + ": not a non-empty regular file";
  } else {
    data = ::mmap(nullptr, size_t(info.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) error = path + ": cannot be memory-mapped (" + std::strerror(errno) + ")";
  }
  ::close(fd);
  if (data == MAP_FAILED) return nullptr;
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<uint8_t*>(data), size_t(info.st_size)));
}

MappedFile::~MappedFile() { ::munmap(data_, size_); }

std::shared_ptr<const Database> map_database(const std::string& path, std::string& error) {
  const std::shared_ptr<const MappedFile> file = MappedFile::open(path, error);
  if (file == nullptr) return nullptr;
  const std::shared_ptr<const Database> db = Database::load_buffer(file->data(), file->size(), error);
  if (db == nullptr) {
    error = path + ": " + error;
    return nullptr;
  }
  // One owner for both: the database lives as long as the pointer, and the mapping with it.
  struct Mapped {
    std::shared_ptr<const MappedFile> file;
    std::shared_ptr<const Database> db;
  };
  const auto both = std::make_shared<Mapped>(Mapped{file, db});
  return std::shared_ptr<const Database>(both, both->db.get());
}

TrainingData compute_training_data(const Database& db) {
  TrainingData data{make_pose_data(db), {}, ""};
  torch::Tensor mean, std;
  data.x = encoder_inputs(data.d, mean, std);
  return data;
}

TrainingDataCache training_data_cache(const Database& db, const std::string& dir) {
  const uint64_t key = database_key(db);
  return {key, (std::filesystem::path(dir) / ("pose-data-" + hex(key) + ".lmpd")).string()};
}

void prepare_training_data_cache(const Database& db, const TrainingDataCache& cache) {
  TrainingData existing{pose_data_layout(db), {}, ""};
  if (view_cache(cache.path, cache.key, db, existing)) return;
  std::filesystem::create_directories(std::filesystem::path(cache.path).parent_path());
  write_cache(compute_training_data(db), cache.key, cache.path);
}

TrainingData map_training_data(const Database& db, const TrainingDataCache& cache) {
  TrainingData data{pose_data_layout(db), {}, ""};
  if (view_cache(cache.path, cache.key, db, data)) return data;
  prepare_training_data_cache(db, cache);
  if (!view_cache(cache.path, cache.key, db, data)) {
    throw std::runtime_error(cache.path + ": the shared training data cannot be read back");
  }
  return data;
}

}  // namespace lmm::training
