// Helpers shared by the libFuzzer targets: the fuzzer's bytes as a file path or as an aligned
// blob buffer, for loaders that only take those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lmm/asset/blob.hpp"

namespace lmm::fuzz {

// Path of a per-process in-memory file (memfd) that now holds exactly `size` bytes of `data`;
// the same path is rewritten on every call. Aborts if the file cannot be written.
const std::string& scratch_file(const uint8_t* data, size_t size);

// A kBlobAlignment-aligned copy of `size` bytes of `data` (loaders require 16-byte alignment).
AlignedBuffer aligned_copy(const uint8_t* data, size_t size);

// Rewrites the total size, payload hash and header hash fields of the blob in `buffer` to match
// its bytes, wherever the (mutated) header leaves them computable, so that a loader gets past
// those checks to the tensor table and the tensors.
void reseal_blob(AlignedBuffer& buffer);

// Loads the fuzzer's bytes as a blob-backed asset T (lmm::Database, lmm::Model) from an aligned
// copy, resealed first in targets built with LMM_FUZZ_RESEAL, and calls use(shared_ptr<const T>)
// when it loads.
template <typename T, typename Use>
void load_blob_input(const uint8_t* data, size_t size, const Use& use) {
  AlignedBuffer buffer = aligned_copy(data, size);
#ifdef LMM_FUZZ_RESEAL
  reseal_blob(buffer);
#endif
  std::string error;
  const std::shared_ptr<const T> loaded = T::load_buffer(buffer.data(), buffer.size(), error);
  if (loaded != nullptr) use(loaded);
}

}  // namespace lmm::fuzz
