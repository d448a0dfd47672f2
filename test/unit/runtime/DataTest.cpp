//===- DataTest.cpp - model descriptors, .npy data and synthetic data -----===//

#include "runtime/src/Core/Model.h"
#include "runtime/src/Data/DataSource.h"
#include "runtime/src/Data/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dtcrt;

namespace {

/// A model with a float, an integer and a bool input (global batch 4).
struct DataTest : ::testing::Test {
  DataTest() {
    args = {test::tensor("w", "parameter", "f32", {3}),
            test::tensor("x", "input", "f32", {4, 3}),
            test::tensor("y", "input", "i64", {4}, 0, 9),
            test::tensor("m", "input", "bool", {4}),
            test::tensor("h", "input", "f16", {4, 2})};
    results = {test::tensor("w", "parameter", "f32", {3}),
               test::tensor("loss", "metric", "f32", {})};
    desc = test::model(args, results);
    std::string error;
    EXPECT_TRUE(describeModel(&desc, info, error)) << error;
    for (int i : info.inputs)
      storage.emplace_back(info.args[i].bytes);
    for (auto &s : storage)
      buffers.push_back(s.data());
  }

  /// Writes `name`.npy with `rows` samples of input `input`'s sample shape,
  /// sample r filled with value r.
  std::string writeData(const std::string &name, int input, int64_t rows,
                        DType dtype) {
    const TensorInfo &t = info.args[info.inputs[input]];
    std::vector<int64_t> shape = t.shape;
    shape[0] = rows;
    int64_t per = t.sampleElements();
    std::vector<uint8_t> bytes(size_t(rows * per) * dtypeSize(dtype));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = 0; e < per; ++e)
        storeFromDouble(dtype, bytes.data(), r * per + e,
                        dtype == DType::Bool ? double(r % 2) : double(r));
    std::string path = dir / name, error;
    EXPECT_TRUE(
        writeNpyFile(path, dtype, shape, bytes.data(), bytes.size(), error));
    return path;
  }

  std::vector<DataSpec> allFiles(int64_t rows) {
    return {{"x", writeData("x.npy", 0, rows, DType::F32)},
            {"y", writeData("y.npy", 1, rows, DType::I64)},
            {"m", writeData("m.npy", 2, rows, DType::Bool)},
            {"h", writeData("h.npy", 3, rows, DType::F16)}};
  }

  test::TempFolder dir;
  std::vector<dtcrt_tensor_desc> args, results;
  dtcrt_model_desc desc;
  ModelInfo info;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<uint8_t *> buffers;
};

TEST_F(DataTest, TakesBatchesInOrderAndWraps) {
  std::unique_ptr<DataSource> data;
  std::string error;
  ASSERT_TRUE(openNpyData(info, allFiles(6), "--data", data, error)) << error;
  EXPECT_EQ(6, data->numSamples());
  // Stream position 4: samples 4, 5, 0, 1.
  data->fill(4, 4, buffers);
  const int64_t wantRows[] = {4, 5, 0, 1};
  for (int k = 0; k < 4; ++k) {
    for (int e = 0; e < 3; ++e)
      EXPECT_EQ(wantRows[k], loadAsDouble(DType::F32, buffers[0], k * 3 + e));
    EXPECT_EQ(wantRows[k], loadAsDouble(DType::I64, buffers[1], k));
    EXPECT_EQ(wantRows[k] % 2, loadAsDouble(DType::Bool, buffers[2], k));
    EXPECT_EQ(wantRows[k], loadAsDouble(DType::F16, buffers[3], k * 2 + 1));
  }
}

TEST_F(DataTest, NamesTheFileAndInputThatDoNotFit) {
  std::unique_ptr<DataSource> data;
  std::string error;
  std::vector<DataSpec> specs = allFiles(6);

  std::vector<DataSpec> wrongType = specs;
  wrongType[1].file = writeData("y32.npy", 1, 6, DType::I32);
  EXPECT_FALSE(openNpyData(info, wrongType, "--data", data, error));
  EXPECT_NE(std::string::npos,
            error.find("--data y=" + wrongType[1].file + ": '" +
                       wrongType[1].file +
                       "' holds int32 but input 'y' takes int64"))
      << error;

  std::vector<DataSpec> wrongShape = specs;
  wrongShape[0].file = writeData("x2.npy", 3, 6, DType::F32); // samples of 2
  EXPECT_FALSE(openNpyData(info, wrongShape, "--data", data, error));
  EXPECT_NE(std::string::npos,
            error.find("has samples of shape (2,) but input 'x' takes "
                       "samples of shape (3,)"))
      << error;

  std::vector<DataSpec> unequal = specs;
  unequal[2].file = writeData("m5.npy", 2, 5, DType::Bool);
  EXPECT_FALSE(openNpyData(info, unequal, "--eval-data", data, error));
  EXPECT_NE(std::string::npos,
            error.find("holds 5 samples but '" + specs[0].file +
                       "' holds 6; every input needs the same number"))
      << error;

  std::vector<DataSpec> empty = specs;
  empty[0].file = writeData("x0.npy", 0, 0, DType::F32);
  EXPECT_FALSE(openNpyData(info, empty, "--data", data, error));
  EXPECT_NE(std::string::npos, error.find("holds no samples")) << error;

  std::vector<DataSpec> missing(specs.begin(), specs.begin() + 3);
  EXPECT_FALSE(openNpyData(info, missing, "--data", data, error));
  EXPECT_NE(std::string::npos,
            error.find("--data: no file for input 'h' (pass --data "
                       "h=FILE.npy; inputs: x, y, m, h)"))
      << error;

  std::vector<DataSpec> unknown = specs;
  unknown.push_back({"z", specs[0].file});
  EXPECT_FALSE(openNpyData(info, unknown, "--data", data, error));
  EXPECT_NE(std::string::npos,
            error.find("--data: the model has no input 'z' (its inputs: x, "
                       "y, m, h)"))
      << error;

  std::vector<DataSpec> absent = specs;
  absent[0].file = dir / "absent.npy";
  EXPECT_FALSE(openNpyData(info, absent, "--data", data, error));
  EXPECT_NE(std::string::npos, error.find("cannot open '" + absent[0].file))
      << error;
}

TEST_F(DataTest, SyntheticDataIsDeterministicAndInRange) {
  std::unique_ptr<DataSource> data = makeSyntheticData(info);
  EXPECT_EQ(-1, data->numSamples());
  data->fill(8, 4, buffers);
  std::vector<std::vector<uint8_t>> first = storage;
  data->fill(8, 4, buffers);
  EXPECT_EQ(first, storage);
  data->fill(12, 4, buffers);
  EXPECT_NE(first[0], storage[0]);
  // Position 10 onwards overlaps the batch at 8 by two samples.
  data->fill(10, 4, buffers);
  EXPECT_EQ(0, std::memcmp(first[0].data() + 2 * 12, storage[0].data(), 24));

  bool sawHigh = false, sawLow = false;
  int64_t yMax = 0;
  for (int64_t pos = 0; pos < 400; pos += 4) {
    data->fill(pos, 4, buffers);
    for (int k = 0; k < 12; ++k) {
      double v = loadAsDouble(DType::F32, buffers[0], k);
      EXPECT_TRUE(v >= -1 && v <= 1) << v;
      sawHigh |= v > 0.9;
      sawLow |= v < -0.9;
    }
    for (int k = 0; k < 4; ++k) {
      int64_t y = int64_t(loadAsDouble(DType::I64, buffers[1], k));
      EXPECT_TRUE(y >= 0 && y <= 9) << y;
      yMax = std::max(yMax, y);
      uint8_t m = buffers[2][k];
      EXPECT_TRUE(m == 0 || m == 1);
    }
  }
  EXPECT_TRUE(sawHigh && sawLow);
  EXPECT_EQ(9, yMax); // the descriptor's bound is reached
}

TEST(Model, RejectsMalformedDescriptors) {
  struct Case {
    std::vector<dtcrt_tensor_desc> args, results;
    const char *message;
  } cases[] = {
      {{test::tensor("w", "weights", "f32", {2})},
       {test::tensor("loss", "metric", "f32", {})},
       "argument 0 'w' has the unknown role 'weights'"},
      {{test::tensor("w", "parameter", "f8", {2})},
       {test::tensor("loss", "metric", "f32", {})},
       "has the unknown dtype 'f8'"},
      {{test::tensor("x", "input", "f32", {3, 2})},
       {test::tensor("loss", "metric", "f32", {})},
       "input argument 'x' must have one data-parallel rank's share"},
      {{test::tensor("w", "parameter", "f32", {2})},
       {test::tensor("v", "parameter", "f32", {2}),
        test::tensor("loss", "metric", "f32", {})},
       "result 'v' (role parameter) updates no argument"},
      {{test::tensor("w", "parameter", "f32", {2})},
       {test::tensor("w", "parameter", "f32", {3}),
        test::tensor("loss", "metric", "f32", {})},
       "differs in dtype or shape"},
      {{test::tensor("w", "parameter", "f32", {2})},
       {test::tensor("w", "parameter", "f32", {2})},
       "no metric result called 'loss'"},
      {{test::tensor("lr", "hyper", "f64", {2})},
       {test::tensor("loss", "metric", "f32", {})},
       "hyperparameter argument 'lr' is not a scalar"},
      {{test::tensor("w", "parameter", "f32", {1 << 30, 1 << 30})},
       {test::tensor("loss", "metric", "f32", {})},
       "is too large"},
  };
  for (const Case &c : cases) {
    dtcrt_model_desc d = test::model(c.args, c.results);
    ModelInfo info;
    std::string error;
    EXPECT_FALSE(describeModel(&d, info, error)) << c.message;
    EXPECT_NE(std::string::npos, error.find(c.message))
        << "got: " << error << "\nwant: " << c.message;
  }
}

} // namespace
