//===- dropout.cpp - tests of Philox and dropout --------------------------===//
//
// The dropout masks bit for bit against the reference interpreter's Philox
// construction (dialects/DTG/Interp/Philox.cpp) and Random123's published
// known-answer vectors.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"
#include "dtcrt/kernels/NN.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace dtck;
using namespace kerneltest;

namespace {

// Random123's known-answer vectors (kat_vectors, philox4x32 10 rounds).
TEST(Philox, Random123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Op keys and element bits as dialects/DTG/Interp/Philox.cpp computes them
// (printed by a driver linked against it), including a negative seed, a
// step above 2^32 and an index above 2^32.
TEST(Philox, MatchesInterpreterConstruction) {
  EXPECT_EQ(dropoutOpKey(0, 0, 0), (PhiloxKey{0x6627e8d5, 0xe169c58d}));
  PhiloxKey key = dropoutOpKey(42, 1, 3);
  EXPECT_EQ(key, (PhiloxKey{0x85a8df3c, 0x1d91b19b}));
  const uint32_t bits[] = {0xb7c5d6c2, 0xbb98432d, 0x47da9a10, 0x05a9b761,
                           0x09aa279c, 0xadf1e19b, 0x10c94658, 0x2db20563};
  for (uint64_t i = 0; i < 8; ++i)
    EXPECT_EQ(dropoutBits(key, i), bits[i]) << "element " << i;
  EXPECT_EQ(dropoutBits(key, 1000001), 0x3f60dc0fu);
  EXPECT_EQ(dropoutBits(key, (uint64_t(1) << 34) + 3), 0xa253a11du);
  PhiloxKey other = dropoutOpKey(-1, 123456789012, 7);
  EXPECT_EQ(other, (PhiloxKey{0xb9b805aa, 0xd5e2e132}));
  EXPECT_EQ(dropoutBits(other, 5), 0x1fe955f7u);
  EXPECT_EQ(dropoutBits(other, (uint64_t(1) << 34) + 3), 0x6de9a046u);
}

TEST(Philox, Thresholds) {
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(0.1), 429496730u);
  EXPECT_EQ(dropoutThreshold(0.3), 1288490189u);
  EXPECT_EQ(dropoutThreshold(0.5), 2147483648u);
  EXPECT_EQ(dropoutThreshold(0.9999), 4294537800u);
}

// Masks the interpreter's dtg.dropout produces: key (42, 1), stream 3,
// ratio 0.5 on 12 elements; key (7, 100), stream 0, ratio 0.1 on 40.
TEST(Dropout, MasksMatchInterpreter) {
  struct Case {
    int64_t key[2];
    int64_t stream;
    double ratio;
    const char *mask;
  } cases[] = {{{42, 1}, 3, 0.5, "110001001110"},
               {{7, 100}, 0, 0.1, "1111111111111111111111110111111111111111"}};
  for (const Case &c : cases) {
    int64_t n = int64_t(std::strlen(c.mask));
    Shape s{1, {n}};
    std::vector<float> x = ramp(s, 37, 23, 11, 8), y(n);
    std::unique_ptr<bool[]> mask(new bool[n]);
    dropout<float>(s, x.data(), c.key, 2, c.ratio, c.stream, y.data(),
                   mask.get());
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(mask[i], c.mask[i] == '1') << "element " << i;
      float want =
          mask[i] ? float(double(x[i]) * (1.0 / (1.0 - c.ratio))) : 0.0f;
      EXPECT_EQ(y[i], want) << "element " << i;
    }
  }
}

// A tensor whose size is not a multiple of 4 (the last Philox block is
// partly used) in f16: the mask is the bits of each element's own index.
TEST(Dropout, PartialBlockHalf) {
  Shape s{2, {3, 3}};
  std::vector<f16> x = ramp<f16>(s, 37, 23, 11, 8), y(9);
  int64_t key[2] = {0x123456789ab, 17};
  bool mask[9];
  dropout<f16>(s, x.data(), key, 2, 0.5, 5, y.data(), mask);
  PhiloxKey opKey = dropoutOpKey(key[0], key[1], 5);
  for (int i = 0; i < 9; ++i) {
    bool keep = dropoutBits(opKey, i) >= dropoutThreshold(0.5);
    EXPECT_EQ(mask[i], keep) << "element " << i;
    EXPECT_EQ(float(y[i]), keep ? 2.0f * float(x[i]) : 0.0f);
  }
}

// A key of three elements offsets every element's index: the rows of a
// tensor taken apart at any element (here 7 and 13 elements after the first
// 5, offsets not multiples of a Philox block) draw the whole tensor's bits.
TEST(Dropout, OffsetKeysDrawTheWholeTensorsBits) {
  const int64_t n = 25;
  Shape whole{1, {n}};
  std::vector<float> x = ramp(whole, 37, 23, 11, 8), y(n);
  int64_t key[3] = {99, 4, 0};
  bool mask[n];
  dropout<float>(whole, x.data(), key, 3, 0.3, 2, y.data(), mask);
  int64_t cuts[] = {0, 5, 12, 25};
  for (int part = 0; part < 3; ++part) {
    int64_t first = cuts[part], count = cuts[part + 1] - first;
    Shape s{1, {count}};
    std::vector<float> yp(count);
    std::unique_ptr<bool[]> mp(new bool[count]);
    int64_t partKey[3] = {99, 4, first};
    dropout<float>(s, x.data() + first, partKey, 3, 0.3, 2, yp.data(),
                   mp.get());
    for (int64_t i = 0; i < count; ++i) {
      EXPECT_EQ(mp[i], mask[first + i]) << "element " << first + i;
      EXPECT_EQ(yp[i], y[first + i]) << "element " << first + i;
    }
  }
}

} // namespace
