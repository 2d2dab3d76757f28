// The flat binary container shared by motion databases (*.mmdb) and model bundles (*.lmmw):
// a 64-byte header, a table of named tensors and a 64-byte aligned payload, usable in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lmm {

// Element type of a tensor. Values are part of the file format and never renumbered.
enum class DType : uint32_t { F32 = 1, F16 = 2, I32 = 3, U8 = 4 };

// Size in bytes of one element of `dtype` (0 for an unknown value).
size_t dtype_size(DType dtype);

constexpr size_t kBlobHeaderSize = 64;        // bytes before the tensor table
constexpr size_t kBlobEntrySize = 96;         // bytes per tensor table entry
constexpr size_t kBlobNameCapacity = 48;      // bytes for a tensor name, NUL included
constexpr size_t kBlobAlignment = 64;         // alignment of every tensor in the payload
constexpr int kBlobMaxRank = 4;               // dimensions per tensor
constexpr uint32_t kBlobFlagPayloadHash = 1;  // header flag: payload_hash is checked
constexpr int64_t kAnyDim = -1;               // shape wildcard of BlobView::require_shape

// Fixed values and field offsets of the container (docs/formats/blob.md), shared by the reader
// (BlobView) and the writer (BlobBuilder in lmm::writer).
namespace blob_layout {
inline constexpr char kMagic[4] = {'L', 'M', 'M', 'K'};  // header bytes 0..3
inline constexpr uint32_t kEndianMarker = 0x01020304u;   // header byte 12, in the writer's order
inline constexpr size_t kHashedHeaderBytes = 56;         // header bytes covered by blob_header_hash
// Header field offsets (bytes).
inline constexpr size_t kOffMagic = 0, kOffKind = 4, kOffVersion = 8, kOffEndian = 12, kOffFlags = 16, kOffCount = 20,
                        kOffTotal = 24, kOffPayload = 32, kOffPayloadHash = 40, kOffHeaderHash = 56;
// Table entry field offsets (bytes).
inline constexpr size_t kEntDType = 48, kEntRank = 52, kEntDims = 56, kEntOffset = 88;
// The smallest multiple of kBlobAlignment >= `v` (the format's align64).
constexpr uint64_t align_up(uint64_t v) { return (v + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment; }
}  // namespace blob_layout

// IEEE 754 binary16 bits of `value`, rounded to nearest even (overflow gives infinity).
uint16_t float_to_half(float value);
// The float value of IEEE 754 binary16 bits.
float half_to_float(uint16_t bits);

// 64-bit non-cryptographic hash of `size` bytes (stable across platforms).
uint64_t hash64(const uint8_t* data, size_t size, uint64_t seed = 0);
// The header hash stored at byte 56 of a blob: over header bytes 0..55, then `table_bytes`
// bytes of tensor table from byte kBlobHeaderSize (the caller checked both are in bounds).
uint64_t blob_header_hash(const uint8_t* blob, size_t table_bytes);

// One tensor of an opened blob; `data` points into the caller's buffer.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  int rank = 0;
  uint64_t dims[kBlobMaxRank] = {0, 0, 0, 0};
  uint64_t element_count = 0;
  const uint8_t* data = nullptr;

  // Pointer to the elements as floats (caller checked dtype F32).
  const float* f32() const { return reinterpret_cast<const float*>(data); }
  // Pointer to the elements as 32-bit ints (caller checked dtype I32).
  const int32_t* i32() const { return reinterpret_cast<const int32_t*>(data); }
  // The bytes of a U8 tensor as a string.
  std::string text() const { return std::string(reinterpret_cast<const char*>(data), element_count); }
};

// Read-only view of a blob held in a caller-owned buffer, validated on open.
class BlobView {
 public:
  // Validates header, table, bounds and hashes of `data` (16-byte aligned, `size` bytes) for a
  // blob of `kind` (4 chars, e.g. "MMDB") with version in [min_version, max_version].
  // Returns false with a message in `error` on any inconsistency; never reads out of bounds.
  bool open(const uint8_t* data, size_t size, const char* kind, uint32_t min_version, uint32_t max_version,
            std::string& error);
  // Format version of the opened blob.
  uint32_t version() const { return version_; }
  // All tensors in table order.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const TensorView* find(const std::string& name) const;
  // The tensor `name` if it exists with `dtype` and `rank`, else nullptr and a message.
  const TensorView* require(const std::string& name, DType dtype, int rank, std::string& error) const;
  // The tensor `name` with `dtype` and exactly `shape` (kAnyDim matches any size) and at most
  // INT32_MAX elements, else nullptr and a message naming the tensor and dimension.
  const TensorView* require_shape(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                                  std::string& error) const;

 private:
  bool read_header(const uint8_t* data, size_t size, const char* kind, uint32_t min_version, uint32_t max_version,
                   std::string& error);
  bool read_table(const uint8_t* data, size_t size, std::string& error);
  bool check_distinct(std::string& error) const;

  uint32_t version_ = 0;
  uint32_t flags_ = 0;
  uint32_t tensor_count_ = 0;
  uint64_t payload_offset_ = 0;
  uint64_t payload_hash_ = 0;
  std::vector<TensorView> tensors_;
};

// Heap buffer aligned to kBlobAlignment bytes.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes (contents unspecified).
  explicit AlignedBuffer(size_t size);
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();
  // First byte.
  uint8_t* data() { return data_; }
  // First byte.
  const uint8_t* data() const { return data_; }
  // Size in bytes.
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Largest asset file (*.mmdb, *.lmmw, *.lmdn) the loaders read.
constexpr uint64_t kMaxAssetFileBytes = uint64_t(16) << 30;  // 16 GiB

// The size of the file at `path` when it is a regular file (following links) of at most
// `max_bytes`; false with a message naming it otherwise (missing, a directory, a FIFO, socket or
// device, or too large). Opens nothing, so a FIFO cannot block it.
bool regular_file_size(const std::string& path, uint64_t max_bytes, uint64_t& size, std::string& error);

// Reads a whole regular file of at most kMaxAssetFileBytes into `out`; false with a message
// naming the file on failure (also for a directory, a special file or a file too large for
// memory).
bool read_file(const std::string& path, AlignedBuffer& out, std::string& error);

namespace detail {

// Next asset identity (1, 2, ...): unique per process across databases and models.
uint64_t next_asset_id();

// Loading for immutable blob-backed assets T (members `AlignedBuffer owned_`, `uint64_t id_`
// and `bool parse(const uint8_t*, size_t, std::string&)`; T befriends these helpers): a fresh
// T is validated and, only when complete, published with a new id; nullptr and a message
// naming `path` otherwise.
template <typename T>
std::shared_ptr<const T> load_blob_file(const std::string& path, std::string& error) {
  std::shared_ptr<T> fresh(new T());
  if (!read_file(path, fresh->owned_, error)) return nullptr;
  if (!fresh->parse(fresh->owned_.data(), fresh->owned_.size(), error)) {
    error = path + ": " + error;
    return nullptr;
  }
  fresh->id_ = next_asset_id();
  return fresh;
}

// As load_blob_file over a caller-owned buffer that must outlive the returned asset.
template <typename T>
std::shared_ptr<const T> load_blob_buffer(const uint8_t* data, size_t size, std::string& error) {
  std::shared_ptr<T> fresh(new T());
  if (!fresh->parse(data, size, error)) return nullptr;
  fresh->id_ = next_asset_id();
  return fresh;
}

}  // namespace detail

}  // namespace lmm
