//===- CostModelTest.cpp - tests of passes/Analysis/CostModel -------------===//
//
// estimateOpCost against FLOP and byte counts written out by hand from the
// ops' shapes, estimateOpSeconds against the roofline formula on a made-up
// profile, and device profiles: JSON round trip, every error, the built-in
// names.
//
//===----------------------------------------------------------------------===//

#include "passes/Analysis/CostModel.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mlir;
using namespace mlir::dtc;

namespace {

class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() { context.loadDialect<dtg::DTGDialect, func::FuncDialect>(); }

  /// Parses `body` as the ops of a function with arguments `args` and
  /// returns its first op (the module stays alive in `module`).
  Operation *parseFirstOp(StringRef args, StringRef body) {
    std::string text =
        ("func.func @f(" + args + ") {\n" + body + "\n  return\n}\n").str();
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return nullptr;
    auto f = module->lookupSymbol<func::FuncOp>("f");
    return &f.getBody().front().front();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr double kF32 = 4;

TEST_F(CostModelTest, BatchedMatMul) {
  // [2, 3, 4, 5] x [5, 6] -> [2, 3, 4, 6]: 2 * M * N * K per batch.
  Operation *op = parseFirstOp(
      "%a: tensor<2x3x4x5xf32>, %b: tensor<5x6xf32>",
      "%r = dtg.matmul %a, %b : tensor<2x3x4x5xf32>, tensor<5x6xf32> -> "
      "tensor<2x3x4x6xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (2 * 3) * 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (2 * 3 * 4 * 5 + 5 * 6 + 2 * 3 * 4 * 6));
  EXPECT_TRUE(c.gemmLike);
  EXPECT_DOUBLE_EQ(estimateModelFlops(op), c.flops);
  EXPECT_EQ(classifyOp(op), OpClass::Gemm);
}

TEST_F(CostModelTest, GemmTransposedWithC) {
  // op(a) = a^T: [3, 7]; b [7, 5]; c [5] broadcast: M=3, N=5, K=7, and the
  // alpha * ab + beta * c epilogue 2 per result element.
  Operation *op = parseFirstOp(
      "%a: tensor<7x3xf32>, %b: tensor<7x5xf32>, %c: tensor<5xf32>",
      "%r = dtg.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 1.0 : f64, "
      "trans_a = true, trans_b = false} : tensor<7x3xf32>, tensor<7x5xf32>, "
      "tensor<5xf32> -> tensor<3x5xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 3 * 5 * 7 + 2.0 * 3 * 5);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (21 + 35 + 5 + 15));
  EXPECT_TRUE(c.gemmLike);
  // Model FLOPs leave the epilogue out.
  EXPECT_DOUBLE_EQ(estimateModelFlops(op), 2.0 * 3 * 5 * 7);
}

TEST_F(CostModelTest, GroupedStridedConv) {
  // x [2, 4, 9, 9], w [6, 2, 3, 3], 2 groups, stride 2, pad 1: output
  // [2, 6, 5, 5]; each output element takes C/group * 3 * 3 = 18
  // multiply-adds; the bias adds 1 per output element.
  Operation *op = parseFirstOp(
      "%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>",
      "%r = dtg.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 2 : "
      "i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : "
      "tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> "
      "tensor<2x6x5x5xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  double outputs = 2 * 6 * 5 * 5;
  EXPECT_DOUBLE_EQ(c.flops, 2 * outputs * 18 + outputs);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (2 * 4 * 81 + 6 * 18 + 6 + outputs));
  EXPECT_TRUE(c.gemmLike);
  EXPECT_DOUBLE_EQ(estimateModelFlops(op), 2 * outputs * 18);
  EXPECT_EQ(classifyOp(op), OpClass::Conv);
}

TEST_F(CostModelTest, ConvGradients) {
  // The input gradient of the convolution above: the forward's
  // multiply-adds, transposed.
  Operation *op = parseFirstOp(
      "%g: tensor<2x6x5x5xf32>, %w: tensor<6x2x3x3xf32>",
      "%r = dtg.conv_input_grad %g, %w {dilations = array<i64: 1, 1>, group "
      "= 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} "
      ": tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (2 * 6 * 5 * 5) * 18);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (300 + 108 + 2 * 4 * 81));
  EXPECT_TRUE(c.gemmLike);

  // The weight gradient: the same multiply-adds again.
  op = parseFirstOp(
      "%g: tensor<2x6x5x5xf32>, %x: tensor<2x4x9x9xf32>",
      "%r = dtg.conv_weight_grad %g, %x {dilations = array<i64: 1, 1>, group "
      "= 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} "
      ": tensor<2x6x5x5xf32>, tensor<2x4x9x9xf32> -> tensor<6x2x3x3xf32>");
  ASSERT_TRUE(op);
  c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (2 * 6 * 5 * 5) * 18);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (300 + 2 * 4 * 81 + 108));
}

TEST_F(CostModelTest, LayerNorm) {
  // 8 FLOPs per element with a bias (mean 1, variance 3, normalize 3,
  // bias 1), 7 without.
  Operation *op = parseFirstOp(
      "%x: tensor<4x16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>",
      "%r = dtg.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : "
      "f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> "
      "tensor<4x16xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 64.0 * 8);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (64 + 16 + 16 + 64));
  EXPECT_FALSE(c.gemmLike);
  EXPECT_DOUBLE_EQ(estimateModelFlops(op), 0);

  op = parseFirstOp("%x: tensor<4x16xf32>, %s: tensor<16xf32>",
                    "%r = dtg.layer_norm %x, %s {axis = 1 : i64, epsilon = "
                    "1.0e-05 : f64} : tensor<4x16xf32>, tensor<16xf32> -> "
                    "tensor<4x16xf32>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(estimateOpCost(op).flops, 64.0 * 7);
}

TEST_F(CostModelTest, Elementwise) {
  // A broadcasting add: one FLOP per result element; the bias is read once.
  Operation *op =
      parseFirstOp("%a: tensor<4x8xf32>, %b: tensor<8xf32>",
                   "%r = dtg.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> "
                   "tensor<4x8xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 32);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (32 + 8 + 32));
  EXPECT_FALSE(c.gemmLike);
  EXPECT_EQ(classifyOp(op), OpClass::Elementwise);

  // A transcendental op weighs 8 per element; f16 elements are 2 bytes.
  op = parseFirstOp("%a: tensor<10x10xf16>",
                    "%r = \"dtg.tanh\"(%a) : (tensor<10x10xf16>) -> "
                    "tensor<10x10xf16>");
  ASSERT_TRUE(op);
  c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 100.0 * 8);
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (100 + 100));
}

TEST_F(CostModelTest, ShapeOps) {
  // A transpose moves bytes and computes nothing; a reshape does neither.
  Operation *op =
      parseFirstOp("%a: tensor<4x8xf32>",
                   "%r = \"dtg.transpose\"(%a) <{perm = array<i64: 1, 0>}> : "
                   "(tensor<4x8xf32>) -> tensor<8x4xf32>");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * 64);
  EXPECT_TRUE(isKernelOp(op));

  op = parseFirstOp("%a: tensor<4x8xf32>",
                    "%r = \"dtg.reshape\"(%a) : (tensor<4x8xf32>) -> "
                    "tensor<32xf32>");
  ASSERT_TRUE(op);
  c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.bytes, 0);
  EXPECT_FALSE(isKernelOp(op));
}

TEST_F(CostModelTest, FusedRegion) {
  // One kernel: the region's FLOPs (add 32, relu 32, a matmul 2*4*8*8), but
  // only the bytes of the fusion's own operands and result; the
  // intermediate never goes to memory.
  Operation *op = parseFirstOp(
      "%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>",
      "%y = dtg.fusion \"gemm\" (%x, %w, %b) : (tensor<4x8xf32>, "
      "tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {\n"
      "^bb0(%a: tensor<4x8xf32>, %v: tensor<8x8xf32>, %c: tensor<8xf32>):\n"
      "  %m = dtg.matmul %a, %v : tensor<4x8xf32>, tensor<8x8xf32> -> "
      "tensor<4x8xf32>\n"
      "  %s = dtg.add %m, %c : tensor<4x8xf32>, tensor<8xf32> -> "
      "tensor<4x8xf32>\n"
      "  %r = \"dtg.relu\"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  dtg.yield %r : tensor<4x8xf32>\n"
      "}");
  ASSERT_TRUE(op);
  OpCost c = estimateOpCost(op);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4 * 8 * 8 + 32 + 32);
  EXPECT_DOUBLE_EQ(c.bytes, kF32 * (32 + 64 + 8 + 32));
  EXPECT_TRUE(c.gemmLike);
  EXPECT_DOUBLE_EQ(estimateModelFlops(op), 2.0 * 4 * 8 * 8);
  EXPECT_EQ(classifyOp(op), OpClass::Gemm);
  EXPECT_TRUE(isKernelOp(op));
  // The ops inside are not kernels of their own.
  Operation &inner = op->getRegion(0).front().front();
  EXPECT_FALSE(isKernelOp(&inner));
}

/// A profile with round numbers.
DeviceProfile testProfile() {
  DeviceProfile p;
  p.name = "test";
  p.peakGemmFlops = 1e12;
  p.peakGemmFlops16 = 4e12;
  p.peakVectorFlops = 1e11;
  p.memoryBandwidth = 1e10;
  p.kernelOverheadS = 1e-6;
  p.efficiency = {0.5, 0.25, 0.5, 0.5, 0.8};
  return p;
}

TEST_F(CostModelTest, Roofline) {
  DeviceProfile p = testProfile();
  // A large matmul is compute-bound: 2 * 512^3 / (1e12 * 0.5).
  Operation *op = parseFirstOp(
      "%a: tensor<512x512xf32>",
      "%r = dtg.matmul %a, %a : tensor<512x512xf32>, tensor<512x512xf32> -> "
      "tensor<512x512xf32>");
  ASSERT_TRUE(op);
  double flops = 2.0 * 512 * 512 * 512;
  EXPECT_DOUBLE_EQ(estimateOpSeconds(op, p), flops / 5e11 + 1e-6);
  // In f16 it runs at the 16-bit peak (given the bandwidth to feed it).
  p.memoryBandwidth = 1e12;
  op = parseFirstOp(
      "%a: tensor<512x512xf16>",
      "%r = dtg.matmul %a, %a : tensor<512x512xf16>, tensor<512x512xf16> -> "
      "tensor<512x512xf16>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(estimateOpSeconds(op, p), flops / 2e12 + 1e-6);
  // An add is memory-bound: bytes / (1e10 * 0.8).
  p.memoryBandwidth = 1e10;
  op = parseFirstOp("%a: tensor<1024x1024xf32>",
                    "%r = dtg.add %a, %a : tensor<1024x1024xf32>, "
                    "tensor<1024x1024xf32> -> tensor<1024x1024xf32>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(estimateOpSeconds(op, p),
                   3.0 * 4 * 1024 * 1024 / 8e9 + 1e-6);
  // A reshape costs nothing, not even the overhead.
  op = parseFirstOp("%a: tensor<4x8xf32>",
                    "%r = \"dtg.reshape\"(%a) : (tensor<4x8xf32>) -> "
                    "tensor<32xf32>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(estimateOpSeconds(op, p), 0);
}

TEST(DeviceProfileTest, JsonRoundTrip) {
  DeviceProfile p = testProfile();
  p.threads = 3;
  p.source = "made up";
  std::string error;
  FailureOr<DeviceProfile> q = parseDeviceProfile(toJson(p), error);
  ASSERT_TRUE(succeeded(q)) << error;
  EXPECT_EQ(q->name, "test");
  EXPECT_EQ(q->source, "made up");
  EXPECT_EQ(q->threads, 3);
  EXPECT_DOUBLE_EQ(q->peakGemmFlops, 1e12);
  EXPECT_DOUBLE_EQ(q->peakGemmFlops16, 4e12);
  EXPECT_DOUBLE_EQ(q->peakVectorFlops, 1e11);
  EXPECT_DOUBLE_EQ(q->memoryBandwidth, 1e10);
  EXPECT_DOUBLE_EQ(q->kernelOverheadS, 1e-6);
  EXPECT_DOUBLE_EQ(q->efficiency.conv, 0.25);
  EXPECT_DOUBLE_EQ(q->efficiency.memory, 0.8);
  // No links: none written, none read.
  EXPECT_DOUBLE_EQ(q->intraNode.bandwidth, 0);

  p.memoryCapacity = 80e9;
  p.devicesPerNode = 8;
  p.networkEfficiency = 0.5;
  p.intraNode = {300e9, 2e-6};
  p.interNode = {25e9, 5e-6};
  q = parseDeviceProfile(toJson(p), error);
  ASSERT_TRUE(succeeded(q)) << error;
  EXPECT_DOUBLE_EQ(q->memoryCapacity, 80e9);
  EXPECT_EQ(q->devicesPerNode, 8);
  EXPECT_DOUBLE_EQ(q->networkEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(q->intraNode.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(q->intraNode.latencyS, 2e-6);
  EXPECT_DOUBLE_EQ(q->interNode.bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(q->interNode.latencyS, 5e-6);
}

// The alpha-beta times of REFERENCE.md, written out: a ring all-reduce of S
// bytes over n ranks takes 2(n - 1) alpha + 2(n - 1)/n S / beta, where the
// bytes a rank sends, 2(n - 1)/n S, are what the caller passes; an
// all-gather or reduce-scatter (n - 1) alpha + (n - 1)/n S / beta; a send
// alpha + S / beta; beta is the link's bandwidth times the network
// efficiency.
TEST(CollectiveTimeTest, AlphaBeta) {
  DeviceProfile::Link link{100e9, 3e-6};
  double S = 1e9;
  EXPECT_DOUBLE_EQ(estimateCollectiveSeconds(CollectiveKind::AllReduce, 8,
                                             2.0 * 7 / 8 * S, link, 0.5),
                   2 * 7 * 3e-6 + 2.0 * 7 / 8 * S / 50e9);
  EXPECT_DOUBLE_EQ(estimateCollectiveSeconds(CollectiveKind::AllGather, 4,
                                             3.0 / 4 * S, link, 1),
                   3 * 3e-6 + 3.0 / 4 * S / 100e9);
  EXPECT_DOUBLE_EQ(estimateCollectiveSeconds(CollectiveKind::ReduceScatter, 4,
                                             3.0 / 4 * S, link, 1),
                   3 * 3e-6 + 3.0 / 4 * S / 100e9);
  EXPECT_DOUBLE_EQ(
      estimateCollectiveSeconds(CollectiveKind::Send, 2, S, link, 1),
      3e-6 + S / 100e9);
  // A group of one moves nothing.
  EXPECT_EQ(estimateCollectiveSeconds(CollectiveKind::AllReduce, 1, 0, link, 1),
            0);
}

// Where a group lies: nodes of 8 consecutive ranks. A data-parallel group
// at tp 2 (ranks 0, 2, ..., 30) holds 4 ranks of each of 4 nodes; at tp 8
// one rank of each node; a tensor-parallel group is inside one node.
TEST(CollectiveTimeTest, GroupPlacement) {
  SmallVector<int64_t> dpAtTp2, dpAtTp8, tp8;
  for (int64_t i = 0; i < 16; ++i)
    dpAtTp2.push_back(2 * i);
  for (int64_t i = 0; i < 4; ++i)
    dpAtTp8.push_back(8 * i + 3);
  for (int64_t i = 0; i < 8; ++i)
    tp8.push_back(8 + i);
  GroupPlacement a = placeGroup(dpAtTp2, 8);
  EXPECT_EQ(a.ranksPerNode, 4);
  EXPECT_EQ(a.nodes, 4);
  EXPECT_TRUE(a.isHierarchical());
  GroupPlacement b = placeGroup(dpAtTp8, 8);
  EXPECT_EQ(b.ranksPerNode, 1);
  EXPECT_EQ(b.nodes, 4);
  EXPECT_FALSE(b.isHierarchical());
  GroupPlacement c = placeGroup(tp8, 8);
  EXPECT_EQ(c.ranksPerNode, 8);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_FALSE(c.isHierarchical());
  // Ranks 6..9: 2 in node 0, 2 in node 1; ranks 5..9: 3 and 2 (uneven).
  EXPECT_EQ(placeGroup({6, 7, 8, 9}, 8).ranksPerNode, 2);
  EXPECT_EQ(placeGroup({5, 6, 7, 8, 9}, 8).ranksPerNode, 0);
}

// REFERENCE.md's hierarchical all-reduce of S bytes over k ranks in each of
// G nodes, written out: a ring reduce-scatter inside the node, (k - 1)
// alpha_i + (k - 1)/k S / beta_i; a ring all-reduce of S/k across the
// nodes, 2(G - 1) alpha_e + 2(G - 1)/G (S/k) / beta_e; a ring all-gather
// inside the node, as the reduce-scatter. The k ranks of a node each send
// on their own inter-node link, so the inter-node phase moves S/k, not S.
TEST(CollectiveTimeTest, Hierarchical) {
  DeviceProfile p;
  p.intraNode = {300e9, 2e-6};
  p.interNode = {25e9, 5e-6};
  p.networkEfficiency = 0.8;
  double bi = 300e9 * 0.8, be = 25e9 * 0.8;
  double S = 6.6e9;
  GroupPlacement g{8, 4}; // a data-parallel group of 32 at tp 1
  double inside = 7 * 2e-6 + 7.0 / 8 * S / bi;
  EXPECT_NEAR(
      estimateHierarchicalCollectiveSeconds(CollectiveKind::AllReduce, g, S, p),
      2 * inside + 2 * 3 * 5e-6 + 2 * 3.0 / 4 * (S / 8) / be, 1e-12);
  EXPECT_NEAR(estimateHierarchicalCollectiveSeconds(
                  CollectiveKind::ReduceScatter, g, S, p),
              inside + 3 * 5e-6 + 3.0 / 4 * (S / 8) / be, 1e-12);
  EXPECT_NEAR(
      estimateHierarchicalCollectiveSeconds(CollectiveKind::AllGather, g, S, p),
      inside + 3 * 5e-6 + 3.0 / 4 * (S / 8) / be, 1e-12);
  // Against one ring of 32 over the inter-node link (every byte through
  // one rank's link): 2 x 31/32 S / be = 0.64 s; hierarchically 0.110 s.
  double flat = estimateCollectiveSeconds(CollectiveKind::AllReduce, 32,
                                          2.0 * 31 / 32 * S, p.interNode, 0.8);
  EXPECT_NEAR(flat, 0.6396, 1e-3);
  EXPECT_NEAR(
      estimateHierarchicalCollectiveSeconds(CollectiveKind::AllReduce, g, S, p),
      0.1100, 1e-3);
}

/// The error parsing `text` gives ("" if it parses).
std::string parseError(StringRef text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    llvm::consumeError(json.takeError());
    return "bad test JSON";
  }
  std::string error;
  if (succeeded(parseDeviceProfile(*json, error)))
    return "";
  return error;
}

TEST(DeviceProfileTest, Errors) {
  const char *good =
      R"({"name": "x", "peak_gemm_flops": 1e12, "peak_vector_flops": 1e11,
          "memory_bandwidth_bytes_per_s": 1e10, "kernel_overhead_s": 0})";
  EXPECT_EQ(parseError(good), "");
  EXPECT_EQ(parseError("[1, 2]"), "a device profile must be a JSON object");
  EXPECT_EQ(parseError(R"({"peak_gemm_flops": 1})"),
            "missing field \"name\" (a non-empty string)");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": 0})"),
            "missing field \"peak_gemm_flops\"");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 0,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": 0})"),
            "field \"peak_gemm_flops\" must be a positive number");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 1,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": "fast",
                           "kernel_overhead_s": 0})"),
            "field \"memory_bandwidth_bytes_per_s\" must be a positive "
            "number");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 1,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": -1})"),
            "field \"kernel_overhead_s\" must be a non-negative number");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 1,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": 0, "threads": 1.5})"),
            "field \"threads\" must be a positive integer");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 1,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": 0,
                           "efficiency": {"gemm": 1.5}})"),
            "field \"efficiency.gemm\" must be at most 1");
  EXPECT_EQ(parseError(R"({"name": "x", "peak_gemm_flops": 1,
                           "peak_vector_flops": 1,
                           "memory_bandwidth_bytes_per_s": 1,
                           "kernel_overhead_s": 0,
                           "efficiency": {"conv": 0}})"),
            "field \"efficiency.conv\" must be a positive number");
}

TEST(DeviceProfileTest, BuiltinsAndFiles) {
  std::string error;
  for (StringRef name : {"cpu", "a100-40g", "a100-80g", "h100-sxm", "h200"}) {
    FailureOr<DeviceProfile> p = loadDeviceProfile(name, error);
    ASSERT_TRUE(succeeded(p)) << name.str() << ": " << error;
    EXPECT_EQ(p->name, name.str());
    // Every built-in profile is valid in its own JSON form.
    std::string why;
    EXPECT_TRUE(succeeded(parseDeviceProfile(toJson(*p), why)))
        << name.str() << ": " << why;
  }
  // H100's dense bf16 peak, not the sparse 1,979 TFLOP/s.
  EXPECT_DOUBLE_EQ(loadDeviceProfile("h100-sxm", error)->peakGemmFlops16,
                   989.4e12);

  EXPECT_TRUE(failed(loadDeviceProfile("tpu-v9", error)));
  EXPECT_EQ(error, "unknown device profile 'tpu-v9' (known: a100-40g, "
                   "a100-80g, cpu, h100-sxm, h200; or a JSON file, as dtc "
                   "calibrate writes)");
  EXPECT_TRUE(failed(loadDeviceProfile("/nonexistent/p.json", error)));
  EXPECT_NE(error.find("cannot read device profile file "
                       "'/nonexistent/p.json'"),
            std::string::npos)
      << error;

  // A file in toJson's form loads; a malformed one names the file.
  SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "json", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << toJson(testProfile());
  }
  FailureOr<DeviceProfile> p = loadDeviceProfile(path, error);
  ASSERT_TRUE(succeeded(p)) << error;
  EXPECT_EQ(p->name, "test");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << "{\"name\": ";
  }
  EXPECT_TRUE(failed(loadDeviceProfile(path, error)));
  EXPECT_NE(error.find("is not valid JSON"), std::string::npos) << error;
  llvm::sys::fs::remove(path);
}

TEST(DeviceProfileTest, ProfilePath) {
  // A folder of DTC_PROFILE_PATH adds profiles by name, ahead of the
  // built-in ones (a calibrated cpu.json replaces the built-in cpu).
  SmallString<128> folder;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("profiles", folder));
  for (StringRef name : {"fast", "cpu"}) {
    DeviceProfile p = testProfile();
    p.name = name.str();
    p.peakGemmFlops = 4.2e15;
    SmallString<128> file(folder);
    llvm::sys::path::append(file, name + ".json");
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    os << toJson(p);
  }
  ASSERT_EQ(setenv("DTC_PROFILE_PATH",
                   ("/nonexistent:" + folder.str().str()).c_str(), 1),
            0);
  std::string error;
  for (StringRef name : {"fast", "cpu"}) {
    FailureOr<DeviceProfile> p = loadDeviceProfile(name, error);
    ASSERT_TRUE(succeeded(p)) << error;
    EXPECT_EQ(p->name, name.str());
    EXPECT_DOUBLE_EQ(p->peakGemmFlops, 4.2e15);
  }
  EXPECT_EQ(builtinDeviceProfileNames(),
            "a100-40g, a100-80g, cpu, fast, h100-sxm, h200");
  unsetenv("DTC_PROFILE_PATH");
  EXPECT_EQ(loadDeviceProfile("cpu", error)->peakGemmFlops, 207.5e9);
  EXPECT_TRUE(failed(loadDeviceProfile("fast", error)));
  llvm::sys::fs::remove_directories(folder);
}

} // namespace
