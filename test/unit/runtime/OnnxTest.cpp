//===- OnnxTest.cpp - writing trained weights into model.onnx -------------===//

#include "runtime/src/Onnx/SaveOnnx.h"

#include "runtime/src/Core/Files.h"

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>

using namespace dtcrt;

namespace {

/// A model with a float initializer "w" (float_data), a float16 one "h",
/// and a constant "c" whose data lives in c.bin beside the model.
struct OnnxTest : ::testing::Test {
  OnnxTest() {
    onnx::GraphProto *graph = model.mutable_graph();
    graph->set_name("g");
    onnx::TensorProto *w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->add_float_data(1);
    w->add_float_data(2);
    onnx::TensorProto *h = graph->add_initializer();
    h->set_name("h");
    h->set_data_type(onnx::TensorProto::FLOAT16);
    h->add_dims(1);
    h->set_raw_data(std::string("\0\0", 2));
    onnx::TensorProto *c = graph->add_initializer();
    c->set_name("c");
    c->set_data_type(onnx::TensorProto::INT64);
    c->add_dims(1);
    c->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *location = c->add_external_data();
    location->set_key("location");
    location->set_value("c.bin");
    auto *offset = c->add_external_data();
    offset->set_key("offset");
    offset->set_value("8");
    auto *length = c->add_external_data();
    length->set_key("length");
    length->set_value("8");
    int64_t external[2] = {-1, 77};
    std::string error;
    EXPECT_TRUE(
        writeFileDurably(dir / "c.bin", external, sizeof(external), error));
  }

  bool save(const std::vector<TrainedTensor> &trained, std::string &error) {
    std::string bytes = model.SerializeAsString();
    EXPECT_TRUE(writeFileDurably(dir / "model.onnx", bytes.data(), bytes.size(),
                                 error));
    return saveOnnxWithWeights(dir / "model.onnx", dir / "out.onnx", trained,
                               error);
  }

  onnx::ModelProto load() {
    std::string bytes, error;
    EXPECT_TRUE(readFile(dir / "out.onnx", bytes, error)) << error;
    onnx::ModelProto out;
    EXPECT_TRUE(out.ParseFromString(bytes));
    return out;
  }

  test::TempFolder dir;
  onnx::ModelProto model;
  float w[2] = {0.25f, -3.5f};
  float h[1] = {1.5f};
};

TEST_F(OnnxTest, ReplacesTrainedInitializersAndInlinesTheRest) {
  std::string error;
  ASSERT_TRUE(save({{"w", DType::F32, {2}, w, sizeof(w)},
                    {"h", DType::F32, {1}, h, sizeof(h)}},
                   error))
      << error;
  onnx::ModelProto out = load();
  const onnx::TensorProto &w2 = out.graph().initializer(0);
  EXPECT_EQ(0, w2.float_data_size());
  ASSERT_EQ(8u, w2.raw_data().size());
  EXPECT_EQ(0, std::memcmp(w, w2.raw_data().data(), 8));
  // float32 1.5 stored as float16 0x3e00.
  const onnx::TensorProto &h2 = out.graph().initializer(1);
  EXPECT_EQ(onnx::TensorProto::FLOAT16, h2.data_type());
  EXPECT_EQ(std::string("\x00\x3e", 2), h2.raw_data());
  // The constant comes along, inline.
  const onnx::TensorProto &c2 = out.graph().initializer(2);
  EXPECT_EQ(onnx::TensorProto::DEFAULT, c2.data_location());
  EXPECT_EQ(0, c2.external_data_size());
  int64_t value = 0;
  ASSERT_EQ(8u, c2.raw_data().size());
  std::memcpy(&value, c2.raw_data().data(), 8);
  EXPECT_EQ(77, value);
}

TEST_F(OnnxTest, RefusesTensorsThatDoNotMatchTheModel) {
  std::string error;
  EXPECT_FALSE(save({{"v", DType::F32, {2}, w, sizeof(w)}}, error));
  EXPECT_NE(std::string::npos,
            error.find("has no initializer 'v' (is it the model this program "
                       "was compiled from?)"))
      << error;
  EXPECT_FALSE(save({{"w", DType::F32, {1}, w, 4}}, error));
  EXPECT_NE(std::string::npos,
            error.find("initializer 'w' is (2,) in the model but the trained "
                       "tensor is (1,)"))
      << error;
  int64_t ints[2] = {1, 2};
  EXPECT_FALSE(save({{"w", DType::I64, {2}, ints, sizeof(ints)}}, error));
  EXPECT_NE(std::string::npos,
            error.find("is float32 in the model but the trained tensor is "
                       "int64"))
      << error;
  EXPECT_FALSE(isFile(dir / "out.onnx"));
}

TEST_F(OnnxTest, KeepsExternalDataInsideTheModelFolder) {
  model.mutable_graph()
      ->mutable_initializer(2)
      ->mutable_external_data(0)
      ->set_value("../c.bin");
  std::string error;
  EXPECT_FALSE(save({}, error));
  EXPECT_NE(std::string::npos,
            error.find("initializer 'c' points at external data '../c.bin' "
                       "outside the model's folder"))
      << error;
  model.mutable_graph()
      ->mutable_initializer(2)
      ->mutable_external_data(0)
      ->set_value("c.bin");
  model.mutable_graph()
      ->mutable_initializer(2)
      ->mutable_external_data(2)
      ->set_value("16");
  EXPECT_FALSE(save({}, error));
  EXPECT_NE(std::string::npos, error.find("runs past the end")) << error;
}

TEST_F(OnnxTest, NamesAFileThatIsNotAModel) {
  std::string error;
  ASSERT_TRUE(writeFileDurably(dir / "model.onnx", "\xff\xff\xff", 3, error));
  EXPECT_FALSE(
      saveOnnxWithWeights(dir / "model.onnx", dir / "out.onnx", {}, error));
  EXPECT_NE(std::string::npos, error.find("is not a valid ONNX model"))
      << error;
}

} // namespace
