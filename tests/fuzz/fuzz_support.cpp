#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lmm::fuzz {
namespace {

// Header field offsets (docs/formats/blob.md).
constexpr size_t kOffTensorCount = 20, kOffTotalSize = 24, kOffPayloadOffset = 32, kOffPayloadHash = 40,
                 kOffHeaderHash = 56;

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::abort();
}

}  // namespace

const std::string& scratch_file(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("lmm-fuzz-input", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) die("memfd_create");
  if (ftruncate(fd, 0) != 0) die("ftruncate");
  for (size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, off_t(done));
    if (n <= 0) die("pwrite");
    done += size_t(n);
  }
  return path;
}

AlignedBuffer aligned_copy(const uint8_t* data, size_t size) {
  AlignedBuffer buffer(size);
  if (size > 0) std::memcpy(buffer.data(), data, size);
  return buffer;
}

void reseal_blob(AlignedBuffer& buffer) {
  uint8_t* blob = buffer.data();
  const uint64_t size = buffer.size();
  if (size < kBlobHeaderSize) return;
  std::memcpy(blob + kOffTotalSize, &size, sizeof size);
  uint64_t payload = 0;
  std::memcpy(&payload, blob + kOffPayloadOffset, sizeof payload);
  if (payload <= size) {
    const uint64_t payload_hash = hash64(blob + payload, size - payload);
    std::memcpy(blob + kOffPayloadHash, &payload_hash, sizeof payload_hash);
  }
  uint32_t tensors = 0;
  std::memcpy(&tensors, blob + kOffTensorCount, sizeof tensors);
  const uint64_t table_bytes = uint64_t(tensors) * kBlobEntrySize;
  if (table_bytes <= size - kBlobHeaderSize) {
    const uint64_t header_hash = blob_header_hash(blob, table_bytes);
    std::memcpy(blob + kOffHeaderHash, &header_hash, sizeof header_hash);
  }
}

}  // namespace lmm::fuzz
