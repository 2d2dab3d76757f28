// Corrupted model bundles: every single-byte change of the header and tensor table, 10,000
// random payload bit flips and every truncation are rejected with a message; with payload
// hashing off, a bundle that still loads evaluates to finite outputs. Run under ASan/UBSan in
// the asan configuration, which also catches any out-of-bounds read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "lmm/blob_writer.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
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
bool loads(const std::vector<uint8_t>& bytes, std::shared_ptr<const Model>& model, AlignedBuffer& buffer) {
  model = nullptr;
  buffer = test::aligned_copy(bytes);
  std::string error;
  model = Model::load_buffer(buffer.data(), buffer.size(), error);
  const bool ok = model != nullptr;
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
  std::shared_ptr<const Model> model;
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
  std::shared_ptr<const Model> model;
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
    std::shared_ptr<const Model> model;
    AlignedBuffer buffer;
    if (!loads(bytes, model, buffer)) continue;
    ++loaded;
    ModelEvaluator eval;
    std::string error;
    ASSERT_TRUE(eval.init(model, 1, KernelPath::Auto, error)) << error;
    ASSERT_LE(size_t(model->pose_layout().size()), output.size());
    ASSERT_LE(size_t(model->state_size()), input.size());
    eval.decode(input.data(), output.data());
    for (int i = 0; i < model->pose_layout().size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
    eval.step(input.data(), output.data());
    eval.project(input.data(), output.data() + model->state_size());
    for (int i = 0; i < 2 * model->state_size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
  }
  EXPECT_GT(loaded, 1000u);  // most flips hit weights, which stay loadable
  EXPECT_EQ(non_finite, 0u) << "over " << loaded << " loaded corrupted bundles";
}

// Recomputes the header hash (format: hash64 of header bytes 0..55 with seed "lmmk", then of
// the tensor table seeded with that), so that structural changes get past the hash check.
void reseal(std::vector<uint8_t>& bytes) {
  const uint64_t h = hash64(bytes.data(), 56, 0x6c6d6d6b);
  const uint64_t sealed = hash64(bytes.data() + kBlobHeaderSize, table_end(bytes) - kBlobHeaderSize, h);
  std::memcpy(bytes.data() + 56, &sealed, 8);
}

// Loads `bytes` and, if that succeeds, evaluates every network once on every kernel path:
// outputs must be finite. Returns whether it loaded.
bool loads_and_evaluates_finite(const std::vector<uint8_t>& bytes, size_t& non_finite) {
  std::shared_ptr<const Model> model;
  AlignedBuffer buffer;
  if (!loads(bytes, model, buffer)) return false;
  std::vector<float> input(4096), output(4096);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(float(i));
  for (KernelPath path : {KernelPath::Scalar, KernelPath::Auto}) {
    ModelEvaluator eval;
    std::string error;
    EXPECT_TRUE(eval.init(model, 3, path, error)) << error;
    EXPECT_TRUE(eval.decode_batch(input.data(), 3, output.data()));
    for (int i = 0; i < 3 * model->pose_layout().size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
    EXPECT_TRUE(eval.step_batch(input.data(), 3, output.data()));
    EXPECT_TRUE(eval.project(input.data(), output.data() + 3 * model->state_size()));
    for (int i = 0; i < 4 * model->state_size(); ++i) non_finite += !std::isfinite(output[size_t(i)]);
  }
  return true;
}

TEST(ModelCorruption, TableChangesWithARecomputedHashAreRejectedOrSafe) {
  const std::vector<uint8_t> original = bundle();
  const size_t entries = (table_end(original) - kBlobHeaderSize) / kBlobEntrySize;
  std::mt19937 rng(7);
  size_t loaded = 0, non_finite = 0;
  for (int n = 0; n < 20000; ++n) {
    std::vector<uint8_t> bytes = original;
    // A random bit of a random entry's dtype, rank, dims or offset field (bytes 48..95), or
    // now and then of its name.
    const size_t entry = kBlobHeaderSize + (rng() % entries) * kBlobEntrySize;
    const size_t field = n % 8 == 0 ? rng() % 48 : 48 + rng() % 48;
    bytes[entry + field] ^= uint8_t(1u << (rng() % 8));
    reseal(bytes);
    loaded += loads_and_evaluates_finite(bytes, non_finite);
  }
  EXPECT_EQ(non_finite, 0u) << "over " << loaded << " loaded bundles";
}

// The tensors of `bytes` rebuilt (hash on) after `edit` may drop, replace or add entries.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<uint64_t> shape;
  const void* data;
};
std::vector<uint8_t> rebuilt(const std::vector<uint8_t>& bytes, const std::function<void(std::vector<Entry>&)>& edit) {
  static AlignedBuffer buffer;  // keeps the source tensors alive for the entries
  buffer = test::aligned_copy(bytes);
  BlobView view;
  std::string error;
  EXPECT_TRUE(view.open(buffer.data(), buffer.size(), kModelKind, kModelVersion, kModelVersion, error)) << error;
  std::vector<Entry> entries;
  for (const TensorView& t : view.tensors()) {
    entries.push_back({t.name, t.dtype, std::vector<uint64_t>(t.dims, t.dims + t.rank), t.data});
  }
  edit(entries);
  BlobBuilder builder;
  for (const Entry& e : entries) builder.add(e.name, e.dtype, e.shape, e.data);
  std::vector<uint8_t> out;
  EXPECT_TRUE(builder.build(kModelKind, kModelVersion, true, out, error)) << error;
  return out;
}

Entry& find(std::vector<Entry>& entries, const std::string& name) {
  for (Entry& e : entries) {
    if (e.name == name) return e;
  }
  ADD_FAILURE() << "no tensor " << name;
  return entries.front();
}

// Loading `bytes` fails with a message containing `fragment`.
void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  const AlignedBuffer buffer = test::aligned_copy(bytes);
  std::string error;
  EXPECT_EQ(Model::load_buffer(buffer.data(), buffer.size(), error), nullptr) << "expected: " << fragment;
  EXPECT_NE(error.find(fragment), std::string::npos) << error;
}

TEST(ModelCorruption, ConsistentlyHashedButWrongBundlesAreRejectedByName) {
  std::string error;
  const std::vector<uint8_t> good = test::synthetic_bundle(test::random_model_values(kLatent, 78, false, true), false, error);
  ASSERT_FALSE(good.empty()) << error;
  static const int32_t bad_configs[][4] = {{-1, 2, 1, 0}, {5, 0, 1, 0}, {5, 9, 1, 0}, {5, 2, 65, 0}, {0, 0, 0, 0}};
  for (const auto& config : bad_configs) {
    expect_rejected(rebuilt(good, [&](std::vector<Entry>& e) { find(e, "stepper.config").data = config; }),
                    "'stepper.config' is not a valid network");
  }
  static const char gelu_tanh[] = "gelu_tanh";
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) {
                    Entry& a = find(e, "meta.activation");
                    a.data = gelu_tanh;
                    a.shape = {9};
                  }),
                  "unsupported activation 'gelu_tanh'");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) { find(e, "decoder.expert0.weight").shape[0] -= 1; }),
                  "decoder.expert0.weight");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) { find(e, "decoder.mlp0.bias").shape[0] -= 1; }),
                  "decoder.mlp0");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) { find(e, "decoder.mlp1.weight").dtype = DType::U8; }),
                  "decoder.mlp1");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) { find(e, "stepper.config").dtype = DType::F32; }),
                  "stepper.config");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) {
                    e.erase(std::remove_if(e.begin(), e.end(), [](const Entry& x) { return x.name == "encoder.input_std"; }),
                            e.end());
                  }),
                  "missing tensor 'encoder.input_std'");
  expect_rejected(rebuilt(good, [](std::vector<Entry>& e) {
                    Entry copy = find(e, "decoder.pose_mean");
                    e.push_back(copy);
                  }),
                  "appears twice");
}

TEST(ModelCorruption, OverlappingTensorsAreRejected) {
  std::vector<uint8_t> bytes = bundle();
  // Point entry 1 at entry 0's data (both offsets 64-byte aligned), then reseal.
  std::memcpy(bytes.data() + kBlobHeaderSize + kBlobEntrySize + 88, bytes.data() + kBlobHeaderSize + 88, 8);
  reseal(bytes);
  expect_rejected(bytes, "overlap");
}

TEST(ModelCorruption, EveryTruncationIsRejected) {
  const std::vector<uint8_t> original = bundle();
  std::shared_ptr<const Model> model;
  AlignedBuffer buffer;
  size_t accepted = 0;
  for (size_t size = 0; size < original.size(); ++size) {
    accepted += loads(std::vector<uint8_t>(original.begin(), original.begin() + std::ptrdiff_t(size)), model, buffer);
  }
  EXPECT_EQ(accepted, 0u) << "of " << original.size() << " truncations";
}

}  // namespace
