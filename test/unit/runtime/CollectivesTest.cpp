//===- CollectivesTest.cpp - ring collectives over loopback channels ------===//
//
// Runs the collectives on n threads, each a rank with its own loopback
// channel, and holds their results against sums computed here and their
// byte counts against the ring formulas of ../shared/REFERENCE.md:
// all-reduce 2(n-1)/n of the buffer per rank, reduce-scatter and
// all-gather (n-1)/n of the whole tensor.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Comm/Collectives.h"
#include "runtime/src/Comm/LoopbackChannel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>
#include <vector>

using namespace dtcrt;

namespace {

/// Runs `body(rank, channel)` on `n` threads of one loopback group.
void onRanks(int n, const std::function<void(int, Channel &)> &body) {
  LoopbackHub hub(n);
  std::vector<std::unique_ptr<Channel>> channels;
  for (int r = 0; r < n; ++r)
    channels.push_back(hub.channel(r));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { body(r, *channels[size_t(r)]); });
  for (std::thread &t : threads)
    t.join();
}

/// Rank r's value of element i.
float value(int r, int64_t i) { return float(r + 1) * 0.5f + float(i % 7); }

class RingTest : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

TEST_P(RingTest, AllReduceSumsEveryRanksBufferAndCountsItsBytes) {
  auto [n, count] = GetParam();
  std::vector<std::vector<float>> out(static_cast<size_t>(n));
  std::vector<int64_t> sent(static_cast<size_t>(n));
  onRanks(n, [&](int r, Channel &c) {
    std::vector<float> in(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      in[size_t(i)] = value(r, i);
    out[size_t(r)].resize(size_t(count));
    std::string error;
    ASSERT_TRUE(allReduce(c, DType::F32, ReduceOp::Sum, in.data(),
                          out[size_t(r)].data(), count, error))
        << error;
    sent[size_t(r)] = c.bytesSent();
  });
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) {
      float want = 0;
      for (int k = 0; k < n; ++k)
        want += value(k, i);
      ASSERT_NEAR(out[size_t(r)][size_t(i)], want, 1e-5f * std::abs(want));
    }
    // Every rank ends with the same bits.
    EXPECT_EQ(out[size_t(r)], out[0]);
    // 2(n-1)/n of the buffer, exactly when n divides it, within a chunk
    // element each way otherwise.
    double formula = 2.0 * (n - 1) / n * double(count) * 4;
    if (count % n == 0)
      EXPECT_EQ(double(sent[size_t(r)]), formula);
    else
      EXPECT_NEAR(double(sent[size_t(r)]), formula, 2 * 4);
    EXPECT_EQ(sent[size_t(r)], allReduceBytesSent(count, 4, n, r));
  }
}

TEST_P(RingTest, ReduceScatterThenAllGatherIsAnAllReduce) {
  auto [n, blockRows] = GetParam();
  // [outer 3, n * blockRows, inner 2], split along the middle dimension.
  int64_t outer = 3, inner = 2, rows = n * blockRows;
  int64_t whole = outer * rows * inner;
  std::vector<std::vector<double>> gathered(static_cast<size_t>(n));
  std::vector<int64_t> sent(static_cast<size_t>(n));
  onRanks(n, [&](int r, Channel &c) {
    std::vector<double> in(static_cast<size_t>(whole));
    for (int64_t i = 0; i < whole; ++i)
      in[size_t(i)] = value(r, i);
    std::vector<double> block(static_cast<size_t>(outer * blockRows * inner));
    std::string error;
    ASSERT_TRUE(reduceScatter(c, DType::F64, ReduceOp::Sum, in.data(),
                              block.data(), outer, blockRows, inner, error))
        << error;
    // The block is rows [r * blockRows, (r + 1) * blockRows) of the sum.
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < blockRows * inner; ++k) {
        int64_t i = (o * rows + r * blockRows) * inner + k;
        double want = 0;
        for (int q = 0; q < n; ++q)
          want += value(q, i);
        ASSERT_DOUBLE_EQ(block[size_t(o * blockRows * inner + k)], want);
      }
    gathered[size_t(r)].resize(size_t(whole));
    ASSERT_TRUE(allGather(c, DType::F64, block.data(),
                          gathered[size_t(r)].data(), outer, blockRows, inner,
                          error))
        << error;
    sent[size_t(r)] = c.bytesSent();
  });
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < whole; ++i) {
      double want = 0;
      for (int q = 0; q < n; ++q)
        want += value(q, i);
      ASSERT_DOUBLE_EQ(gathered[size_t(r)][size_t(i)], want);
    }
    // (n-1)/n of the whole tensor, twice.
    EXPECT_EQ(sent[size_t(r)], 2 * (n - 1) * whole / n * 8);
  }
}

TEST_P(RingTest, AsynchronousCollectivesGiveTheSynchronousBits) {
  auto [n, blockRows] = GetParam();
  // Two collectives in flight at once: an all-reduce (mean) of `count`
  // elements and a reduce-scatter then all-gather of [3, n * blockRows, 2].
  int64_t count = 7 * blockRows + 1, outer = 3, inner = 2, rows = n * blockRows,
          whole = outer * rows * inner;
  onRanks(n, [&](int r, Channel &c) {
    auto elements = static_cast<size_t>(count);
    std::vector<float> in(elements), sync(elements), async(elements);
    for (int64_t i = 0; i < count; ++i)
      in[size_t(i)] = value(r, i);
    auto all = static_cast<size_t>(whole), part = all / size_t(n);
    std::vector<double> tensor(all), block(part), blockAsync(part),
        gathered(all), gatheredAsync(all);
    for (int64_t i = 0; i < whole; ++i)
      tensor[size_t(i)] = value(r, 3 * i);
    std::string error;
    ASSERT_TRUE(allReduce(c, DType::F32, ReduceOp::Mean, in.data(), sync.data(),
                          count, error));
    ASSERT_TRUE(reduceScatter(c, DType::F64, ReduceOp::Sum, tensor.data(),
                              block.data(), outer, blockRows, inner, error));
    ASSERT_TRUE(allGather(c, DType::F64, block.data(), gathered.data(), outer,
                          blockRows, inner, error));
    int64_t before = c.bytesSent();
    auto a =
        startAllReduce(c, DType::F32, ReduceOp::Mean, in.data(), async.data(),
                       count, Channel::kFirstAsyncTag, error);
    auto b = startReduceScatter(c, DType::F64, ReduceOp::Sum, tensor.data(),
                                blockAsync.data(), outer, blockRows, inner,
                                Channel::kFirstAsyncTag + 1, error);
    ASSERT_TRUE(a && b) << error;
    while (!a->done() || !b->done())
      ASSERT_TRUE(a->progress(error) && b->progress(error)) << error;
    auto g = startAllGather(c, DType::F64, blockAsync.data(),
                            gatheredAsync.data(), outer, blockRows, inner,
                            Channel::kFirstAsyncTag + 2, error);
    ASSERT_TRUE(g) << error;
    while (!g->done())
      ASSERT_TRUE(g->progress(error)) << error;
    EXPECT_EQ(async, sync);
    EXPECT_EQ(blockAsync, block);
    EXPECT_EQ(gatheredAsync, gathered);
    // The same bytes as the synchronous ones.
    EXPECT_EQ(c.bytesSent() - before, before);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, RingTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 8),
                                            ::testing::Values(1, 5, 64)));

TEST(LocalBlockTest, KeepsThisRanksRows) {
  // [2, 4, 3] cut into 2 blocks along the middle dimension.
  std::vector<int> in(24);
  for (int i = 0; i < 24; ++i)
    in[size_t(i)] = i;
  std::vector<int> out(12);
  localBlock(1, 2, sizeof(int), in.data(), out.data(), 2, 2, 3);
  EXPECT_EQ(out,
            (std::vector<int>{6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23}));
}

TEST(LoopbackTest, ATimeoutNamesThePeerThatDidNotAnswer) {
  LoopbackHub hub(2, /*timeoutSeconds=*/0.1);
  std::unique_ptr<Channel> c = hub.channel(0);
  float x = 1;
  std::string error;
  EXPECT_FALSE(allReduce(*c, DType::F32, ReduceOp::Sum, &x, &x, 1, error));
  EXPECT_EQ(error, "all_reduce: no answer from rank 1");
}

TEST(LoopbackTest, MeanDividesBySize) {
  std::vector<float> out(4);
  onRanks(4, [&](int r, Channel &c) {
    float x = float(r);
    std::string error;
    ASSERT_TRUE(allReduce(c, DType::F32, ReduceOp::Mean, &x, &x, 1, error));
    out[size_t(r)] = x;
  });
  for (float v : out)
    EXPECT_FLOAT_EQ(v, 1.5f);
}

} // namespace
