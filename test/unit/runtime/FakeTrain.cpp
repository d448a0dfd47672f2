//===- FakeTrain.cpp - a hand-written `train` for the runtime's tests -----===//
//
// What generated code will look like, written by hand: a dtcrt_model_desc
// and a step for a tiny masked linear regression with a per-class bias,
//
//   pred_j = scale * (w . x_j) + b[y_j],   target_j = y_j / 2,
//   loss   = sum_j mask_j (pred_j - target_j)^2 / max(1, sum_j mask_j),
//
// trained by torch.optim.SGD (momentum, dampening, Nesterov, weight decay)
// after global-norm clipping, with the learning-rate schedule of
// REFERENCE.md. `scale` is a frozen parameter, `running_mean` model state
// (0.9 * running_mean + 0.1 * the batch mean of x). The intermediate
// buffers live in the arena, and every kernel reports them and honours
// guard mode, as generated code does. test/runtime/Inputs/fake_model.py is
// the NumPy twin the lit tests compare against.
//
// Test hooks (environment): DTCRT_FAKE_OVERRUN=1 makes the "/Sub" kernel
// write one element past its buffer; DTCRT_FAKE_FAIL_AT_STEP=K makes a
// kernel fail in step K; DTCRT_FAKE_NO_EVAL=1 builds the model without its
// forward-only step.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/dtcrt.h"
#include "dtcrt/kernels/Common.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace {
constexpr int64_t kBatch = 4, kFeatures = 3, kClasses = 4;

/// Arena layout: predictions, residuals, gradients (w then b).
constexpr int64_t kPredOffset = 0, kResidOffset = 64, kGradOffset = 128;
constexpr int64_t kVecBytes = kBatch * 4;
constexpr int64_t kGradBytes = (kFeatures + kClasses) * 4;

enum Arg {
  W,
  B,
  Scale,
  RunningMean,
  WMomentum,
  BMomentum,
  X,
  Y,
  Mask,
  Lr,
  WeightDecay,
  ClipNorm,
  LrSchedule,
  Warmup,
  TotalSteps,
  MinLr,
  Seed,
  Momentum,
  Dampening,
  Nesterov,
  Step,
  NumArgs
};

enum Result {
  NewW,
  NewB,
  NewRunningMean,
  NewWMomentum,
  NewBMomentum,
  Loss,
  LrMetric,
  GradNorm,
  NumResults
};

#define TENSOR(name, role, dtype, rank, d0, d1, offset)                        \
  { name, role, dtype, rank, {d0, d1}, offset, 0, 0 }
#define HYPER(name, dtype, value)                                              \
  { name, "hyper", dtype, 0, {}, -1, value, 0 }

const dtcrt_tensor_desc kArgs[NumArgs] = {
    TENSOR("w", "parameter", "f32", 1, kFeatures, 0, 0),
    TENSOR("b", "parameter", "f32", 1, kClasses, 0, 12),
    TENSOR("scale", "parameter", "f32", 0, 0, 0, 28),
    TENSOR("running_mean", "state", "f32", 1, kFeatures, 0, 32),
    TENSOR("w.momentum_buffer", "optimizer_state", "f32", 1, kFeatures, 0, -1),
    TENSOR("b.momentum_buffer", "optimizer_state", "f32", 1, kClasses, 0, -1),
    TENSOR("x", "input", "f32", 2, kBatch, kFeatures, -1),
    {"y", "input", "i64", 1, {kBatch}, -1, 0, kClasses - 1},
    TENSOR("mask", "input", "bool", 1, kBatch, 0, -1),
    HYPER("lr", "f64", 0.1),
    HYPER("weight_decay", "f64", 0.0),
    HYPER("clip_norm", "f64", 0.0),
    HYPER("lr_schedule", "i64", 0),
    HYPER("warmup", "i64", 0),
    HYPER("total_steps", "i64", 0),
    HYPER("min_lr", "f64", 0.0),
    HYPER("seed", "i64", 0),
    HYPER("momentum", "f64", 0.9),
    HYPER("dampening", "f64", 0.0),
    HYPER("nesterov", "bool", 0),
    {"step", "step", "i64", 0, {}, -1, 0, 0},
};

const dtcrt_tensor_desc kResults[NumResults] = {
    TENSOR("w", "parameter", "f32", 1, kFeatures, 0, -1),
    TENSOR("b", "parameter", "f32", 1, kClasses, 0, -1),
    TENSOR("running_mean", "state", "f32", 1, kFeatures, 0, -1),
    TENSOR("w.momentum_buffer", "optimizer_state", "f32", 1, kFeatures, 0, -1),
    TENSOR("b.momentum_buffer", "optimizer_state", "f32", 1, kClasses, 0, -1),
    TENSOR("loss", "metric", "f32", 0, 0, 0, -1),
    TENSOR("lr", "metric", "f64", 0, 0, 0, -1),
    TENSOR("grad_norm", "metric", "f64", 0, 0, 0, -1),
};

template <typename T> T scalar(void *const *args, int i) {
  T v;
  std::memcpy(&v, args[i], sizeof(T));
  return v;
}

/// Runs one "kernel": names it, poisons dead arena bytes in guard mode,
/// notes the buffer it writes, and checks the dead bytes afterwards.
template <typename Body>
void kernel(dtcrt_step_ctx *ctx, const char *op, const int64_t *live, int n,
            int64_t writeOffset, int64_t writeBytes, Body body) {
  ctx->current_op = op;
  if (ctx->guard)
    dtcrt_guard_fill(ctx, live, n);
  dtcrt_arena_note(ctx, writeOffset, writeBytes);
  body();
  if (ctx->guard)
    dtcrt_guard_check(ctx, live, n, op);
}

/// The learning rate at step k (REFERENCE.md).
double scheduledLr(double lr, int64_t k, int64_t warmup, int64_t total,
                   double minLr, int64_t kind) {
  if (warmup > 0 && k <= warmup)
    return lr * double(k) / double(warmup);
  if (kind == 0)
    return lr;
  if (k > total)
    return minLr;
  double span = double(total - warmup);
  if (span <= 0)
    return minLr;
  if (kind == 1)
    return minLr + (lr - minLr) * double(total - k) / span;
  return minLr +
         (lr - minLr) * (1 + std::cos(M_PI * double(k - warmup) / span)) / 2;
}

/// The forward pass into the arena; returns the loss.
float forward(void *const *args, dtcrt_step_ctx *ctx) {
  const float *w = static_cast<const float *>(args[W]);
  const float *b = static_cast<const float *>(args[B]);
  float scale = scalar<float>(args, Scale);
  const float *x = static_cast<const float *>(args[X]);
  const int64_t *y = static_cast<const int64_t *>(args[Y]);
  const bool *mask = static_cast<const bool *>(args[Mask]);
  float *pred = reinterpret_cast<float *>(ctx->arena + kPredOffset);
  float *resid = reinterpret_cast<float *>(ctx->arena + kResidOffset);

  const int64_t predLive[] = {kPredOffset, kVecBytes};
  kernel(ctx, "/MatMul", predLive, 1, kPredOffset, kVecBytes, [&] {
    for (int64_t j = 0; j < kBatch; ++j) {
      double dot = 0;
      for (int64_t i = 0; i < kFeatures; ++i)
        dot += double(w[i]) * double(x[j * kFeatures + i]);
      pred[j] = float(double(scale) * dot);
    }
  });
  kernel(ctx, "/Gather_bias", predLive, 1, kPredOffset, kVecBytes, [&] {
    for (int64_t j = 0; j < kBatch; ++j) {
      if (y[j] < 0 || y[j] >= kClasses)
        dtck::fail("index out of range: y holds a class outside [0, 4)");
      pred[j] += b[y[j]];
    }
  });
  const int64_t subLive[] = {kPredOffset, kVecBytes, kResidOffset, kVecBytes};
  bool overrun = std::getenv("DTCRT_FAKE_OVERRUN") != nullptr;
  kernel(ctx, "/Sub", subLive, 2, kResidOffset, kVecBytes, [&] {
    for (int64_t j = 0; j < kBatch; ++j)
      resid[j] = pred[j] - float(y[j]) * 0.5f;
    if (overrun)
      resid[kBatch] = 1.0f; // one element past the buffer
  });
  double sum = 0, count = 0;
  for (int64_t j = 0; j < kBatch; ++j)
    if (mask[j]) {
      sum += double(resid[j]) * double(resid[j]);
      count += 1;
    }
  return float(sum / (count > 0 ? count : 1));
}

void step(void *const *args, void *const *results, dtcrt_step_ctx *ctx) {
  int64_t k = scalar<int64_t>(args, Step);
  if (const char *failAt = std::getenv("DTCRT_FAKE_FAIL_AT_STEP"))
    if (std::atoll(failAt) == k + 1) {
      ctx->current_op = "/Injected";
      dtck::fail("injected failure");
    }
  float loss = forward(args, ctx);

  const float *w = static_cast<const float *>(args[W]);
  const float *b = static_cast<const float *>(args[B]);
  float scale = scalar<float>(args, Scale);
  const float *x = static_cast<const float *>(args[X]);
  const int64_t *y = static_cast<const int64_t *>(args[Y]);
  const bool *mask = static_cast<const bool *>(args[Mask]);
  const float *resid = reinterpret_cast<float *>(ctx->arena + kResidOffset);
  float *grad = reinterpret_cast<float *>(ctx->arena + kGradOffset);

  const int64_t gradLive[] = {kResidOffset, kVecBytes, kGradOffset, kGradBytes};
  kernel(ctx, "/Grad", gradLive, 2, kGradOffset, kGradBytes, [&] {
    double count = 0;
    for (int64_t j = 0; j < kBatch; ++j)
      count += mask[j] ? 1 : 0;
    count = count > 0 ? count : 1;
    double gw[kFeatures] = {}, gb[kClasses] = {};
    for (int64_t j = 0; j < kBatch; ++j) {
      if (!mask[j])
        continue;
      double r = 2.0 * double(resid[j]) / count;
      for (int64_t i = 0; i < kFeatures; ++i)
        gw[i] += r * double(scale) * double(x[j * kFeatures + i]);
      gb[y[j]] += r;
    }
    for (int64_t i = 0; i < kFeatures; ++i)
      grad[i] = float(gw[i]);
    for (int64_t c = 0; c < kClasses; ++c)
      grad[kFeatures + c] = float(gb[c]);
  });

  // Clipping, schedule and SGD, on the host.
  ctx->current_op = "/SGD";
  double norm = 0;
  for (int64_t i = 0; i < kFeatures + kClasses; ++i)
    norm += double(grad[i]) * double(grad[i]);
  norm = std::sqrt(norm);
  double clip = scalar<double>(args, ClipNorm);
  double coef = clip > 0 ? std::fmin(1.0, clip / (norm + 1e-6)) : 1.0;
  double lr = scheduledLr(
      scalar<double>(args, Lr), k + 1, scalar<int64_t>(args, Warmup),
      scalar<int64_t>(args, TotalSteps), scalar<double>(args, MinLr),
      scalar<int64_t>(args, LrSchedule));
  double wd = scalar<double>(args, WeightDecay);
  double momentum = scalar<double>(args, Momentum);
  double dampening = scalar<double>(args, Dampening);
  bool nesterov = scalar<bool>(args, Nesterov);
  auto update = [&](const float *p, const float *g, const float *buf,
                    float *newP, float *newBuf, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      double gi = double(g[i]) * coef + wd * double(p[i]);
      double bi = gi;
      if (momentum != 0) {
        bi = k == 0 ? gi : momentum * double(buf[i]) + (1 - dampening) * gi;
        gi = nesterov ? gi + momentum * bi : bi;
      }
      newBuf[i] = float(bi);
      newP[i] = float(double(p[i]) - lr * gi);
    }
  };
  update(w, grad, static_cast<const float *>(args[WMomentum]),
         static_cast<float *>(results[NewW]),
         static_cast<float *>(results[NewWMomentum]), kFeatures);
  update(b, grad + kFeatures, static_cast<const float *>(args[BMomentum]),
         static_cast<float *>(results[NewB]),
         static_cast<float *>(results[NewBMomentum]), kClasses);

  const float *rm = static_cast<const float *>(args[RunningMean]);
  float *newRm = static_cast<float *>(results[NewRunningMean]);
  for (int64_t i = 0; i < kFeatures; ++i) {
    double mean = 0;
    for (int64_t j = 0; j < kBatch; ++j)
      mean += double(x[j * kFeatures + i]);
    newRm[i] = float(0.9 * double(rm[i]) + 0.1 * mean / double(kBatch));
  }
  std::memcpy(results[Loss], &loss, 4);
  std::memcpy(results[LrMetric], &lr, 8);
  std::memcpy(results[GradNorm], &norm, 8);
}

void evalStep(void *const *args, void *const *results, dtcrt_step_ctx *ctx) {
  float loss = forward(args, ctx);
  std::memcpy(results[Loss], &loss, 4);
}

dtcrt_model_desc kModel = {"fake",
                           NumArgs,
                           kArgs,
                           NumResults,
                           kResults,
                           /*arena_bytes=*/256,
                           kBatch,
                           /*micro_batch=*/2,
                           step,
                           evalStep};
} // namespace

int main(int argc, char **argv) {
  if (std::getenv("DTCRT_FAKE_NO_EVAL"))
    kModel.eval_step = nullptr;
  return dtcrt_train_main(argc, argv, &kModel);
}
