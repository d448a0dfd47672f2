//===- KernelsTraining.cpp - kernels of optimizer and schedule ops --===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

/// The learning rate at optimizer step k (REFERENCE.md).
double mlir::dtg::interp::scheduledLearningRate(double lr, int64_t k,
                                                int64_t warmup, int64_t total,
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

void mlir::dtg::interp::registerTrainingKernels(KernelRegistry &registry) {
  registry.add<SgdUpdateOp>([](Operation *op, ArrayRef<Tensor> in,
                               SmallVectorImpl<Tensor> &out) {
    const Tensor &p = in[0], &g = in[1], &buf = in[2];
    double lr = in[3].f[0], momentum = in[4].f[0], dampening = in[5].f[0],
           wd = in[6].f[0];
    bool nesterov = in[7].i[0], first = in[8].i[0];
    Tensor newP = p, newBuf = buf;
    for (int64_t k = 0, n = p.numElements(); k < n; ++k) {
      // Each statement rounds to the parameter type, as PyTorch's kernels.
      double d = g.f[k];
      if (wd != 0)
        d = roundToFloatType(p.elementType, d + wd * p.f[k]);
      if (momentum != 0) {
        // buf.mul_(momentum).add_(d, alpha=1 - dampening)
        double b =
            first ? d
                  : roundToFloatType(
                        p.elementType,
                        roundToFloatType(p.elementType, momentum * buf.f[k]) +
                            (1 - dampening) * d);
        newBuf.f[k] = b;
        d = nesterov
                ? roundToFloatType(p.elementType, d + momentum * newBuf.f[k])
                : newBuf.f[k];
      }
      newP.set(k, p.f[k] - lr * d);
    }
    out.push_back(std::move(newP));
    out.push_back(std::move(newBuf));
    return success();
  });
  registry.add<AdamWUpdateOp>(
      [](Operation *op, ArrayRef<Tensor> in,
         SmallVectorImpl<Tensor> &out) -> LogicalResult {
        const Tensor &p = in[0], &g = in[1], &m = in[2], &v = in[3];
        double lr = in[4].f[0], beta1 = in[5].f[0], beta2 = in[6].f[0],
               eps = in[7].f[0], wd = in[8].f[0];
        int64_t step = in[9].i[0];
        if (step < 1)
          return op->emitError("AdamW step must be at least 1, got ") << step;
        double bc1 = 1 - std::pow(beta1, double(step));
        double bc2 = 1 - std::pow(beta2, double(step));
        double stepSize = lr / bc1, bc2Sqrt = std::sqrt(bc2);
        Type t = p.elementType;
        Tensor newP = p, newM = m, newV = v;
        for (int64_t k = 0, n = p.numElements(); k < n; ++k) {
          double param = roundToFloatType(t, p.f[k] * (1 - lr * wd));
          // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1), and so on.
          double mk = roundToFloatType(t, roundToFloatType(t, m.f[k] * beta1) +
                                              (1 - beta1) * g.f[k]);
          double vk = roundToFloatType(t, roundToFloatType(t, v.f[k] * beta2) +
                                              (1 - beta2) * g.f[k] * g.f[k]);
          double denom = roundToFloatType(
              t, roundToFloatType(t, std::sqrt(vk)) / bc2Sqrt + eps);
          newM.f[k] = mk;
          newV.f[k] = vk;
          newP.set(k, param - stepSize * roundToFloatType(t, mk / denom));
        }
        out.push_back(std::move(newP));
        out.push_back(std::move(newM));
        out.push_back(std::move(newV));
        return success();
      });
  registry.add<LrScheduleOp>([](Operation *op, ArrayRef<Tensor> in,
                                SmallVectorImpl<Tensor> &out) -> LogicalResult {
    int64_t kind = in[5].i[0];
    if (kind < 0 || kind > 2)
      return op->emitError("unknown learning-rate schedule ")
             << kind << " (0 constant, 1 linear, 2 cosine)";
    Tensor r = makeResult(op->getResult(0).getType());
    r.f[0] = scheduledLearningRate(in[0].f[0], in[1].i[0], in[2].i[0],
                                   in[3].i[0], in[4].f[0], kind);
    out.push_back(std::move(r));
    return success();
  });
}
