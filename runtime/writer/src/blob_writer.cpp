#include "lmm/blob_writer.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace lmm {
namespace {

using namespace blob_layout;

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// hash64 of the bytes of `value`.
uint64_t hash64_of(uint64_t value) {
  uint8_t bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  return hash64(bytes, sizeof bytes);
}

}  // namespace

void BlobBuilder::add(const std::string& name, DType dtype, std::vector<uint64_t> shape, const void* data) {
  entries_.push_back(Entry{name, dtype, std::move(shape), data, 0});
}

void BlobBuilder::add_text(const std::string& name, const std::string& text) {
  texts_.push_back(text);
  entries_.push_back(Entry{name, DType::U8, {text.size()}, nullptr, texts_.size()});
}

bool BlobBuilder::build(const char* kind, uint32_t version, bool hash_payload, std::vector<uint8_t>& out,
                        std::string& error) const {
  const uint64_t table_end = kBlobHeaderSize + entries_.size() * kBlobEntrySize;
  uint64_t cursor = align_up(table_end);
  const uint64_t payload_offset = cursor;
  std::vector<uint64_t> offsets, sizes;
  for (const Entry& e : entries_) {
    if (e.name.empty() || e.name.size() >= kBlobNameCapacity || e.shape.empty() ||
        e.shape.size() > size_t(kBlobMaxRank)) {
      error = "tensor '" + e.name + "': name or rank out of range";
      return false;
    }
    uint64_t bytes = dtype_size(e.dtype);
    for (uint64_t d : e.shape) bytes *= d;
    offsets.push_back(cursor);
    sizes.push_back(bytes);
    cursor = align_up(cursor + bytes);
  }
  out.assign(cursor, 0);
  uint8_t* h = out.data();
  std::memcpy(h + kOffMagic, kMagic, 4);
  std::memcpy(h + kOffKind, kind, 4);
  store<uint32_t>(h + kOffVersion, version);
  store<uint32_t>(h + kOffEndian, kEndianMarker);
  store<uint32_t>(h + kOffFlags, hash_payload ? kBlobFlagPayloadHash : 0u);
  store<uint32_t>(h + kOffCount, static_cast<uint32_t>(entries_.size()));
  store<uint64_t>(h + kOffTotal, cursor);
  store<uint64_t>(h + kOffPayload, payload_offset);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    uint8_t* t = h + kBlobHeaderSize + i * kBlobEntrySize;
    std::memcpy(t, e.name.data(), e.name.size());
    store<uint32_t>(t + kEntDType, static_cast<uint32_t>(e.dtype));
    store<uint32_t>(t + kEntRank, static_cast<uint32_t>(e.shape.size()));
    for (size_t d = 0; d < e.shape.size(); ++d) store<uint64_t>(t + kEntDims + 8 * d, e.shape[d]);
    store<uint64_t>(t + kEntOffset, offsets[i]);
    const void* src = e.text_index != 0 ? texts_[e.text_index - 1].data() : e.data;
    if (sizes[i] > 0) std::memcpy(h + offsets[i], src, sizes[i]);
  }
  if (hash_payload) {
    store<uint64_t>(h + kOffPayloadHash, hash64(h + payload_offset, cursor - payload_offset));
  }
  store<uint64_t>(h + kOffHeaderHash, blob_header_hash(h, table_end - kBlobHeaderSize));
  return true;
}

namespace {

// `path` + "." + 16 random hex digits + ".tmp": unique per writer (process, thread and call), so
// concurrent writers to one path never share a temporary file.
std::string unique_temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}() ^
                                   uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())};
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%016llx.tmp", static_cast<unsigned long long>(rng() ^ hash64_of(++counter)));
  return path + suffix;
}

}  // namespace

bool write_file_atomic(const std::string& path, const uint8_t* data, size_t size, std::string& error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory; cannot write a file there";
    return false;
  }
  const std::string temp = unique_temp_name(path);
  std::FILE* f = std::fopen(temp.c_str(), "wbx");  // exclusive: never reuse another writer's file
  if (f == nullptr) {
    error = path + ": cannot create the temporary file " + temp + " (missing folder or no permission?)";
    return false;
  }
  const bool written = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(temp.c_str());
    error = path + ": writing " + std::to_string(size) + " bytes failed (disk full or over a size limit?)";
    return false;
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    error = path + ": cannot replace it with the written file (" + ec.message() + ")";
    return false;
  }
  return true;
}

bool file_holds(const std::string& path, const uint8_t* data, size_t size, std::string& error) {
  AlignedBuffer written;
  if (!read_file(path, written, error)) return false;
  if (written.size() != size || (size > 0 && std::memcmp(written.data(), data, size) != 0)) {
    error = path + ": reading the written file back gave other bytes (" + std::to_string(written.size()) + " of " +
            std::to_string(size) + ")";
    return false;
  }
  return true;
}

}  // namespace lmm
