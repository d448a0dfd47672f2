// RUN: dtc-opt %s --split-input-file --dtc-fold-constants -verify-diagnostics

// Run-time errors of the NN kernels, raised when constant folding evaluates
// an op that the verifier accepts but whose values the kernel cannot compute.

// Tests that batch_norm_training refuses a single value per channel (the
// Bessel-corrected variance would divide by zero), as PyTorch does.
func.func @batch_norm_training_one_value() -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = dtg.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %p = dtg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  // expected-error @+1 {{batch statistics need more than one value per channel, got 1}}
  %y, %m, %v = dtg.batch_norm_training %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>
  return %y, %m, %v : tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Tests that an einsum output term that repeats a letter is refused (by the
// verifier, before any kernel runs).
func.func @einsum_repeated_output_letter() -> tensor<2x2xf32> {
  %x = dtg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+2 {{output letter 'i' appears twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = dtg.einsum %x {equation = "i->ii"} : tensor<2xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
