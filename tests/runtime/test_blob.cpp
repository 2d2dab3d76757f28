#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "lmm/asset/blob.hpp"
#include "lmm/blob_writer.hpp"
#include "support/synthetic_database.hpp"

using namespace lmm;

namespace {

std::vector<uint8_t> small_blob(bool hash_payload) {
  static const float values[] = {1, 2, 3, 4, 5, 6};
  static const int32_t ints[] = {7, -8, 9, 10};
  BlobBuilder b;
  b.add("values", DType::F32, {2, 3}, values);
  b.add("ints", DType::I32, {4}, ints);
  b.add_text("note", "hello\nworld\n");
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_TRUE(b.build("TEST", 3, hash_payload, out, error)) << error;
  return out;
}

bool opens(const std::vector<uint8_t>& bytes, std::string& error) {
  const AlignedBuffer buffer = test::aligned_copy(bytes);
  BlobView view;
  return view.open(buffer.data(), buffer.size(), "TEST", 1, 3, error);
}

TEST(Blob, RoundTripKeepsNamesShapesAndValues) {
  const std::vector<uint8_t> bytes = small_blob(true);
  const AlignedBuffer buffer = test::aligned_copy(bytes);
  BlobView view;
  std::string error;
  ASSERT_TRUE(view.open(buffer.data(), buffer.size(), "TEST", 1, 3, error)) << error;
  EXPECT_EQ(view.version(), 3u);
  ASSERT_EQ(view.tensors().size(), 3u);
  const TensorView* v = view.require("values", DType::F32, 2, error);
  ASSERT_NE(v, nullptr) << error;
  EXPECT_EQ(v->dims[0], 2u);
  EXPECT_EQ(v->dims[1], 3u);
  EXPECT_EQ(v->f32()[5], 6.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v->data) % kBlobAlignment, 0u);
  EXPECT_EQ(view.find("ints")->i32()[1], -8);
  EXPECT_EQ(view.find("note")->text(), "hello\nworld\n");
  EXPECT_EQ(view.require("values", DType::I32, 2, error), nullptr);
  EXPECT_EQ(view.require("missing", DType::F32, 1, error), nullptr);
  EXPECT_NE(error.find("'missing'"), std::string::npos);
}

TEST(Blob, RejectsWrongKindAndVersion) {
  const AlignedBuffer buffer = test::aligned_copy(small_blob(true));
  BlobView view;
  std::string error;
  EXPECT_FALSE(view.open(buffer.data(), buffer.size(), "MMDB", 1, 3, error));
  EXPECT_NE(error.find("kind"), std::string::npos) << error;
  EXPECT_FALSE(view.open(buffer.data(), buffer.size(), "TEST", 4, 9, error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
}

TEST(Blob, RejectsEverySingleByteFlipBeforeThePayload) {
  const std::vector<uint8_t> bytes = small_blob(false);
  uint64_t payload_offset = 0;
  std::memcpy(&payload_offset, bytes.data() + 32, 8);
  ASSERT_GT(payload_offset, kBlobHeaderSize);
  for (size_t i = 0; i < payload_offset; ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= mask;
      std::string error;
      EXPECT_FALSE(opens(bad, error)) << "byte " << i << " mask " << int(mask);
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST(Blob, RejectsEveryTruncation) {
  const std::vector<uint8_t> bytes = small_blob(true);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string error;
    EXPECT_FALSE(opens(std::vector<uint8_t>(bytes.begin(), bytes.begin() + long(n)), error)) << n;
  }
}

TEST(Blob, PayloadHashCatchesRandomBitFlips) {
  const std::vector<uint8_t> bytes = small_blob(true);
  uint64_t payload_offset = 0;
  std::memcpy(&payload_offset, bytes.data() + 32, 8);
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pos(payload_offset, bytes.size() - 1);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bad = bytes;
    bad[pos(rng)] ^= uint8_t(1u << (rng() % 8));
    std::string error;
    EXPECT_FALSE(opens(bad, error)) << "trial " << trial;
  }
}

TEST(Blob, RejectsMisalignedBuffer) {
  const std::vector<uint8_t> bytes = small_blob(true);
  AlignedBuffer buffer(bytes.size() + 8);
  std::memcpy(buffer.data() + 8, bytes.data(), bytes.size());
  BlobView view;
  std::string error;
  EXPECT_FALSE(view.open(buffer.data() + 8, bytes.size(), "TEST", 1, 3, error));
  EXPECT_NE(error.find("aligned"), std::string::npos) << error;
}

TEST(Blob, HashIsDeterministicAndSensitive) {
  std::vector<uint8_t> a(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 7);
  std::vector<uint8_t> b = a;
  EXPECT_EQ(hash64(a.data(), a.size()), hash64(b.data(), b.size()));
  b[999] ^= 1;
  EXPECT_NE(hash64(a.data(), a.size()), hash64(b.data(), b.size()));
  EXPECT_NE(hash64(a.data(), 999), hash64(a.data(), 1000));
  EXPECT_NE(hash64(a.data(), 100, 1), hash64(a.data(), 100, 2));
}

TEST(Blob, BuilderRejectsOverlongNames) {
  const float v = 1.0f;
  BlobBuilder b;
  b.add(std::string(kBlobNameCapacity, 'x'), DType::F32, {1}, &v);
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_FALSE(b.build("TEST", 1, true, out, error));
  EXPECT_FALSE(error.empty());
}

// A valid hashed blob of about 64 KB whose values all equal `tag`.
std::vector<uint8_t> tagged_blob(float tag) {
  const std::vector<float> values(16384, tag);
  BlobBuilder b;
  b.add("values", DType::F32, {values.size()}, values.data());
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_TRUE(b.build("TEST", 1, true, out, error)) << error;
  return out;
}

// Issue 12 item 4: writers to one path never share a temporary file, so with concurrent writers
// the file is always one writer's complete blob (the old fixed "<out>.tmp" mixed them).
TEST(Blob, ConcurrentWritersAlwaysLeaveACompleteFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "lmm_concurrent_writers";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.bin").string();
  constexpr int kWriters = 4, kWrites = 60;
  std::atomic<int> failed_writes{0}, running{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const std::vector<uint8_t> bytes = tagged_blob(float(w + 1));
      std::string error;
      for (int i = 0; i < kWrites; ++i) {
        if (!write_file_atomic(path, bytes.data(), bytes.size(), error)) ++failed_writes;
      }
      --running;
    });
  }
  int reads = 0, bad_reads = 0;
  std::string error;
  while (running > 0) {
    AlignedBuffer buffer;
    if (!read_file(path, buffer, error)) continue;  // not written yet
    BlobView view;
    ++reads;
    if (!view.open(buffer.data(), buffer.size(), "TEST", 1, 1, error)) ++bad_reads;
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failed_writes, 0);
  EXPECT_EQ(bad_reads, 0) << "of " << reads << " reads";
  AlignedBuffer final_file;
  ASSERT_TRUE(read_file(path, final_file, error)) << error;
  BlobView view;
  ASSERT_TRUE(view.open(final_file.data(), final_file.size(), "TEST", 1, 1, error)) << error;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1) << "temporary files were left beside " << path;
  fs::remove_all(dir);
}

TEST(Blob, WriteFailuresNameTheCause) {
  const std::vector<uint8_t> bytes = small_blob(true);
  std::string error;
  EXPECT_FALSE(write_file_atomic(testing::TempDir(), bytes.data(), bytes.size(), error));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
  EXPECT_FALSE(write_file_atomic("/nonexistent/dir/x.bin", bytes.data(), bytes.size(), error));
  EXPECT_NE(error.find("/nonexistent/dir/x.bin: cannot create the temporary file"), std::string::npos) << error;
}

TEST(Blob, FileHoldsComparesWhatWasWritten) {
  const std::vector<uint8_t> bytes = small_blob(true);
  const std::string path = testing::TempDir() + "lmm_file_holds.bin";
  std::string error;
  ASSERT_TRUE(write_file_atomic(path, bytes.data(), bytes.size(), error)) << error;
  EXPECT_TRUE(file_holds(path, bytes.data(), bytes.size(), error)) << error;
  std::vector<uint8_t> other = bytes;
  other[other.size() / 2] ^= 1;
  EXPECT_FALSE(file_holds(path, other.data(), other.size(), error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_FALSE(file_holds(path, bytes.data(), bytes.size() - 1, error));
  std::remove(path.c_str());
  EXPECT_FALSE(file_holds(path, bytes.data(), bytes.size(), error));
}

}  // namespace
