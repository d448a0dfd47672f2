//===- NN.h - contractions, convolution, pooling, norms, dropout ----------===//
//
// The CPU kernels of the dtg NN family. Each computes what the reference
// interpreter computes (dialects/DTG/Interp/KernelsNN.cpp) for the same op:
//
// - GEMM-shaped work (matmul, gemm, convolution through im2col and its two
//   gradients) goes to OpenBLAS and accumulates in float for f32, bf16 and
//   f16 (16-bit operands are widened to float first) and in double for f64,
//   as PyTorch's CPU kernels do; small matmuls and integer matmuls run plain
//   loops (integers in wrapping 64-bit arithmetic, like the interpreter).
//   OpenBLAS is switched to one thread on first use: the kernels split the
//   work across OpenMP's threads themselves (whole products per thread, or
//   row/column blocks of one product), so that two thread pools never
//   compete for the cores. 2-D float convolutions with one group go to
//   oneDNN's convolution primitives where it has a JIT kernel for them
//   (ConvLibrary.h), depthwise ones to direct kernels (Conv.h).
// - Einsum, pooling, pooling gradients, normalizations, softmax and dropout
//   compute in double and round once, so they agree with the interpreter to
//   the last bit up to the order of additions.
//
// Shapes are static (the emitter checks them against the attributes);
// results never overlap operands (the memory planner keeps them apart).
//
// The family is one header per kind of kernel, all included here:
// NNSupport.h (threads, GEMM, widening), Window.h (window geometry,
// im2col), Matmul.h, Conv.h, Pooling.h, Normalization.h, Dropout.h.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_NN_H
#define DTCRT_KERNELS_NN_H

#include "dtcrt/kernels/Conv.h"
#include "dtcrt/kernels/Dropout.h"
#include "dtcrt/kernels/Matmul.h"
#include "dtcrt/kernels/NNSupport.h"
#include "dtcrt/kernels/Normalization.h"
#include "dtcrt/kernels/Pooling.h"
#include "dtcrt/kernels/Window.h"

#endif // DTCRT_KERNELS_NN_H
