// Corrupted model bundles: every single-byte change of the header and tensor table, 10,000
// random payload bit flips and every truncation are rejected with a message; with payload
// hashing off, a bundle that still loads evaluates to finite outputs. Run under ASan/UBSan in
// the asan configuration, which also catches any out-of-bounds read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "lmm/model.hpp"
#include "lmm/nn.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

constexpr int kLatent = 3;

std::vector<uint8_t> bundle() {
  std::string error;
  std::vector<uint8_t> bytes = test::synthetic_bundle(test::random_model_values(kLatent, 77), false, error);
  EXPECT_FALSE(bytes.empty()) << error;
  return bytes;
}

// The same tensors re-serialised without the payload hash.
std::vector<uint8_t> unhashed(const std::vector<uint8_t>& bytes) {
  const AlignedBuffer buffer = test::aligned_copy(bytes);
  BlobView view;
  std::string error;
  EXPECT_TRUE(view.open(buffer.data(), buffer.size(), kModelKind, kModelVersion, kModelVersion, error)) << error;
  BlobBuilder builder;
  for (const TensorView& t : view.tensors()) {
    builder.add(t.name, t.dtype, std::vector<uint64_t>(t.dims, t.dims + t.rank), t.data);
  }
  std::vector<uint8_t> out;
  EXPECT_TRUE(builder.build(kModelKind, kModelVersion, false, out, error)) << error;
  return out;
}

// Loads `bytes`; on failure requires a message.
bool loads(const std::vector<uint8_t>& bytes, Model& model, AlignedBuffer& buffer) {
  buffer = test::aligned_copy(bytes);
  std::string error;
  const bool ok = model.load_buffer(buffer.data(), buffer.size(), error);
  EXPECT_TRUE(ok || !error.empty());
  return ok;
}

size_t table_end(const std::vector<uint8_t>& bytes) {
  uint32_t count = 0;
  std::memcpy(&count, bytes.data() + 20, 4);
  return kBlobHeaderSize + size_t(count) * kBlobEntrySize;
}

TEST(ModelCorruption, EveryHeaderAndTableByteChangeIsRejected) {
  const std::vector<uint8_t> original = bundle();
  const size_t end = table_end(original);
  ASSERT_LT(end, original.size());
  Model model;
  AlignedBuffer buffer;
  ASSERT_TRUE(loads(original, model, buffer));
  size_t accepted = 0;
  for (size_t i = 0; i < end; ++i) {
    for (const uint8_t change : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> bytes = original;
      bytes[i] ^= change;
      accepted += loads(bytes, model, buffer);
    }
  }
  EXPECT_EQ(accepted, 0u) << "of " << 3 * end << " header / table changes";
}

TEST(ModelCorruption, RandomPayloadBitFlipsAreRejectedByTheHash) {
  const std::vector<uint8_t> original = bundle();
  const size_t begin = table_end(original);
  std::mt19937 rng(5);
  Model model;
  AlignedBuffer buffer;
  size_t accepted = 0;
  for (int n = 0; n < 10000; ++n) {
    std::vector<uint8_t> bytes = original;
    const size_t at = begin + rng() % (bytes.size() - begin);
    bytes[at] ^= uint8_t(1u << (rng() % 8));
    accepted += loads(bytes, model, buffer);
  }
  EXPECT_EQ(accepted, 0u);
}

TEST(ModelCorruption, UnhashedPayloadFlipsAreRejectedOrEvaluateToFiniteOutputs) {
  const std::vector<uint8_t> original = unhashed(bundle());
  const size_t begin = table_end(original);
  std::mt19937 rng(6);
  std::vector<float> input(64, 0.0f), output(256, 0.0f);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(float(i));
  size_t loaded = 0, non_finite = 0;
  for (int n = 0; n < 10000; ++n) {
    std::vector<uint8_t> bytes = original;
    const size_t at = begin + rng() % (bytes.size() - begin);
    bytes[at] ^= uint8_t(1u << (rng() % 8));
    Model model;
    AlignedBuffer buffer;
    if (!loads(bytes, model, buffer)) continue;
    ++loaded;
    ModelEvaluator eval;
    std::string error;
    ASSERT_TRUE(eval.init(model, 1, KernelPath::Auto, error)) << error;
    ASSERT_LE(size_t(model.pose_layout().size()), output.size());
    ASSERT_LE(size_t(model.state_size()), input.size());
    eval.decode(input.data(), output.data());
    for (int i = 0; i < model.pose_layout().size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
    eval.step(input.data(), output.data());
    eval.project(input.data(), output.data() + model.state_size());
    for (int i = 0; i < 2 * model.state_size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
  }
  EXPECT_GT(loaded, 1000u);  // most flips hit weights, which stay loadable
  EXPECT_EQ(non_finite, 0u) << "over " << loaded << " loaded corrupted bundles";
}

TEST(ModelCorruption, EveryTruncationIsRejected) {
  const std::vector<uint8_t> original = bundle();
  Model model;
  AlignedBuffer buffer;
  size_t accepted = 0;
  for (size_t size = 0; size < original.size(); ++size) {
    accepted += loads(std::vector<uint8_t>(original.begin(), original.begin() + std::ptrdiff_t(size)), model, buffer);
  }
  EXPECT_EQ(accepted, 0u) << "of " << original.size() << " truncations";
}

}  // namespace
