#include "lmm/asset/blob.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

namespace lmm {
namespace {

using namespace blob_layout;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

uint64_t rotl(uint64_t v, int r) { return (v << r) | (v >> (64 - r)); }

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// Multiplies a and b into out; false on 64-bit overflow.
bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

}  // namespace

namespace detail {

uint64_t next_asset_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace detail

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::I32: return 4;
    case DType::U8: return 1;
  }
  return 0;
}

uint64_t hash64(const uint8_t* data, size_t size, uint64_t seed) {
  constexpr uint64_t k1 = 0x9e3779b97f4a7c15ULL, k2 = 0xbf58476d1ce4e5b9ULL;
  uint64_t lanes[4] = {seed ^ k1, seed ^ k2, seed + k1, seed - k2};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int l = 0; l < 4; ++l) {
      lanes[l] = rotl(lanes[l] ^ (load<uint64_t>(data + i + 8 * l) * k2), 29) * k1;
    }
  }
  uint64_t h = size * k1;
  for (int l = 0; l < 4; ++l) h = mix(h ^ lanes[l]) + k2;
  for (; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return mix(h);
}

uint64_t blob_header_hash(const uint8_t* blob, size_t table_bytes) {
  const uint64_t h = hash64(blob, kHashedHeaderBytes, 0x6c6d6d6b);
  return hash64(blob + kBlobHeaderSize, table_bytes, h);
}

bool BlobView::read_header(const uint8_t* data, size_t size, const char* kind, uint32_t min_version,
                           uint32_t max_version, std::string& error) {
  if (data == nullptr || size < kBlobHeaderSize) {
    error = "file too small for a header (" + std::to_string(size) + " bytes)";
    return false;
  }
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    error = "buffer is not 16-byte aligned";
    return false;
  }
  if (std::memcmp(data + kOffMagic, kMagic, 4) != 0) {
    error = "not an lmmkit file (bad magic)";
    return false;
  }
  if (std::memcmp(data + kOffKind, kind, 4) != 0) {
    error = "wrong file kind '" + std::string(reinterpret_cast<const char*>(data + kOffKind), 4) + "', expected '" +
            std::string(kind, 4) + "'";
    return false;
  }
  if (load<uint32_t>(data + kOffEndian) != kEndianMarker) {
    error = "endianness marker mismatch (file written on a machine of other byte order?)";
    return false;
  }
  version_ = load<uint32_t>(data + kOffVersion);
  if (version_ < min_version || version_ > max_version) {
    error = "unsupported format version " + std::to_string(version_) + " (supported " + std::to_string(min_version) +
            ".." + std::to_string(max_version) + ")";
    return false;
  }
  flags_ = load<uint32_t>(data + kOffFlags);
  if ((flags_ & ~kBlobFlagPayloadHash) != 0) {
    error = "unknown header flags " + std::to_string(flags_);
    return false;
  }
  if (load<uint64_t>(data + kOffTotal) != size) {
    error = "size mismatch: header says " + std::to_string(load<uint64_t>(data + kOffTotal)) + " bytes, buffer has " +
            std::to_string(size) + " (truncated file?)";
    return false;
  }
  tensor_count_ = load<uint32_t>(data + kOffCount);
  const uint64_t table_end = kBlobHeaderSize + uint64_t(tensor_count_) * kBlobEntrySize;
  if (table_end > size) {
    error = "tensor table (" + std::to_string(tensor_count_) + " entries) exceeds the file";
    return false;
  }
  if (load<uint64_t>(data + kOffHeaderHash) != blob_header_hash(data, table_end - kBlobHeaderSize)) {
    error = "header or tensor table hash mismatch (corrupted file)";
    return false;
  }
  payload_offset_ = load<uint64_t>(data + kOffPayload);
  payload_hash_ = load<uint64_t>(data + kOffPayloadHash);
  if (payload_offset_ != align_up(table_end) || payload_offset_ > size) {
    error = "bad payload offset " + std::to_string(payload_offset_);
    return false;
  }
  for (uint64_t i = table_end; i < payload_offset_; ++i) {
    if (data[i] != 0) {
      error = "non-zero padding after the tensor table (corrupted file)";
      return false;
    }
  }
  return true;
}

bool BlobView::read_table(const uint8_t* data, size_t size, std::string& error) {
  tensors_.clear();
  tensors_.reserve(tensor_count_);
  for (uint32_t t = 0; t < tensor_count_; ++t) {
    const uint8_t* e = data + kBlobHeaderSize + size_t(t) * kBlobEntrySize;
    const std::string where = "tensor #" + std::to_string(t);
    if (std::memchr(e, 0, kBlobNameCapacity) == nullptr) {
      error = where + ": name is not terminated";
      return false;
    }
    TensorView v;
    v.name = reinterpret_cast<const char*>(e);
    v.dtype = static_cast<DType>(load<uint32_t>(e + kEntDType));
    v.rank = static_cast<int>(load<uint32_t>(e + kEntRank));
    const size_t esize = dtype_size(v.dtype);
    if (esize == 0 || v.rank < 1 || v.rank > kBlobMaxRank) {
      error = where + " '" + v.name + "': bad dtype or rank";
      return false;
    }
    uint64_t count = 1;
    for (int d = 0; d < kBlobMaxRank; ++d) {
      v.dims[d] = load<uint64_t>(e + kEntDims + 8 * d);
      const bool used = d < v.rank;
      if ((!used && v.dims[d] != 0) || (used && !checked_mul(count, v.dims[d], count))) {
        error = where + " '" + v.name + "': bad shape";
        return false;
      }
    }
    uint64_t bytes = 0;
    const uint64_t offset = load<uint64_t>(e + kEntOffset);
    if (!checked_mul(count, esize, bytes) || offset % kBlobAlignment != 0 || offset < payload_offset_ ||
        offset > size || bytes > size - offset) {
      error = where + " '" + v.name + "': data out of bounds";
      return false;
    }
    v.element_count = count;
    v.data = data + offset;
    tensors_.push_back(std::move(v));
  }
  return check_distinct(error);
}

bool BlobView::check_distinct(std::string& error) const {
  // Tensors may not share bytes or names: overlapping tensors could make a small file claim
  // far more data than it holds, and a duplicate name would make lookups ambiguous.
  std::vector<const TensorView*> order;
  order.reserve(tensors_.size());
  for (const TensorView& t : tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorView* a, const TensorView* b) { return a->data < b->data; });
  for (size_t i = 1; i < order.size(); ++i) {
    const TensorView& prev = *order[i - 1];
    if (prev.data + prev.element_count * dtype_size(prev.dtype) > order[i]->data) {
      error = "tensors '" + prev.name + "' and '" + order[i]->name + "' overlap";
      return false;
    }
  }
  std::sort(order.begin(), order.end(), [](const TensorView* a, const TensorView* b) { return a->name < b->name; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->name == order[i]->name) {
      error = "tensor name '" + order[i]->name + "' appears twice";
      return false;
    }
  }
  return true;
}

bool BlobView::open(const uint8_t* data, size_t size, const char* kind, uint32_t min_version, uint32_t max_version,
                    std::string& error) {
  tensors_.clear();
  if (!read_header(data, size, kind, min_version, max_version, error)) return false;
  if (!read_table(data, size, error)) {
    tensors_.clear();
    return false;
  }
  if ((flags_ & kBlobFlagPayloadHash) != 0 && hash64(data + payload_offset_, size - payload_offset_) != payload_hash_) {
    error = "payload hash mismatch (corrupted file)";
    tensors_.clear();
    return false;
  }
  return true;
}

const TensorView* BlobView::find(const std::string& name) const {
  for (const TensorView& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const TensorView* BlobView::require(const std::string& name, DType dtype, int rank, std::string& error) const {
  const TensorView* t = find(name);
  if (t == nullptr) {
    error = "missing tensor '" + name + "'";
  } else if (t->dtype != dtype || t->rank != rank) {
    error = "tensor '" + name + "' has unexpected dtype or rank";
    t = nullptr;
  }
  return t;
}

const TensorView* BlobView::require_shape(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                                          std::string& error) const {
  const TensorView* t = require(name, dtype, static_cast<int>(shape.size()), error);
  if (t == nullptr) return nullptr;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != kAnyDim && t->dims[d] != uint64_t(shape[d])) {
      error = "tensor '" + name + "' dimension " + std::to_string(d) + " is " + std::to_string(t->dims[d]) +
              ", expected " + std::to_string(shape[d]);
      return nullptr;
    }
  }
  if (t->element_count > uint64_t(INT32_MAX)) {
    error = "tensor '" + name + "' is too large";
    return nullptr;
  }
  return t;
}

uint16_t float_to_half(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past the largest half
  if (abs < 0x38800000u) {                                  // half subnormal or zero
    const uint32_t shift = 126u - (abs >> 23);              // 14 + (113 - exponent)
    if (shift > 24u) return uint16_t(sign);
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return uint16_t(sign | half);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  uint32_t f;
  if (exponent == 0x1fu) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {  // subnormal: normalise
    int e = -1;
    uint32_t m = mantissa;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    f = sign | (uint32_t(112 - e) << 23) | ((m & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &f, 4);
  return value;
}

AlignedBuffer::AlignedBuffer(size_t size)
    : data_(static_cast<uint8_t*>(::operator new(size == 0 ? 1 : size, std::align_val_t(kBlobAlignment)))),
      size_(size) {}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::operator delete(data_, std::align_val_t(kBlobAlignment));
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ != nullptr) ::operator delete(data_, std::align_val_t(kBlobAlignment));
}

bool regular_file_size(const std::string& path, uint64_t max_bytes, uint64_t& size, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) {
    error = path + ": no such file";
    return false;
  }
  if (ec || status.type() != fs::file_type::regular) {
    const bool directory = status.type() == fs::file_type::directory;
    error = path + (ec          ? ": cannot read its status (" + ec.message() + ")"
                    : directory ? std::string(": is a directory, not a file")
                                : std::string(": is not a regular file (a FIFO, socket or device)"));
    return false;
  }
  size = uint64_t(fs::file_size(path, ec));
  if (ec) {
    error = path + ": cannot read its size (" + ec.message() + ")";
    return false;
  }
  if (size <= max_bytes) return true;
  error = path + ": " + std::to_string(size) + " bytes, over the limit of " + std::to_string(max_bytes);
  return false;
}

bool read_file(const std::string& path, AlignedBuffer& out, std::string& error) {
  uint64_t size = 0;
  if (!regular_file_size(path, kMaxAssetFileBytes, size, error)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open for reading";
    return false;
  }
  AlignedBuffer buffer;
  try {
    if (size > uint64_t(SIZE_MAX)) throw std::bad_alloc();
    buffer = AlignedBuffer(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    error = path + ": " + std::to_string(size) + " bytes do not fit in memory";
    return false;
  }
  if (!in.read(reinterpret_cast<char*>(buffer.data()), std::streamsize(size))) {
    error = path + ": read error";
    return false;
  }
  out = std::move(buffer);
  return true;
}

}  // namespace lmm
