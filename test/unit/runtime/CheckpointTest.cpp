//===- CheckpointTest.cpp - checkpoints: save, find, load, refuse ---------===//

#include "runtime/src/Checkpoint/Checkpoint.h"

#include "runtime/src/Core/Files.h"
#include "runtime/src/Data/Npy.h"
#include "runtime/src/Log/Json.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dtcrt;

namespace {

TEST(Checkpoint, Crc32IsZlibs) {
  EXPECT_EQ(0xcbf43926u, crc32("123456789", 9));
  EXPECT_EQ(0u, crc32("", 0));
  EXPECT_EQ(crc32("123456789", 9), crc32("6789", 4, crc32("12345", 5)));
}

/// Two tensors to save and two buffers to load them into.
struct CheckpointTest : ::testing::Test {
  CheckpointTest() {
    for (int i = 0; i < 6; ++i)
      w[i] = float(i) * 0.5f;
    m[0] = 42;
    m[1] = -7;
  }
  std::vector<CheckpointTensor> saved() {
    return {{"fc.weight", "parameter", DType::F32, {2, 3}, w, sizeof(w)},
            {"fc.weight/exp avg",
             "optimizer_state",
             DType::I64,
             {2},
             m,
             sizeof(m)}};
  }
  std::vector<CheckpointTensor> targets() {
    return {{"fc.weight", "parameter", DType::F32, {2, 3}, w2, sizeof(w2)},
            {"fc.weight/exp avg",
             "optimizer_state",
             DType::I64,
             {2},
             m2,
             sizeof(m2)}};
  }
  bool save(int64_t step, std::string &path, std::string &error) {
    return saveCheckpoint(dir.path(), "mlp", 8, {step, step * 8 % 20}, saved(),
                          {{"lr", 0.1}}, path, error);
  }

  test::TempFolder dir;
  float w[6], w2[6] = {};
  int64_t m[2], m2[2] = {};
};

TEST_F(CheckpointTest, SavesAndLoadsTheNewest) {
  std::string path, error;
  ASSERT_TRUE(save(3, path, error)) << error;
  EXPECT_EQ(dir / "step-00000003", path);
  w[0] = 100;
  ASSERT_TRUE(save(12, path, error)) << error;
  EXPECT_EQ(dir / "step-00000012", path);

  // The manifest and the files are what Checkpoint.h says.
  std::string text;
  ASSERT_TRUE(readFile(path + "/manifest.json", text, error)) << error;
  JsonValue manifest;
  ASSERT_TRUE(parseJson(text, manifest, error)) << error;
  int64_t step = 0, position = 0;
  EXPECT_TRUE(manifest.get("step")->asInt64(step));
  EXPECT_TRUE(manifest.get("data_position")->asInt64(position));
  EXPECT_EQ(12, step);
  EXPECT_EQ(16, position);
  EXPECT_EQ(0.1, manifest.get("hyperparameters")->get("lr")->number);
  const JsonValue &second = manifest.get("tensors")->array[1];
  EXPECT_EQ("fc.weight/exp avg", second.get("name")->string);
  EXPECT_EQ("0001-fc.weight_exp_avg.npy", second.get("file")->string);
  char expected[32];
  std::snprintf(expected, sizeof(expected), "crc32:%08x", crc32(m, sizeof(m)));
  EXPECT_EQ(expected, second.get("checksum")->string);
  NpyArray array;
  ASSERT_TRUE(readNpy(path + "/0000-fc.weight.npy", array, error)) << error;
  EXPECT_EQ((std::vector<int64_t>{2, 3}), array.shape);

  // Leftovers of a crash are not checkpoints.
  ASSERT_TRUE(createFolders(dir / ".tmp-step-00000099-1", error));
  ASSERT_TRUE(createFolders(dir / "step-00000050", error)); // no manifest
  std::string newest;
  ASSERT_TRUE(findNewestCheckpoint(dir.path(), newest, error)) << error;
  EXPECT_EQ(dir / "step-00000012", newest);

  CheckpointPosition at;
  ASSERT_TRUE(loadCheckpoint(newest, targets(), at, error)) << error;
  EXPECT_EQ(12, at.step);
  EXPECT_EQ(16, at.dataPosition);
  EXPECT_EQ(0, std::memcmp(w, w2, sizeof(w)));
  EXPECT_EQ(-7, m2[1]);
}

TEST_F(CheckpointTest, ReplacesACheckpointOfTheSameStep) {
  std::string path, error;
  ASSERT_TRUE(save(4, path, error)) << error;
  w[5] = -1;
  ASSERT_TRUE(save(4, path, error)) << error;
  CheckpointPosition at;
  ASSERT_TRUE(loadCheckpoint(path, targets(), at, error)) << error;
  EXPECT_EQ(-1, w2[5]);
  std::vector<std::string> names;
  ASSERT_TRUE(listFolder(dir.path(), names, error));
  EXPECT_EQ(std::vector<std::string>{"step-00000004"}, names);
}

TEST_F(CheckpointTest, RefusesCorruptOrForeignCheckpoints) {
  std::string path, error;
  ASSERT_TRUE(save(2, path, error)) << error;
  CheckpointPosition at;

  // Another model: a tensor missing, or of another shape.
  std::vector<CheckpointTensor> more = targets();
  float extra[1];
  more.push_back({"bias", "parameter", DType::F32, {1}, extra, 4});
  EXPECT_FALSE(loadCheckpoint(path, more, at, error));
  EXPECT_NE(std::string::npos, error.find("it lacks parameter 'bias'"))
      << error;
  std::vector<CheckpointTensor> fewer = {targets()[0]};
  EXPECT_FALSE(loadCheckpoint(path, fewer, at, error));
  EXPECT_NE(std::string::npos,
            error.find("it holds optimizer_state 'fc.weight/exp avg', which "
                       "this model does not have"))
      << error;
  std::vector<CheckpointTensor> reshaped = targets();
  reshaped[0].shape = {3, 2};
  EXPECT_FALSE(loadCheckpoint(path, reshaped, at, error));
  EXPECT_NE(std::string::npos,
            error.find("parameter 'fc.weight' is f32(2, 3) there but "
                       "f32(3, 2) in this model"))
      << error;

  // A flipped byte in a tensor file.
  std::string file = path + "/0000-fc.weight.npy", bytes;
  ASSERT_TRUE(readFile(file, bytes, error));
  bytes.back() ^= 0x40;
  ASSERT_TRUE(writeFileDurably(file, bytes.data(), bytes.size(), error));
  EXPECT_FALSE(loadCheckpoint(path, targets(), at, error));
  EXPECT_NE(std::string::npos, error.find("'0000-fc.weight.npy' is corrupt"))
      << error;

  // A manifest that is not one.
  std::string junk = "{\"format\": \"other\"}";
  ASSERT_TRUE(writeFileDurably(path + "/manifest.json", junk.data(),
                               junk.size(), error));
  EXPECT_FALSE(loadCheckpoint(path, targets(), at, error));
  EXPECT_NE(std::string::npos, error.find("not a dtc checkpoint manifest"))
      << error;
}

TEST_F(CheckpointTest, RefusesFilesOutsideTheCheckpoint) {
  std::string path, error;
  ASSERT_TRUE(save(1, path, error)) << error;
  std::string text;
  ASSERT_TRUE(readFile(path + "/manifest.json", text, error));
  size_t at = text.find("0000-fc.weight.npy");
  text.replace(at, std::strlen("0000-fc.weight.npy"), "../../etc/passwd");
  ASSERT_TRUE(writeFileDurably(path + "/manifest.json", text.data(),
                               text.size(), error));
  CheckpointPosition position;
  EXPECT_FALSE(loadCheckpoint(path, targets(), position, error));
  EXPECT_NE(std::string::npos, error.find("which is not inside the checkpoint"))
      << error;
}

TEST_F(CheckpointTest, SaysWhenThereIsNothingToResume) {
  std::string path, error;
  EXPECT_FALSE(findNewestCheckpoint(dir.path(), path, error));
  EXPECT_NE(std::string::npos, error.find("no complete checkpoint in"))
      << error;
  EXPECT_FALSE(findNewestCheckpoint(dir / "absent", path, error));
  EXPECT_NE(std::string::npos, error.find("does not exist")) << error;
}

} // namespace
