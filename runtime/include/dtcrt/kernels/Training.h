//===- Training.h - optimizer and schedule kernels of the CPU target -*- C++
//-*-===//
//
// sgd_update, adamw_update and lr_schedule. The reference is
// dialects/DTG/Interp/KernelsTraining.cpp, which mirrors torch.optim: every
// statement computes in double and rounds to the parameter's type where
// PyTorch's in-place tensor op would, and these kernels round at exactly the
// same steps (detail::roundTo is one correctly rounded step from double), so
// the results agree to the last bit. The generated code must be compiled
// without floating-point contraction (-ffp-contract=off where FMA is
// enabled), or a fused multiply-add would skip a rounding.
//
// Hyperparameters are rank-0 run-time tensors and come as pointers (inputs
// in operand order); the argument convention is the one at the top of
// Elementwise.h. Outputs may alias the matching inputs (new_param = param).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_TRAINING_H
#define DTCRT_KERNELS_TRAINING_H

#include "dtcrt/kernels/Elementwise.h"

namespace dtck {

namespace scalar {

/// sgdUpdate at one element (the CUDA target's kernel calls it too).
template <typename T>
DTCK_HD inline void sgdStep(T param, T grad, T buf, double lr, double mom,
                            double damp, double wd, bool nest, bool first,
                            T &newParam, T &newBuf) {
  double p = detail::toDouble(param);
  double b = detail::toDouble(buf);
  double d = detail::toDouble(grad);
  if (wd != 0)
    d = detail::toDouble(detail::roundTo<T>(d + wd * p));
  if (mom != 0) {
    // buf.mul_(momentum).add_(d, alpha=1 - dampening)
    if (!first) {
      double scaled = detail::toDouble(detail::roundTo<T>(mom * b));
      b = detail::toDouble(detail::roundTo<T>(scaled + (1 - damp) * d));
    } else {
      b = d;
    }
    d = nest ? detail::toDouble(detail::roundTo<T>(d + mom * b)) : b;
  }
  newBuf = detail::roundTo<T>(b);
  newParam = detail::roundTo<T>(p - lr * d);
}

/// adamWUpdate at one element, given lr / (1 - beta1^t) (`stepSize`) and
/// sqrt(1 - beta2^t) (`bc2Sqrt`).
template <typename T>
DTCK_HD inline void adamWStep(T param, T grad, T expAvg, T expAvgSq, double lr,
                              double b1, double b2, double eps, double wd,
                              double stepSize, double bc2Sqrt, T &newParam,
                              T &newExpAvg, T &newExpAvgSq) {
  auto round = [](double v) { return detail::toDouble(detail::roundTo<T>(v)); };
  double g = detail::toDouble(grad);
  double p = round(detail::toDouble(param) * (1 - lr * wd));
  // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1), and so on.
  double m = round(round(detail::toDouble(expAvg) * b1) + (1 - b1) * g);
  double v = round(round(detail::toDouble(expAvgSq) * b2) + (1 - b2) * g * g);
  // A square root or quotient of floats rounded to float is the float
  // operation's result (double has more than twice float's precision), so
  // for floats those two run in float: vector float square roots and
  // divisions are several times faster than double ones. Same bits.
  double root, ratio;
  if constexpr (std::is_same_v<T, float>)
    root = std::sqrt(static_cast<float>(v));
  else
    root = round(std::sqrt(v));
  double denom = round(root / bc2Sqrt + eps);
  if constexpr (std::is_same_v<T, float>)
    ratio = static_cast<float>(m) / static_cast<float>(denom);
  else
    ratio = round(m / denom);
  newExpAvg = detail::roundTo<T>(m);
  newExpAvgSq = detail::roundTo<T>(v);
  newParam = detail::roundTo<T>(p - stepSize * ratio);
}

/// lrSchedule's value for a valid kind (0 constant, 1 linear, 2 cosine).
DTCK_HD inline double scheduledLr(double peak, double floor, int64_t k,
                                  int64_t w, int64_t t, int64_t which) {
  if (w > 0 && k <= w)
    return peak * double(k) / double(w);
  if (which == 0)
    return peak;
  if (k > t)
    return floor;
  double span = double(t - w);
  if (span <= 0)
    return floor;
  if (which == 1)
    return floor + (peak - floor) * double(t - k) / span;
  return floor + (peak - floor) *
                     (1 + std::cos(detail::kPi * double(k - w) / span)) / 2;
}

} // namespace scalar

/// Elements of an optimizer update a thread takes at a time.
constexpr int64_t kUpdateBlock = 4096;

/// One torch.optim.SGD step: g = grad + wd * param; with momentum the buffer
/// becomes g (first step) or momentum * buf + (1 - dampening) * g, and the
/// direction is g + momentum * buf (nesterov) or buf; param -= lr * direction.
/// With momentum 0 the buffer is copied through.
template <typename T>
inline void sgdUpdate(const Shape &s, const T *param, const T *grad,
                      const T *buf, const double *lr, const double *momentum,
                      const double *dampening, const double *weightDecay,
                      const bool *nesterov, const bool *firstStep, T *newParam,
                      T *newBuf) {
  double lrV = *lr, mom = *momentum, damp = *dampening, wd = *weightDecay;
  bool nest = *nesterov, first = *firstStep;
  int64_t n = s.numel();
  parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t k = chunkBegin; k < chunkEnd; ++k) {
      scalar::sgdStep(param[k], grad[k], buf[k], lrV, mom, damp, wd, nest,
                      first, newParam[k], newBuf[k]);
    }
  });
}

/// One torch.optim.AdamW step at optimizer step `step` (>= 1): decoupled
/// weight decay, bias-corrected moments, no amsgrad.
template <typename T>
inline void
adamWUpdate(const Shape &s, const T *param, const T *grad, const T *expAvg,
            const T *expAvgSq, const double *lr, const double *beta1,
            const double *beta2, const double *eps, const double *weightDecay,
            const int64_t *step, T *newParam, T *newExpAvg, T *newExpAvgSq) {
  int64_t t = *step;
  if (t < 1) {
    char message[96];
    std::snprintf(message, sizeof(message),
                  "adamw_update: step must be at least 1, got %lld",
                  static_cast<long long>(t));
    fail(message);
  }
  double lrV = *lr, b1 = *beta1, b2 = *beta2, epsV = *eps, wd = *weightDecay;
  double bc1 = 1 - std::pow(b1, double(t));
  double bc2 = 1 - std::pow(b2, double(t));
  double stepSize = lrV / bc1, bc2Sqrt = std::sqrt(bc2);
  int64_t n = s.numel();
  int64_t blocks = (n + kUpdateBlock - 1) / kUpdateBlock;
  parallelFor(n, blocks, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
      // The state is updated in place (newParam may be param, and so on), but
      // element k is read before it is written and by no other iteration:
      // ivdep tells GCC so, and the loop over seven pointers that may alias
      // vectorizes (without it GCC keeps it scalar; through local copies it
      // vectorized at 1.6x this loop's time with AVX-512).
      int64_t begin = b * kUpdateBlock;
      int64_t end = std::min(n, begin + kUpdateBlock);
      _Pragma("GCC ivdep") for (int64_t k = begin; k < end; ++k)
          scalar::adamWStep(param[k], grad[k], expAvg[k], expAvgSq[k], lrV, b1,
                            b2, epsV, wd, stepSize, bc2Sqrt, newParam[k],
                            newExpAvg[k], newExpAvgSq[k]);
    }
  });
}

/// The learning rate at optimizer step `step` (1-based): linear warmup over
/// `warmup` steps, then constant (kind 0), linear (1) or cosine (2) decay to
/// `minLr` at step `total`, and `minLr` after it.
inline void lrSchedule(const double *lr, const int64_t *step,
                       const int64_t *warmup, const int64_t *total,
                       const double *minLr, const int64_t *kind,
                       double *result) {
  double peak = *lr, floor = *minLr;
  int64_t k = *step, w = *warmup, t = *total, which = *kind;
  if (which < 0 || which > 2) {
    char message[112];
    std::snprintf(message, sizeof(message),
                  "lr_schedule: unknown learning-rate schedule %lld (0 "
                  "constant, 1 linear, 2 cosine)",
                  static_cast<long long>(which));
    fail(message);
  }
  *result = scalar::scheduledLr(peak, floor, k, w, t, which);
}

} // namespace dtck

#endif // DTCRT_KERNELS_TRAINING_H
