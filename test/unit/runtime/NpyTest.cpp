//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "runtime/src/Data/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dtcrt;

namespace {

/// A .npy image with a hand-written header of format `major`.
std::string image(int major, const std::string &dict, const std::string &data) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY";
  s += char(major);
  s += char(0);
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    s += char((header.size() >> (8 * i)) & 0xff);
  return s + header + data;
}

bool parse(const std::string &img, NpyArray &out, std::string &error) {
  return parseNpy(reinterpret_cast<const uint8_t *>(img.data()), img.size(),
                  "t.npy", out, error);
}

TEST(Npy, RoundTripsEveryStepDType) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64,
                  DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool}) {
    std::vector<uint8_t> bytes(6 * dtypeSize(t));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = t == DType::Bool ? uint8_t(i % 2) : uint8_t(i * 7 + 1);
    std::string img = encodeNpy(t, {2, 3}, bytes.data(), bytes.size());
    EXPECT_EQ(0u, (img.size() - bytes.size()) % 64) << dtypeName(t);
    NpyArray a;
    std::string error;
    ASSERT_TRUE(parse(img, a, error)) << error;
    // bf16 is stored as its 16 bits.
    EXPECT_EQ(t == DType::BF16 ? DType::U16 : t, a.dtype);
    EXPECT_EQ((std::vector<int64_t>{2, 3}), a.shape);
    ASSERT_EQ(bytes.size(), a.bytes);
    EXPECT_EQ(0, std::memcmp(bytes.data(), a.data, a.bytes));
  }
}

TEST(Npy, ReadsFormatVersions2And3AndScalars) {
  float v = 2.5f;
  std::string data(reinterpret_cast<const char *>(&v), 4);
  for (int major : {2, 3}) {
    NpyArray a;
    std::string error;
    ASSERT_TRUE(parse(image(major,
                            "{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (), }",
                            data),
                      a, error))
        << error;
    EXPECT_TRUE(a.shape.empty());
    EXPECT_EQ(1, a.numElements());
  }
}

TEST(Npy, SwapsBigEndianData) {
  const unsigned char be[] = {0x3f, 0x80, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00};
  NpyArray a;
  std::string error;
  ASSERT_TRUE(parse(image(1,
                          "{'descr': '>f4', 'fortran_order': False, 'shape': "
                          "(2,), }",
                          std::string(reinterpret_cast<const char *>(be), 8)),
                    a, error))
      << error;
  EXPECT_EQ(DType::F32, a.dtype);
  EXPECT_EQ(1.0, loadAsDouble(DType::F32, a.data, 0));
  EXPECT_EQ(-2.0, loadAsDouble(DType::F32, a.data, 1));
}

TEST(Npy, AcceptsKeysInAnyOrderAndPython2Longs) {
  NpyArray a;
  std::string error;
  ASSERT_TRUE(parse(image(1,
                          "{'shape': (1L, 2L), 'fortran_order': False, "
                          "'descr': '|u1'}",
                          "ab"),
                    a, error))
      << error;
  EXPECT_EQ((std::vector<int64_t>{1, 2}), a.shape);
  EXPECT_EQ(DType::U8, a.dtype);
}

TEST(Npy, NamesWhatIsWrong) {
  struct Case {
    std::string img;
    const char *message;
  } cases[] = {
      {"not a numpy file at all", "'t.npy' is not a .npy file"},
      {image(4, "{}", ""), "format version 4"},
      {image(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
             "abcd"),
       "Fortran order"},
      {image(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
             "abcdabcd"),
       "dtype '<c8'"},
      {image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
             "abcd"),
       "holds 4 data bytes where its shape (2,) of float32 needs 8 "
       "(truncated)"},
      {image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }",
             ""),
       "malformed 'shape'"},
      {image(1, "{'descr': '<f4', 'shape': (1,), }", "abcd"),
       "lacks 'descr', 'fortran_order' or 'shape'"},
      {image(1,
             "{'descr': [('a', '<f4')], 'fortran_order': False, "
             "'shape': (1,), }",
             "abcd"),
       "not a simple type"},
      {image(1,
             "{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(4611686018427387904, 4611686018427387904), }",
             ""),
       "too large"},
  };
  for (const Case &c : cases) {
    NpyArray a;
    std::string error;
    EXPECT_FALSE(parse(c.img, a, error));
    EXPECT_NE(std::string::npos, error.find(c.message)) << error;
  }
  std::string header = image(1, "{}", "");
  NpyArray a;
  std::string error;
  EXPECT_FALSE(parse(header.substr(0, 20), a, error));
  EXPECT_NE(std::string::npos, error.find("truncated")) << error;
}

TEST(Npy, ReadsAndWritesFiles) {
  test::TempFolder dir;
  int64_t values[] = {1, -2, 3};
  std::string error;
  ASSERT_TRUE(writeNpyFile(dir / "v.npy", DType::I64, {3}, values,
                           sizeof(values), error))
      << error;
  NpyArray a;
  ASSERT_TRUE(readNpy(dir / "v.npy", a, error)) << error;
  EXPECT_EQ(-2.0, loadAsDouble(DType::I64, a.data, 1));
  EXPECT_FALSE(readNpy(dir / "missing.npy", a, error));
  EXPECT_NE(std::string::npos, error.find("missing.npy")) << error;
}

TEST(Npy, PrintsShapesAsNumPy) {
  EXPECT_EQ("()", shapeString({}));
  EXPECT_EQ("(3,)", shapeString({3}));
  EXPECT_EQ("(2, 3)", shapeString({2, 3}));
}

} // namespace
