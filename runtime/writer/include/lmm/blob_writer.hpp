// Writing the LMMK container (docs/formats/blob.md): BlobBuilder lays tensors out as one blob and
// write_file_atomic / file_holds put it on disk safely. Part of lmm::writer (offline tools, training
// and tests), not of the game runtime, which only reads blobs (lmm/asset/blob.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"

namespace lmm {

// Collects named tensors (pointers to caller data that must outlive the call to build) and
// lays them out as one blob.
class BlobBuilder {
 public:
  // Adds a tensor with `shape` (1 to 4 dims) whose elements start at `data`.
  void add(const std::string& name, DType dtype, std::vector<uint64_t> shape, const void* data);
  // Adds a U8 tensor holding `text` (copied).
  void add_text(const std::string& name, const std::string& text);
  // Serialises header, table and payload; returns false with `error` on a bad name or shape.
  bool build(const char* kind, uint32_t version, bool hash_payload, std::vector<uint8_t>& out,
             std::string& error) const;

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<uint64_t> shape;
    const void* data;
    size_t text_index;  // index into texts_ + 1, or 0
  };
  std::vector<Entry> entries_;
  std::vector<std::string> texts_;
};

// Writes `size` bytes to `path` through a temporary file of its own (`path`.<random>.tmp, created
// exclusively) renamed over `path` on success, so `path` is always either the old file or one
// writer's complete file: with concurrent writers the last complete one wins. False with a
// message on failure (no temporary file is left).
bool write_file_atomic(const std::string& path, const uint8_t* data, size_t size, std::string& error);
// Reads `path` back and compares it with the `size` bytes of `data`: true when the file holds
// exactly them, else false with a message naming the file (the check after a write, so a tool
// reports success only for what it can read back).
bool file_holds(const std::string& path, const uint8_t* data, size_t size, std::string& error);

}  // namespace lmm
