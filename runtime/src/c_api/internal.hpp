// Internal to the C API (lmm/lmm.h): the handles behind its opaque types, the registry of live
// handles, the pluggable allocator's adapters and the checks every call makes. Every behaviour
// the C API offers exists in the C++ runtime; this layer only translates calls.
#pragma once

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
#include "lmm/asset/database.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/character/crowd.hpp"
#include "lmm/character/database_character.hpp"
#include "lmm/character/learned_character.hpp"
#include "lmm/character/path_following.hpp"
#include "lmm/core/version.hpp"
#include "lmm/eval/search.hpp"
#include "lmm/lmm.h"

namespace lmm::capi {

inline thread_local std::string last_error;

inline void* default_allocate(void*, size_t size, size_t) {
  return ::operator new(size, std::align_val_t(lmm::kBlobAlignment), std::nothrow);
}
inline void default_release(void*, void* block, size_t) {
  ::operator delete(block, std::align_val_t(lmm::kBlobAlignment));
}

inline lmm_allocator current_allocator{default_allocate, default_release, nullptr};

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
  bool operator==(const CAllocator<U>& other) const {
    return c.allocate == other.c.allocate && c.user == other.c.user;
  }
  template <typename U>
  bool operator!=(const CAllocator<U>& other) const {
    return !(*this == other);
  }
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
inline T* create(const lmm_allocator& allocator, Args&&... args) {
  void* block = allocator.allocate(allocator.user, sizeof(T), alignof(T));
  if (block == nullptr) {
    last_error = "out of memory";
    return nullptr;
  }
  return new (block) T(std::forward<Args>(args)...);
}

// Destroys a T made by create() with the allocator it holds.
template <typename T>
inline void destroy(T* object) {
  if (object == nullptr) return;
  const lmm_allocator allocator = object->allocator;
  object->~T();
  allocator.release(allocator.user, object, sizeof(T));
}

// Runs `body` (returning 1 / 0 or a pointer), turning any exception into a failure and a message.
template <typename Body>
inline auto guarded(Body&& body) -> decltype(body()) {
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
inline bool require(const void* pointer, const char* what) {
  if (pointer != nullptr) return true;
  last_error = std::string(what) + " is NULL";
  return false;
}

// What a handle is: the kind tag the registry keeps for it.
enum class Kind { Database, Model, Character, Crowd };

inline const char* kind_name(Kind kind) {
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
inline Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

// false with a message when `handle` is null, not a live handle, or a handle of another kind.
inline bool require_live(const void* handle, Kind kind, const char* what) {
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
inline bool retire(const void* handle, Kind kind, const char* what) {
  if (!require_live(handle, kind, what)) return false;
  return registry().remove(handle, kind);
}

// Registers a freshly made `handle` (destroying it if the registry has no memory).
template <typename Handle>
inline Handle* publish(Handle* handle, Kind kind) {
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
inline bool require_finite(float value, const char* what) {
  if (std::isfinite(value)) return true;
  last_error = std::string(what) + " is " + (std::isnan(value) ? "NaN" : "infinite") + "; it must be finite";
  return false;
}

// false with a message when a placement (x, 0, z) facing `heading` is not finite.
inline bool require_finite_placement(float x, float z, float heading) {
  return require_finite(x, "x") && require_finite(z, "z") && require_finite(heading, "heading");
}

inline void write_xyz(lmm::Vec3 v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z; }
inline void write_xyzw(lmm::Quat q, float* out) { out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w; }

// The 4x4 column-major matrix (translation in elements 12..14) of `rotation` then `position`.
inline void write_matrix(lmm::Vec3 position, lmm::Quat rotation, float* m) {
  const lmm::Vec3 columns[3] = {lmm::rotate(rotation, lmm::Vec3{1, 0, 0}), lmm::rotate(rotation, lmm::Vec3{0, 1, 0}),
                                lmm::rotate(rotation, lmm::Vec3{0, 0, 1})};
  for (int c = 0; c < 3; ++c)
    m[4 * c] = columns[c].x, m[4 * c + 1] = columns[c].y, m[4 * c + 2] = columns[c].z, m[4 * c + 3] = 0;
  m[12] = position.x, m[13] = position.y, m[14] = position.z, m[15] = 1;
}

inline lmm::GamepadInput to_input(const lmm_gamepad& g) {
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

}  // namespace lmm::capi

struct lmm_database {
  lmm_allocator allocator;
  std::shared_ptr<lmm::capi::DatabaseAsset> asset;
};

struct lmm_model {
  lmm_allocator allocator;
  std::shared_ptr<lmm::capi::ModelAsset> asset;
};

struct lmm_character {
  // The character that plays: gamepad-steered (database or learned) or following a path.
  using Played = std::variant<lmm::DatabaseCharacter*, lmm::LearnedCharacter*, lmm::PathFollower*>;

  lmm_allocator allocator;
  std::shared_ptr<lmm::capi::DatabaseAsset> database;  // whichever the character plays (keeps it alive)
  std::shared_ptr<lmm::capi::ModelAsset> model;
  Played played;  // its own (OwnedCharacter) or a crowd's
  const lmm::Skeleton* skeleton = nullptr;
  bool crowd_member = false;  // a crowd's character: updated and released through the crowd
};

struct lmm_crowd {
  lmm_allocator allocator;
  std::shared_ptr<lmm::capi::DatabaseAsset> database;  // whichever the crowd plays (keeps it alive)
  std::shared_ptr<lmm::capi::ModelAsset> model;
  lmm::DatabaseCrowd database_crowd;
  lmm::LearnedCrowd learned_crowd;
  std::vector<lmm_character> members;  // handles over the crowd's characters
};

namespace lmm::capi {

// A character handle that owns its character (whichever of the three plays) and the path a path
// character follows.
struct OwnedCharacter : lmm_character {
  lmm::DatabaseCharacter database_character;
  lmm::LearnedCharacter learned_character;
  lmm::Path path;
  lmm::PathFollower path_follower;
};

// The pose every character shows.
inline const lmm::PoseOutput& pose_of(const lmm_character& c) {
  return *std::visit([](const auto* played) -> const lmm::PoseOutput* { return played; }, c.played);
}

// The gamepad-steered character of `c`, nullptr for a path character.
inline lmm::CharacterBase* steered_of(const lmm_character& c) {
  return std::visit(
      [](auto* played) -> lmm::CharacterBase* {
        if constexpr (std::is_same_v<decltype(played), lmm::PathFollower*>)
          return nullptr;
        else
          return played;
      },
      c.played);
}

// The path follower of `c`, nullptr for a gamepad-steered character.
inline const lmm::PathFollower* path_follower_of(const lmm_character& c) {
  lmm::PathFollower* const* follower = std::get_if<lmm::PathFollower*>(&c.played);
  return follower != nullptr ? *follower : nullptr;
}

// The gamepad-steered character of `character`; nullptr with a message naming `call` when it is
// null or follows a path.
inline lmm::CharacterBase* require_steered(const lmm_character* character, const char* call) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  lmm::CharacterBase* steered = steered_of(*character);
  if (steered == nullptr) {
    last_error = std::string(call) + " is for gamepad characters; a path character follows its path (create another)";
  }
  return steered;
}

// The database character of `character`; nullptr with a message naming `call` when it is null,
// learned or follows a path.
inline lmm::DatabaseCharacter* require_database_character(const lmm_character* character, const char* call) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  if (lmm::DatabaseCharacter* const* played = std::get_if<lmm::DatabaseCharacter*>(&character->played)) return *played;
  last_error = std::string(call) + " is for database characters; this is a " +
               (character->model != nullptr ? "learned character (it plays no database frames)" : "path character");
  return nullptr;
}

// f(the character `character` plays, of any kind: database, learned and path characters all take
// tag constraints and foot locks); `failed` with a message when it is null.
template <typename Result, typename F>
Result with_any_character(const lmm_character* character, Result failed, F&& f) {
  if (!require_live(character, Kind::Character, "character")) return failed;
  return std::visit([&](auto* played) -> Result { return f(*played); }, character->played);
}

// f(the database or learned character `character` plays: both have game states, idle, events and
// actions); `failed` with a message naming `call` when it is null or a path character.
template <typename Result, typename F>
Result with_gameplay_character(const lmm_character* character, const char* call, Result failed, F&& f) {
  if (!require_live(character, Kind::Character, "character")) return failed;
  if (lmm::DatabaseCharacter* const* played = std::get_if<lmm::DatabaseCharacter*>(&character->played)) {
    return f(**played);
  }
  if (lmm::LearnedCharacter* const* learned = std::get_if<lmm::LearnedCharacter*>(&character->played)) {
    return f(**learned);
  }
  last_error = std::string(call) + " is for database and learned characters; this is a path character";
  return failed;
}

// The tags a character's constraints name: its model's (learned) or its database's.
inline const lmm::TagNames& tags_of(const lmm_character& c) {
  return c.model ? c.model->model->tags() : c.database->database->annotations().tag_set();
}

// The path follower of `character`; nullptr with a message when it is null or gamepad-steered.
inline const lmm::PathFollower* require_path_follower(const lmm_character* character) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  const lmm::PathFollower* follower = path_follower_of(*character);
  if (follower == nullptr) last_error = "the character follows no path (made by lmm_character_create_path)";
  return follower;
}

// The mask of the comma-separated tag names `names` (NULL: none) of `tags`; false with a message
// naming the first unknown tag. Allocates (std::bad_alloc: run it guarded).
inline bool resolve_tags(const lmm::TagNames& tags, const char* names, lmm::TagMask& mask) {
  std::string error;
  if (tags.tag_mask(names != nullptr ? names : "", mask, error)) return true;
  last_error = error;
  return false;
}

// Advances `c` by dt: a path character ignores `input`, others need it. False with a message.
inline bool advance(lmm_character& c, const lmm_gamepad* input, float dt) {
  if (lmm::PathFollower* const* follower = std::get_if<lmm::PathFollower*>(&c.played)) {
    (*follower)->update(dt);
    return true;
  }
  if (!require(input, "input")) return false;
  steered_of(c)->update(to_input(*input), dt);
  return true;
}

// The feature schema and frame rate of the asset `c` plays (trajectory offsets are in its frames).
inline const lmm::FeatureSchema& schema_of(const lmm_character& c) {
  return c.model ? c.model->model->schema() : c.database->database->schema();
}
inline float fps_of(const lmm_character& c) { return c.model ? c.model->model->fps() : c.database->database->fps(); }

// Most trajectory samples a character's played trajectory reports (kept on the stack).
constexpr size_t kMaxTrajectorySamples = 64;

// The database frame `c` plays, -1 for a learned character.
inline int played_frame_of(const lmm_character& c) {
  return std::visit(
      [](const auto* p) {
        if constexpr (std::is_same_v<decltype(p), const lmm::LearnedCharacter*>)
          return -1;
        else
          return p->current_frame();
      },
      c.played);
}

// The joints of the asset's contact labels.
inline const std::vector<int>& contact_joints_of(const lmm_character& c) {
  return c.model ? c.model->model->contact_joints() : c.database->database->contact_joints();
}

// `body(crowd)` on whichever crowd `c` (an lmm_crowd, const or not) holds.
template <typename Crowd, typename Body>
inline auto with_crowd(Crowd& c, const Body& body) {
  return c.model != nullptr ? body(c.learned_crowd) : body(c.database_crowd);
}

// false with a message when `crowd` is null or has no character i.
inline bool require_member(const lmm_crowd* crowd, size_t i) {
  if (!require_live(crowd, Kind::Crowd, "crowd")) return false;
  if (i < crowd->members.size()) return true;
  last_error = "no character " + std::to_string(i) + " in a crowd of " + std::to_string(crowd->members.size());
  return false;
}

// false with a message when `character` is null or belongs to a crowd.
inline bool require_own_character(const lmm_character* character, const char* what) {
  if (!require_live(character, Kind::Character, what)) return false;
  if (!character->crowd_member) return true;
  last_error = std::string(what) + " belongs to a crowd: update it with lmm_crowd_update";
  return false;
}

// A handle over a fresh Asset that holds the file at `path` and is finished by open(asset,
// error); nullptr with the message (naming the file) otherwise.
template <typename Handle, typename Asset, typename Open>
inline Handle* load_handle(const char* path, Kind kind, const Open& open) {
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
inline lmm_character* create_character(const Init& init) {
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
inline void forget_members(const lmm_crowd& c) {
  for (const lmm_character& member : c.members) registry().remove(&member, Kind::Character);
}

// Registers a fresh crowd and its member characters, all or none (destroying it when the
// registry has no memory).
inline lmm_crowd* publish_crowd(lmm_crowd* c) {
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
inline lmm_crowd* create_crowd(size_t count, const Init& init) {
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
inline lmm::LearnedCrowd::Clock::time_point deadline_after(double budget_seconds) {
  using Clock = lmm::LearnedCrowd::Clock;
  if (!(budget_seconds > 0.0)) return lmm::LearnedCrowd::kNoDeadline;
  const std::chrono::duration<double> budget(std::min(budget_seconds, 3600.0));
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(budget);
}

}  // namespace lmm::capi
