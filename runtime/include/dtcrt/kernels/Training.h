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
  DTCK_PARALLEL_FOR(n)
  for (int64_t k = 0; k < n; ++k) {
    double p = detail::toDouble(param[k]);
    double b = detail::toDouble(buf[k]);
    double d = detail::toDouble(grad[k]);
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
    newBuf[k] = detail::roundTo<T>(b);
    newParam[k] = detail::roundTo<T>(p - lrV * d);
  }
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
  auto round = [](double v) { return detail::toDouble(detail::roundTo<T>(v)); };
  int64_t n = s.numel();
  DTCK_PARALLEL_FOR(n)
  for (int64_t k = 0; k < n; ++k) {
    double g = detail::toDouble(grad[k]);
    double p = round(detail::toDouble(param[k]) * (1 - lrV * wd));
    // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1), and so on.
    double m = round(round(detail::toDouble(expAvg[k]) * b1) + (1 - b1) * g);
    double v =
        round(round(detail::toDouble(expAvgSq[k]) * b2) + (1 - b2) * g * g);
    double denom = round(round(std::sqrt(v)) / bc2Sqrt + epsV);
    newExpAvg[k] = detail::roundTo<T>(m);
    newExpAvgSq[k] = detail::roundTo<T>(v);
    newParam[k] = detail::roundTo<T>(p - stepSize * round(m / denom));
  }
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
  if (w > 0 && k <= w) {
    *result = peak * double(k) / double(w);
    return;
  }
  if (which == 0) {
    *result = peak;
    return;
  }
  if (k > t) {
    *result = floor;
    return;
  }
  double span = double(t - w);
  if (span <= 0)
    *result = floor;
  else if (which == 1)
    *result = floor + (peak - floor) * double(t - k) / span;
  else
    *result = floor + (peak - floor) *
                          (1 + std::cos(detail::kPi * double(k - w) / span)) /
                          2;
}

} // namespace dtck

#endif // DTCRT_KERNELS_TRAINING_H
