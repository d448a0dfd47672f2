//===- ArenaTest.cpp - arena high-water mark and guard mode ---------------===//

#include "runtime/src/Core/Arena.h"
#include "runtime/src/Core/Report.h"

#include "dtcrt/kernels/Common.h"

#include <gtest/gtest.h>

#include <vector>

using namespace dtcrt;

namespace {

/// A 256-byte arena in a step context.
struct ArenaFixture : ::testing::Test {
  ArenaFixture() : bytes(256, 0x11) {
    ctx.arena = bytes.data();
    ctx.arena_bytes = int64_t(bytes.size());
  }
  std::vector<uint8_t> bytes;
  dtcrt_step_ctx ctx = {};
};

using ArenaTest = ArenaFixture;
using ArenaDeathTest = ArenaFixture;

TEST_F(ArenaTest, NotesTheHighWaterMark) {
  dtcrt_arena_note(&ctx, 64, 16);
  EXPECT_EQ(80, ctx.high_water);
  dtcrt_arena_note(&ctx, 0, 8);
  EXPECT_EQ(80, ctx.high_water);
  dtcrt_arena_note(&ctx, 200, 56);
  EXPECT_EQ(256, ctx.high_water);
}

TEST_F(ArenaTest, GuardPoisonsOnlyDeadBytes) {
  const int64_t live[] = {64, 16, 70, 20, 200, 0};
  dtcrt_guard_fill(&ctx, live, 3);
  for (int64_t o = 0; o < 256; ++o) {
    bool isLive = o >= 64 && o < 90;
    if (isLive)
      EXPECT_EQ(0x11, bytes[o]) << o;
    else
      EXPECT_EQ(guardPoison(o), bytes[o]) << o;
  }
  EXPECT_EQ(-1, findGuardViolation(&ctx, live, 3));
  // Writes inside live buffers are fine.
  bytes[64] = bytes[89] = 0;
  dtcrt_guard_check(&ctx, live, 3, "/Ok");
  // A write just past them is found.
  bytes[90] ^= 1;
  EXPECT_EQ(90, findGuardViolation(&ctx, live, 3));
}

TEST_F(ArenaTest, PoisonVariesWithTheOffset) {
  int same = 0;
  for (int64_t o = 1; o < 256; ++o)
    same += guardPoison(o) == guardPoison(o - 1);
  EXPECT_LT(same, 8);
}

TEST_F(ArenaTest, ChecksLiveLists) {
  std::string error;
  const int64_t outside[] = {250, 16};
  EXPECT_FALSE(checkLiveList(&ctx, outside, 1, error));
  EXPECT_NE(std::string::npos,
            error.find("live buffer [250, +16) lies outside the arena of 256"))
      << error;
  const int64_t negative[] = {-1, 4};
  EXPECT_FALSE(checkLiveList(&ctx, negative, 1, error));
  EXPECT_FALSE(checkLiveList(&ctx, nullptr, 2, error));
  EXPECT_TRUE(checkLiveList(&ctx, nullptr, 0, error));
}

TEST_F(ArenaDeathTest, GuardNamesTheOpThatWroteADeadByte) {
  const int64_t live[] = {64, 16};
  dtcrt_guard_fill(&ctx, live, 1);
  bytes[83] = uint8_t(~guardPoison(83));
  EXPECT_EXIT(dtcrt_guard_check(&ctx, live, 1, "/layer1/MatMul"),
              ::testing::ExitedWithCode(1),
              "train: error: guard: arena byte 83, outside every live buffer, "
              "changed at op '/layer1/MatMul'; it lies 3 bytes past the end of "
              "the live buffer \\[64, 80\\)");
}

TEST_F(ArenaDeathTest, ArenaOverflowEndsTheRun) {
  ctx.current_op = "/Big";
  EXPECT_EXIT(dtcrt_arena_note(&ctx, 128, 129), ::testing::ExitedWithCode(1),
              "train: error: arena overflow at op '/Big': buffer \\[128, "
              "\\+129\\) does not fit the arena of 256 bytes");
}

TEST_F(ArenaDeathTest, KernelFailuresNameTheOpAndStep) {
  installKernelFailHandler();
  ctx.current_op = "/Gather";
  setRunningStep(&ctx, 7, "training");
  EXPECT_EXIT(dtck::fail("index 9 out of range"), ::testing::ExitedWithCode(1),
              "train: error: kernel failed at op '/Gather' \\(training step "
              "7\\): index 9 out of range");
  setRunningStep(nullptr, 0, nullptr);
}

} // namespace
