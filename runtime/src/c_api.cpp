// The C API (lmm/lmm.h) over the C++ runtime: handles allocated through the pluggable allocator,
// assets shared between handles and characters, no exception across the boundary.
#include "lmm/lmm.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "lmm/crowd.hpp"
#include "lmm/database.hpp"
#include "lmm/database_character.hpp"
#include "lmm/learned_character.hpp"
#include "lmm/model.hpp"
#include "lmm/path_following.hpp"
#include "lmm/search.hpp"
#include "lmm/version.hpp"

namespace {

thread_local std::string last_error;

void* default_allocate(void*, size_t size, size_t) {
  return ::operator new(size, std::align_val_t(lmm::kBlobAlignment), std::nothrow);
}
void default_release(void*, void* block, size_t) { ::operator delete(block, std::align_val_t(lmm::kBlobAlignment)); }

lmm_allocator current_allocator{default_allocate, default_release, nullptr};

// A std::allocator-compatible adapter over an lmm_allocator (for shared assets' control blocks).
template <typename T>
struct CAllocator {
  using value_type = T;
  lmm_allocator c;

  explicit CAllocator(const lmm_allocator& allocator) : c(allocator) {}
  template <typename U>
  CAllocator(const CAllocator<U>& other) : c(other.c) {}  // NOLINT: rebinding converts implicitly
  T* allocate(size_t n) {
    void* block = c.allocate(c.user, n * sizeof(T), alignof(T));
    if (block == nullptr) throw std::bad_alloc();
    return static_cast<T*>(block);
  }
  void deallocate(T* block, size_t n) { c.release(c.user, block, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CAllocator<U>& other) const { return c.allocate == other.c.allocate && c.user == other.c.user; }
  template <typename U>
  bool operator!=(const CAllocator<U>& other) const { return !(*this == other); }
};

// A whole file in one block of the allocator (kBlobAlignment-aligned, as the loaders need).
class FileBlock {
 public:
  explicit FileBlock(const lmm_allocator& allocator) : allocator_(allocator) {}
  FileBlock(const FileBlock&) = delete;
  FileBlock& operator=(const FileBlock&) = delete;
  ~FileBlock() {
    if (data_ != nullptr) allocator_.release(allocator_.user, data_, size_);
  }
  // Reads `path`; false with a message naming it.
  bool read(const std::string& path, std::string& error) {
    uint64_t size = 0;
    if (!lmm::regular_file_size(path, lmm::kMaxAssetFileBytes, size, error)) return false;
    if (size == 0 || size > uint64_t(SIZE_MAX)) {
      error = path + (size == 0 ? ": is empty" : ": too large for this platform");
      return false;
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      error = path + ": cannot open for reading";
      return false;
    }
    size_ = size_t(size);
    data_ = static_cast<uint8_t*>(allocator_.allocate(allocator_.user, size_, lmm::kBlobAlignment));
    const bool read = data_ != nullptr && std::fread(data_, 1, size_, f) == size_;
    std::fclose(f);
    if (!read) error = path + (data_ == nullptr ? ": out of memory" : ": read error");
    return read;
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  lmm_allocator allocator_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// A database with its search index, shared by its handle and the characters using it.
struct DatabaseAsset {
  explicit DatabaseAsset(const lmm_allocator& allocator) : file(allocator) {}
  FileBlock file;
  std::shared_ptr<const lmm::Database> database;
  lmm::FeatureSearch search;
};

// A model bundle, shared by its handle and the characters using it.
struct ModelAsset {
  explicit ModelAsset(const lmm_allocator& allocator) : file(allocator) {}
  FileBlock file;
  std::shared_ptr<const lmm::Model> model;
};

// Constructs a T in a block of `allocator`; nullptr when it has no memory.
template <typename T, typename... Args>
T* create(const lmm_allocator& allocator, Args&&... args) {
  void* block = allocator.allocate(allocator.user, sizeof(T), alignof(T));
  if (block == nullptr) {
    last_error = "out of memory";
    return nullptr;
  }
  return new (block) T(std::forward<Args>(args)...);
}

// Destroys a T made by create() with the allocator it holds.
template <typename T>
void destroy(T* object) {
  if (object == nullptr) return;
  const lmm_allocator allocator = object->allocator;
  object->~T();
  allocator.release(allocator.user, object, sizeof(T));
}

// Runs `body` (returning 1 / 0 or a pointer), turning any exception into a failure and a message.
template <typename Body>
auto guarded(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
  } catch (const std::exception& e) {
    last_error = e.what();
  }
  return decltype(body())();
}

// false with a message when `pointer` is null.
bool require(const void* pointer, const char* what) {
  if (pointer != nullptr) return true;
  last_error = std::string(what) + " is NULL";
  return false;
}

// What a handle is: the kind tag the registry keeps for it.
enum class Kind { Database, Model, Character, Crowd };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Database: return "database";
    case Kind::Model: return "model";
    case Kind::Character: return "character";
    case Kind::Crowd: return "crowd";
  }
  return "?";
}

// The live handles of the process and their kinds. Creation adds, release removes, and every
// call that takes a handle looks it up first (a shared lock, no allocation), so that a released,
// foreign or mistyped handle is refused with a message instead of used.
class Registry {
 public:
  // Records `handle` as live (allocates; throws std::bad_alloc).
  void add(const void* handle, Kind kind) {
    const std::unique_lock<std::shared_mutex> lock(mutex_);
    live_[handle] = kind;
  }
  // Forgets `handle`; whether it was live with that kind.
  bool remove(const void* handle, Kind kind) {
    const std::unique_lock<std::shared_mutex> lock(mutex_);
    const auto it = live_.find(handle);
    if (it == live_.end() || it->second != kind) return false;
    live_.erase(it);
    return true;
  }
  // The kind of a live `handle`; none when it is not live.
  std::optional<Kind> kind_of(const void* handle) const {
    const std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = live_.find(handle);
    return it != live_.end() ? std::optional<Kind>(it->second) : std::nullopt;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<const void*, Kind> live_;
};

// The process's registry (never destroyed: handles may be released during static destruction).
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

// false with a message when `handle` is null, not a live handle, or a handle of another kind.
bool require_live(const void* handle, Kind kind, const char* what) {
  if (!require(handle, what)) return false;
  const std::optional<Kind> found = registry().kind_of(handle);
  if (found == kind) return true;
  last_error = found ? std::string(what) + " is a " + kind_name(*found) + " handle, not a " + kind_name(kind)
                     : std::string(what) + " is not a live " + kind_name(kind) +
                           " handle (released already, released with its crowd, or not made by lmmkit)";
  return false;
}

// Removes a live `handle` of `kind` from the registry before it is destroyed; false with a
// message (double release, wrong kind) when it is not one, and then it must not be destroyed.
bool retire(const void* handle, Kind kind, const char* what) {
  if (!require_live(handle, kind, what)) return false;
  return registry().remove(handle, kind);
}

// Registers a freshly made `handle` (destroying it if the registry has no memory).
template <typename Handle>
Handle* publish(Handle* handle, Kind kind) {
  if (handle == nullptr) return nullptr;
  try {
    registry().add(handle, kind);
  } catch (...) {
    destroy(handle);
    throw;
  }
  return handle;
}

// false with a message naming `what` when `value` is NaN or infinite.
bool require_finite(float value, const char* what) {
  if (std::isfinite(value)) return true;
  last_error = std::string(what) + " is " + (std::isnan(value) ? "NaN" : "infinite") + "; it must be finite";
  return false;
}

// false with a message when a placement (x, 0, z) facing `heading` is not finite.
bool require_finite_placement(float x, float z, float heading) {
  return require_finite(x, "x") && require_finite(z, "z") && require_finite(heading, "heading");
}

void write_xyz(lmm::Vec3 v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z; }
void write_xyzw(lmm::Quat q, float* out) { out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w; }

// The 4x4 column-major matrix (translation in elements 12..14) of `rotation` then `position`.
void write_matrix(lmm::Vec3 position, lmm::Quat rotation, float* m) {
  const lmm::Vec3 columns[3] = {lmm::rotate(rotation, lmm::Vec3{1, 0, 0}), lmm::rotate(rotation, lmm::Vec3{0, 1, 0}),
                                lmm::rotate(rotation, lmm::Vec3{0, 0, 1})};
  for (int c = 0; c < 3; ++c) m[4 * c] = columns[c].x, m[4 * c + 1] = columns[c].y, m[4 * c + 2] = columns[c].z, m[4 * c + 3] = 0;
  m[12] = position.x, m[13] = position.y, m[14] = position.z, m[15] = 1;
}

lmm::GamepadInput to_input(const lmm_gamepad& g) {
  lmm::GamepadInput input;
  input.left_x = g.left_x;
  input.left_y = g.left_y;
  input.right_x = g.right_x;
  input.right_y = g.right_y;
  input.camera_azimuth = g.camera_azimuth;
  input.strafe = g.strafe != 0;
  input.gait = g.gait;
  return input;
}

}  // namespace

struct lmm_database {
  lmm_allocator allocator;
  std::shared_ptr<DatabaseAsset> asset;
};

struct lmm_model {
  lmm_allocator allocator;
  std::shared_ptr<ModelAsset> asset;
};

struct lmm_character {
  // The character that plays: gamepad-steered (database or learned) or following a path.
  using Played = std::variant<lmm::DatabaseCharacter*, lmm::LearnedCharacter*, lmm::PathFollower*>;

  lmm_allocator allocator;
  std::shared_ptr<DatabaseAsset> database;  // whichever the character plays (keeps it alive)
  std::shared_ptr<ModelAsset> model;
  Played played;  // its own (OwnedCharacter) or a crowd's
  const lmm::Skeleton* skeleton = nullptr;
  bool crowd_member = false;  // a crowd's character: updated and released through the crowd
};

struct lmm_crowd {
  lmm_allocator allocator;
  std::shared_ptr<DatabaseAsset> database;  // whichever the crowd plays (keeps it alive)
  std::shared_ptr<ModelAsset> model;
  lmm::DatabaseCrowd database_crowd;
  lmm::LearnedCrowd learned_crowd;
  std::vector<lmm_character> members;  // handles over the crowd's characters
};

namespace {

// A character handle that owns its character (whichever of the three plays) and the path a path
// character follows.
struct OwnedCharacter : lmm_character {
  lmm::DatabaseCharacter database_character;
  lmm::LearnedCharacter learned_character;
  lmm::Path path;
  lmm::PathFollower path_follower;
};

// The pose every character shows.
const lmm::PoseOutput& pose_of(const lmm_character& c) {
  return *std::visit([](const auto* played) -> const lmm::PoseOutput* { return played; }, c.played);
}

// The gamepad-steered character of `c`, nullptr for a path character.
lmm::CharacterBase* steered_of(const lmm_character& c) {
  return std::visit(
      [](auto* played) -> lmm::CharacterBase* {
        if constexpr (std::is_same_v<decltype(played), lmm::PathFollower*>) return nullptr;
        else return played;
      },
      c.played);
}

// The path follower of `c`, nullptr for a gamepad-steered character.
const lmm::PathFollower* path_follower_of(const lmm_character& c) {
  lmm::PathFollower* const* follower = std::get_if<lmm::PathFollower*>(&c.played);
  return follower != nullptr ? *follower : nullptr;
}

// The gamepad-steered character of `character`; nullptr with a message naming `call` when it is
// null or follows a path.
lmm::CharacterBase* require_steered(const lmm_character* character, const char* call) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  lmm::CharacterBase* steered = steered_of(*character);
  if (steered == nullptr) {
    last_error = std::string(call) + " is for gamepad characters; a path character follows its path (create another)";
  }
  return steered;
}

// The path follower of `character`; nullptr with a message when it is null or gamepad-steered.
const lmm::PathFollower* require_path_follower(const lmm_character* character) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  const lmm::PathFollower* follower = path_follower_of(*character);
  if (follower == nullptr) last_error = "the character follows no path (made by lmm_character_create_path)";
  return follower;
}

// Advances `c` by dt: a path character ignores `input`, others need it. False with a message.
bool advance(lmm_character& c, const lmm_gamepad* input, float dt) {
  if (lmm::PathFollower* const* follower = std::get_if<lmm::PathFollower*>(&c.played)) {
    (*follower)->update(dt);
    return true;
  }
  if (!require(input, "input")) return false;
  steered_of(c)->update(to_input(*input), dt);
  return true;
}

// The feature schema and frame rate of the asset `c` plays (trajectory offsets are in its frames).
const lmm::FeatureSchema& schema_of(const lmm_character& c) {
  return c.model ? c.model->model->schema() : c.database->database->schema();
}
float fps_of(const lmm_character& c) { return c.model ? c.model->model->fps() : c.database->database->fps(); }

// Most trajectory samples a character's played trajectory reports (kept on the stack).
constexpr size_t kMaxTrajectorySamples = 64;

// Normalised features of what `c` plays and the normalisation they were made with.
struct PlayedFeatures {
  const float* features;
  const float* offset;
  const float* scale;
};

// The database frame `c` plays, -1 for a learned character.
int played_frame_of(const lmm_character& c) {
  return std::visit(
      [](const auto* p) {
        if constexpr (std::is_same_v<decltype(p), const lmm::LearnedCharacter*>) return -1;
        else return p->current_frame();
      },
      c.played);
}

// The features of the database frame `c` plays, or of its learned state (after the latent).
PlayedFeatures played_features_of(const lmm_character& c) {
  if (const lmm::LearnedCharacter* const* learned = std::get_if<lmm::LearnedCharacter*>(&c.played)) {
    const lmm::Model& model = *c.model->model;
    return {(*learned)->state().data() + model.latent(), model.feature_offset(), model.feature_scale()};
  }
  const lmm::Database& db = *c.database->database;
  return {db.features(played_frame_of(c)), db.feature_offset(), db.feature_scale()};
}

// The joints of the asset's contact labels.
const std::vector<int>& contact_joints_of(const lmm_character& c) {
  return c.model ? c.model->model->contact_joints() : c.database->database->contact_joints();
}

// `body(crowd)` on whichever crowd `c` (an lmm_crowd, const or not) holds.
template <typename Crowd, typename Body>
auto with_crowd(Crowd& c, const Body& body) {
  return c.model != nullptr ? body(c.learned_crowd) : body(c.database_crowd);
}

// false with a message when `crowd` is null or has no character i.
bool require_member(const lmm_crowd* crowd, size_t i) {
  if (!require_live(crowd, Kind::Crowd, "crowd")) return false;
  if (i < crowd->members.size()) return true;
  last_error = "no character " + std::to_string(i) + " in a crowd of " + std::to_string(crowd->members.size());
  return false;
}

// false with a message when `character` is null or belongs to a crowd.
bool require_own_character(const lmm_character* character, const char* what) {
  if (!require_live(character, Kind::Character, what)) return false;
  if (!character->crowd_member) return true;
  last_error = std::string(what) + " belongs to a crowd: update it with lmm_crowd_update";
  return false;
}

// A handle over a fresh Asset that holds the file at `path` and is finished by open(asset,
// error); nullptr with the message (naming the file) otherwise.
template <typename Handle, typename Asset, typename Open>
Handle* load_handle(const char* path, Kind kind, const Open& open) {
  if (!require(path, "path")) return nullptr;
  return guarded([&]() -> Handle* {
    const lmm_allocator allocator = current_allocator;
    auto asset = std::allocate_shared<Asset>(CAllocator<Asset>(allocator), allocator);
    std::string error;
    if (!asset->file.read(path, error) || !open(*asset, error)) {
      last_error = error.rfind(path, 0) == 0 ? error : std::string(path) + ": " + error;
      return nullptr;
    }
    return publish(create<Handle>(allocator, Handle{allocator, std::move(asset)}), kind);
  });
}

// A character made with the current allocator and set up by init(character, error); nullptr
// with the message otherwise.
template <typename Init>
lmm_character* create_character(const Init& init) {
  return guarded([&]() -> lmm_character* {
    OwnedCharacter* c = create<OwnedCharacter>(current_allocator);
    if (c == nullptr) return nullptr;
    c->allocator = current_allocator;
    std::string error;
    if (!init(*c, error)) {
      destroy(c);
      last_error = error;
      return nullptr;
    }
    return static_cast<lmm_character*>(publish(c, Kind::Character));
  });
}

// Forgets the member handles of crowd `c` (before it is destroyed).
void forget_members(const lmm_crowd& c) {
  for (const lmm_character& member : c.members) registry().remove(&member, Kind::Character);
}

// Registers a fresh crowd and its member characters, all or none (destroying it when the
// registry has no memory).
lmm_crowd* publish_crowd(lmm_crowd* c) {
  try {
    for (const lmm_character& member : c->members) registry().add(&member, Kind::Character);
    registry().add(c, Kind::Crowd);
  } catch (...) {
    forget_members(*c);
    destroy(c);
    throw;
  }
  return c;
}

// A crowd of `count` characters made with the current allocator and set up by init(crowd,
// error), with a handle per character; nullptr with the message otherwise.
template <typename Init>
lmm_crowd* create_crowd(size_t count, const Init& init) {
  if (count < 1 || count > size_t(INT_MAX)) {
    last_error = "a crowd needs 1 to " + std::to_string(INT_MAX) + " characters, not " + std::to_string(count);
    return nullptr;
  }
  return guarded([&]() -> lmm_crowd* {
    lmm_crowd* c = create<lmm_crowd>(current_allocator);
    if (c == nullptr) return nullptr;
    c->allocator = current_allocator;
    std::string error;
    if (!init(*c, int(count), error)) {
      destroy(c);
      last_error = error;
      return nullptr;
    }
    const lmm::Skeleton* skeleton = c->model ? &c->model->model->skeleton() : &c->database->database->skeleton();
    c->members.resize(count);
    with_crowd(*c, [&](auto& crowd) {
      for (size_t i = 0; i < count; ++i) {
        lmm_character& member = c->members[i];
        member.allocator = c->allocator;
        member.database = c->database;
        member.model = c->model;
        member.played = &crowd.character(int(i));
        member.skeleton = skeleton;
        member.crowd_member = true;
      }
      return 0;
    });
    return publish_crowd(c);
  });
}

// The deadline `budget_seconds` from now (none when not positive; at most an hour ahead).
lmm::LearnedCrowd::Clock::time_point deadline_after(double budget_seconds) {
  using Clock = lmm::LearnedCrowd::Clock;
  if (!(budget_seconds > 0.0)) return lmm::LearnedCrowd::kNoDeadline;
  const std::chrono::duration<double> budget(std::min(budget_seconds, 3600.0));
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(budget);
}

}  // namespace

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

lmm_character* lmm_character_create_database(const lmm_database* database, float x, float z, float heading) {
  if (!require_live(database, Kind::Database, "database") || !require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.database = database->asset;
    c.played = &c.database_character;
    c.skeleton = &c.database->database->skeleton();
    return c.database_character.init(c.database->database, c.database->search, lmm::CharacterSettings{},
                                     lmm::Vec3{x, 0.0f, z}, heading, error);
  });
}

lmm_character* lmm_character_create_learned(const lmm_model* model, float x, float z, float heading) {
  if (!require_live(model, Kind::Model, "model") || !require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.model = model->asset;
    c.played = &c.learned_character;
    c.skeleton = &c.model->model->skeleton();
    return c.learned_character.init(c.model->model, lmm::LearnedSettings{}, lmm::Vec3{x, 0.0f, z}, heading, error);
  });
}

lmm_character* lmm_character_create_path(const lmm_database* database, const float* samples_txz, size_t count,
                                         int mode, float speed_scale, float x, float z, float heading) {
  if (!require_live(database, Kind::Database, "database") || !require(samples_txz, "samples_txz")) return nullptr;
  if (mode != LMM_PATH_LOCAL && mode != LMM_PATH_GLOBAL) {
    last_error = "unknown path mode " + std::to_string(mode) + " (LMM_PATH_LOCAL or LMM_PATH_GLOBAL)";
    return nullptr;
  }
  if (count > size_t(lmm::kMaxPathPoints)) {
    last_error = std::to_string(count) + " path samples: at most " + std::to_string(size_t(lmm::kMaxPathPoints)) +
                 " are accepted";
    return nullptr;
  }
  if (!require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.database = database->asset;
    c.played = &c.path_follower;
    c.skeleton = &c.database->database->skeleton();
    std::vector<lmm::PathSample> samples(count);
    for (size_t i = 0; i < count; ++i) samples[i] = {samples_txz[3 * i], samples_txz[3 * i + 1], samples_txz[3 * i + 2]};
    lmm::PathShaping shaping;
    shaping.speed_scale = speed_scale;
    const lmm::PathMode placing = mode == LMM_PATH_GLOBAL ? lmm::PathMode::Global : lmm::PathMode::Local;
    if (!lmm::place_path(samples, placing, lmm::Vec3{x, 0.0f, z}, error) ||
        !lmm::make_path(samples, shaping, c.database->database->fps(), c.path, error)) {
      return false;
    }
    // The follower starts at the path's first point facing its first tangent turned by this offset.
    const lmm::Vec3 tangent = c.path.tangent(0.0f);
    lmm::PathFollowerSettings settings;
    settings.query.start_facing_offset = heading - std::atan2(tangent.x, tangent.z);
    return c.path_follower.init(c.database->database, c.database->search, settings, c.path, error);
  });
}

void lmm_character_release(lmm_character* character) {
  if (character == nullptr || !require_live(character, Kind::Character, "character")) return;
  if (character->crowd_member) {
    last_error = "character belongs to a crowd: lmm_crowd_release releases it";
    return;
  }
  if (retire(character, Kind::Character, "character")) destroy(static_cast<OwnedCharacter*>(character));
}

int lmm_character_update(lmm_character* character, const lmm_gamepad* input, float dt) {
  return require_own_character(character, "character") && advance(*character, input, dt) ? 1 : 0;
}

int lmm_characters_update(lmm_character* const* characters, const lmm_gamepad* inputs, size_t begin, size_t end,
                          float dt) {
  if (!require(characters, "characters") || !require(inputs, "inputs")) return 0;
  if (begin > end) {
    last_error = "the range [" + std::to_string(begin) + ", " + std::to_string(end) + ") is reversed";
    return 0;
  }
  for (size_t i = begin; i < end; ++i) {
    if (!require_own_character(characters[i], "a character in the range")) return 0;
  }
  for (size_t i = begin; i < end; ++i) {
    if (!advance(*characters[i], &inputs[i], dt)) return 0;
  }
  return 1;
}

int lmm_character_reset(lmm_character* character, float x, float z, float heading) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_reset");
  if (steered == nullptr || !require_finite_placement(x, z, heading)) return 0;
  steered->reset(lmm::Vec3{x, 0.0f, z}, heading);
  return 1;
}

int lmm_character_teleport(lmm_character* character, float x, float z, float heading) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_teleport");
  if (steered == nullptr || !require_finite_placement(x, z, heading)) return 0;
  steered->teleport(lmm::Vec3{x, 0.0f, z}, heading);
  return 1;
}

int lmm_character_set_root_owner(lmm_character* character, lmm_root_owner owner) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_set_root_owner");
  if (steered == nullptr) return 0;
  if (owner != LMM_ROOT_LIBRARY && owner != LMM_ROOT_GAME) {
    last_error = "unknown root owner " + std::to_string(int(owner)) + " (LMM_ROOT_LIBRARY or LMM_ROOT_GAME)";
    return 0;
  }
  steered->set_root_owner(owner == LMM_ROOT_GAME ? lmm::RootOwner::Game : lmm::RootOwner::Library);
  return 1;
}

int lmm_character_root_motion(const lmm_character* character, float translation_xyz[3], float turn_xyzw[4]) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const lmm::RootMotion& motion = pose_of(*character).root_motion();
  if (translation_xyz != nullptr) write_xyz(motion.translation, translation_xyz);
  if (turn_xyzw != nullptr) write_xyzw(motion.rotation, turn_xyzw);
  return 1;
}

int lmm_character_set_root(lmm_character* character, const float position_xyz[3], const float rotation_xyzw[4]) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_set_root");
  if (steered == nullptr || !require(position_xyz, "position_xyz") || !require(rotation_xyzw, "rotation_xyzw")) {
    return 0;
  }
  const lmm::Vec3 position{position_xyz[0], position_xyz[1], position_xyz[2]};
  const lmm::Quat rotation{rotation_xyzw[3], rotation_xyzw[0], rotation_xyzw[1], rotation_xyzw[2]};
  if (!lmm::is_finite(position) || !std::isfinite(rotation.w + rotation.x + rotation.y + rotation.z) ||
      lmm::dot(rotation, rotation) < 1e-12f) {
    last_error = "the root must be a finite position and a non-zero quaternion";
    return 0;
  }
  steered->set_root(position, rotation);
  return 1;
}

int lmm_character_joint_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? character->skeleton->joint_count() : 0;
}

int lmm_character_joint_index(const lmm_character* character, const char* name) {
  if (!require_live(character, Kind::Character, "character") || !require(name, "name")) return -1;
  return character->skeleton->find(name);
}

// false with a message when `character` is not live or has no joint `joint`.
static bool require_joint(const lmm_character* character, int joint) {
  if (!require_live(character, Kind::Character, "character")) return false;
  if (joint >= 0 && joint < character->skeleton->joint_count()) return true;
  last_error = "joint " + std::to_string(joint) + " is outside 0.." + std::to_string(character->skeleton->joint_count() - 1);
  return false;
}

const char* lmm_character_joint_name(const lmm_character* character, int joint) {
  return require_joint(character, joint) ? character->skeleton->names[size_t(joint)].c_str() : nullptr;
}

int lmm_character_joint_parent(const lmm_character* character, int joint) {
  return require_joint(character, joint) ? character->skeleton->parents[size_t(joint)] : -2;
}

int lmm_character_root_position(const lmm_character* character, float out_xyz[3]) {
  if (!require_live(character, Kind::Character, "character") || !require(out_xyz, "out_xyz")) return 0;
  write_xyz(pose_of(*character).root_position(), out_xyz);
  return 1;
}

int lmm_character_root_rotation(const lmm_character* character, float out_xyzw[4]) {
  if (!require_live(character, Kind::Character, "character") || !require(out_xyzw, "out_xyzw")) return 0;
  write_xyzw(pose_of(*character).root_rotation(), out_xyzw);
  return 1;
}

// false with a message when a buffer of `capacity` joints cannot hold the character's pose.
static bool fits(const lmm_character* character, size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return false;
  if (capacity >= size_t(character->skeleton->joint_count())) return true;
  last_error = "the buffers hold " + std::to_string(capacity) + " joints; the character has " +
               std::to_string(character->skeleton->joint_count());
  return false;
}

int lmm_character_world_transforms(const lmm_character* character, float* positions_xyz, float* rotations_xyzw,
                                   size_t joint_capacity) {
  if (!fits(character, joint_capacity)) return 0;
  const auto& positions = pose_of(*character).global_positions();
  const auto& rotations = pose_of(*character).global_rotations();
  for (size_t j = 0; j < positions.size(); ++j) {
    if (positions_xyz != nullptr) write_xyz(positions[j], positions_xyz + 3 * j);
    if (rotations_xyzw != nullptr) write_xyzw(rotations[j], rotations_xyzw + 4 * j);
  }
  return 1;
}

int lmm_character_world_matrices(const lmm_character* character, float* matrices, size_t joint_capacity) {
  if (!fits(character, joint_capacity) || !require(matrices, "matrices")) return 0;
  const auto& positions = pose_of(*character).global_positions();
  const auto& rotations = pose_of(*character).global_rotations();
  for (size_t j = 0; j < positions.size(); ++j) write_matrix(positions[j], rotations[j], matrices + 16 * j);
  return 1;
}

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

int lmm_character_path_progress(const lmm_character* character, int* desired_index, int* point_count, int* completed) {
  const lmm::PathFollower* follower = require_path_follower(character);
  if (follower == nullptr) return 0;
  if (desired_index != nullptr) *desired_index = follower->desired_index();
  if (point_count != nullptr) *point_count = follower->path().size();
  if (completed != nullptr) *completed = follower->completed() ? 1 : 0;
  return 1;
}

int lmm_character_path_points(const lmm_character* character, float* points_xyz, size_t point_capacity) {
  const lmm::PathFollower* follower = require_path_follower(character);
  if (follower == nullptr || !require(points_xyz, "points_xyz")) return 0;
  const std::vector<lmm::Vec3>& points = follower->path().points;
  if (point_capacity < points.size()) {
    last_error = "the buffer holds " + std::to_string(point_capacity) + " points; the path has " +
                 std::to_string(points.size());
    return 0;
  }
  for (size_t i = 0; i < points.size(); ++i) write_xyz(points[i], points_xyz + 3 * i);
  return 1;
}

int lmm_character_trajectory_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? int(schema_of(*character).trajectory_offsets.size()) : 0;
}

int lmm_character_trajectory(const lmm_character* character, float* times, float* positions_xyz, float* rotations_xyzw,
                             size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const std::vector<int>& offsets = schema_of(*character).trajectory_offsets;
  if (capacity < offsets.size()) {
    last_error = "the buffers hold " + std::to_string(capacity) + " trajectory samples; the character has " +
                 std::to_string(offsets.size());
    return 0;
  }
  const lmm::PathFollower* follower = path_follower_of(*character);
  const std::vector<lmm::RootSample>& samples =
      follower != nullptr ? follower->revised_trajectory() : steered_of(*character)->predicted_trajectory();
  const float fps = fps_of(*character);
  for (size_t m = 0; m < offsets.size(); ++m) {
    if (times != nullptr) times[m] = float(offsets[m]) / fps;
    if (positions_xyz != nullptr) write_xyz(samples[m].position, positions_xyz + 3 * m);
    if (rotations_xyzw != nullptr) write_xyzw(samples[m].rotation, rotations_xyzw + 4 * m);
  }
  return 1;
}

int lmm_character_played_trajectory(const lmm_character* character, float* times, float* positions_xyz,
                                    float* directions_xyz, size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const lmm::FeatureSchema& schema = schema_of(*character);
  const size_t samples = schema.trajectory_offsets.size();
  if (capacity < samples) {
    last_error = "the buffers hold " + std::to_string(capacity) + " trajectory samples; the character has " +
                 std::to_string(samples);
    return 0;
  }
  if (samples > kMaxTrajectorySamples) {
    last_error = "the schema has " + std::to_string(samples) + " trajectory samples; the played trajectory reports " +
                 std::to_string(kMaxTrajectorySamples) + " at most";
    return 0;
  }
  const lmm::PoseOutput& pose = pose_of(*character);
  lmm::Vec3 positions[kMaxTrajectorySamples], directions[kMaxTrajectorySamples];
  const PlayedFeatures played = played_features_of(*character);
  lmm::trajectory_from_features(schema, played.features, played.offset, played.scale,
                                lmm::RootSample{pose.root_position(), pose.root_rotation()}, positions, directions);
  const float fps = fps_of(*character);
  for (size_t m = 0; m < samples; ++m) {
    if (times != nullptr) times[m] = float(schema.trajectory_offsets[m]) / fps;
    if (positions_xyz != nullptr) write_xyz(positions[m], positions_xyz + 3 * m);
    if (directions_xyz != nullptr) write_xyz(directions[m], directions_xyz + 3 * m);
  }
  return 1;
}

int lmm_character_contact_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? int(contact_joints_of(*character).size()) : 0;
}

int lmm_character_contact(const lmm_character* character, int k, int* joint, int* in_contact) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const std::vector<int>& joints = contact_joints_of(*character);
  if (k < 0 || size_t(k) >= joints.size()) {
    last_error = "contact " + std::to_string(k) + " is outside 0.." + std::to_string(int(joints.size()) - 1);
    return 0;
  }
  if (joint != nullptr) *joint = joints[size_t(k)];
  if (in_contact != nullptr) *in_contact = std::visit([k](const auto* played) { return played->in_contact(k); }, character->played);
  return 1;
}

int lmm_character_counters(const lmm_character* character, lmm_counters* out) {
  if (!require_live(character, Kind::Character, "character") || !require(out, "out")) return 0;
  if (const lmm::PathFollower* follower = path_follower_of(*character)) {
    const lmm::PathFollowerStats& stats = follower->stats();
    *out = lmm_counters{stats.updates, stats.matches, stats.transitions};
  } else {
    const lmm::CharacterStats& stats = steered_of(*character)->stats();
    *out = lmm_counters{stats.updates, stats.searches, stats.transitions};
  }
  return 1;
}

int lmm_character_frame(const lmm_character* character, int* frame, int* clip) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const int played = played_frame_of(*character);
  if (played < 0) {
    last_error = "a learned character plays no database frame";
    return 0;
  }
  if (frame != nullptr) *frame = played;
  if (clip != nullptr) *clip = lmm::clip_index(*character->database->database, played);
  return 1;
}

const char* lmm_character_clip_name(const lmm_character* character, int clip) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  if (character->model != nullptr) {
    last_error = "a learned character plays no database clip";
    return nullptr;
  }
  const std::vector<lmm::DatabaseRange>& ranges = character->database->database->ranges();
  if (clip >= 0 && size_t(clip) < ranges.size()) return ranges[size_t(clip)].name.c_str();
  last_error = "clip " + std::to_string(clip) + " is outside 0.." + std::to_string(int(ranges.size()) - 1);
  return nullptr;
}

int lmm_character_decoder_experts(lmm_character* character, int* experts, float* weights, int capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  lmm::LearnedCharacter* const* learned = std::get_if<lmm::LearnedCharacter*>(&character->played);
  if (learned == nullptr) {
    last_error = "only a learned character has decoder experts";
    return 0;
  }
  if (capacity < 1) {
    last_error = "capacity " + std::to_string(capacity) + " is below 1";
    return 0;
  }
  int32_t routed[lmm::kMaxTopK];
  float routed_weights[lmm::kMaxTopK];
  const int count = (*learned)->decoder_experts(routed, routed_weights);
  if (count == 0) {
    last_error = "the model's decoder is not a mixture of experts";
    return 0;
  }
  const int written = std::min(count, capacity);
  for (int j = 0; j < written; ++j) {
    if (experts != nullptr) experts[j] = routed[j];
    if (weights != nullptr) weights[j] = routed_weights[j];
  }
  return written;
}

}  // extern "C"
