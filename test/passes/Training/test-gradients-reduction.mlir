// RUN: dtc-opt %s --dtc-test-gradients -verify-diagnostics -o /dev/null

// Tests that the gradient rules of reductions, scans and losses match central
// finite differences (f64, through the reference interpreter). Where an op is
// not smooth (ties of max/min, zeros of prod) the inputs sit exactly on the
// kink, and the central difference gives what PyTorch gives there.

// Tests reduce_sum and reduce_mean over several axes, with and without kept
// dimensions.
// expected-remark @+1 {{gradients match}}
func.func @sum_mean(%x: tensor<2x3x4xf64>) -> (tensor<3xf64>, tensor<2x1x4xf64>, tensor<f64>) {
  %s = dtg.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf64> -> tensor<3xf64>
  %m = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf64> -> tensor<2x1x4xf64>
  %a = dtg.reduce_mean %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x3x4xf64> -> tensor<f64>
  %t = dtg.sin %s : tensor<3xf64>
  %u = dtg.sin %m : tensor<2x1x4xf64>
  %v = dtg.sin %a : tensor<f64>
  return %t, %u, %v : tensor<3xf64>, tensor<2x1x4xf64>, tensor<f64>
}

// Tests reduce_max and reduce_min over one axis, kept and not.
// expected-remark @+1 {{gradients match}}
func.func @max_min(%x: tensor<3x4x2xf64>) -> (tensor<3x2xf64>, tensor<1x4x2xf64>) {
  %m = dtg.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4x2xf64> -> tensor<3x2xf64>
  %n = dtg.reduce_min %x {axes = array<i64: 0>, keepdims = true} : tensor<3x4x2xf64> -> tensor<1x4x2xf64>
  %s = dtg.sin %m : tensor<3x2xf64>
  %t = dtg.exp %n : tensor<1x4x2xf64>
  return %s, %t : tensor<3x2xf64>, tensor<1x4x2xf64>
}

// Tests reduce_max and reduce_min over all axes and over none (the identity).
// expected-remark @+1 {{gradients match}}
func.func @max_min_all_none(%x: tensor<2x3xf64>) -> (tensor<f64>, tensor<2x3xf64>) {
  %m = dtg.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xf64> -> tensor<f64>
  %n = dtg.reduce_min %x {axes = array<i64>, keepdims = false} : tensor<2x3xf64> -> tensor<2x3xf64>
  %s = dtg.sin %m : tensor<f64>
  %t = dtg.exp %n : tensor<2x3xf64>
  return %s, %t : tensor<f64>, tensor<2x3xf64>
}

// Tests that two tied maxima (and two tied minima) share the gradient evenly,
// as torch.amax and torch.amin do: the central difference at a tie is half
// the one-sided slope.
// expected-remark @+1 {{gradients match}}
func.func @max_min_ties(%x: tensor<2x4xf64> {dtc.test_value = dense<[[0.5, 0.75, 0.75, -0.25], [0.25, -0.5, 0.5, -0.5]]> : tensor<2x4xf64>}) -> (tensor<2xf64>, tensor<2xf64>) {
  %m = dtg.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<2x4xf64> -> tensor<2xf64>
  %n = dtg.reduce_min %x {axes = array<i64: 1>, keepdims = false} : tensor<2x4xf64> -> tensor<2xf64>
  %s = dtg.sin %m : tensor<2xf64>
  %t = dtg.exp %n : tensor<2xf64>
  return %s, %t : tensor<2xf64>, tensor<2xf64>
}

// Tests reduce_prod on random inputs over two axes.
// expected-remark @+1 {{gradients match}}
func.func @prod(%x: tensor<2x3x2xf64>) -> tensor<2xf64> {
  %p = dtg.reduce_prod %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3x2xf64> -> tensor<2xf64>
  %s = dtg.sin %p : tensor<2xf64>
  return %s : tensor<2xf64>
}

// Tests reduce_prod at zeros: a row without zeros, a row with one zero (only
// the zero gets a gradient, the product of the others), and a row with two
// zeros (no gradient anywhere).
// expected-remark @+1 {{gradients match}}
func.func @prod_zeros(%x: tensor<3x3xf64> {dtc.test_value = dense<[[0.5, -0.75, 0.25], [0.5, 0.0, -0.75], [0.0, 0.5, 0.0]]> : tensor<3x3xf64>}) -> tensor<3x1xf64> {
  %p = dtg.reduce_prod %x {axes = array<i64: 1>, keepdims = true} : tensor<3x3xf64> -> tensor<3x1xf64>
  %s = dtg.exp %p : tensor<3x1xf64>
  return %s : tensor<3x1xf64>
}

// Tests reduce_logsumexp over one axis and over all.
// expected-remark @+1 {{gradients match}}
func.func @logsumexp(%x: tensor<3x4xf64>) -> (tensor<3x1xf64>, tensor<f64>) {
  %l = dtg.reduce_logsumexp %x {axes = array<i64: 1>, keepdims = true} : tensor<3x4xf64> -> tensor<3x1xf64>
  %a = dtg.reduce_logsumexp %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<3x4xf64> -> tensor<f64>
  %s = dtg.sin %l : tensor<3x1xf64>
  %t = dtg.sin %a : tensor<f64>
  return %s, %t : tensor<3x1xf64>, tensor<f64>
}

// Tests that argmax and argmin (integer results) pass no gradient while the
// values they select do.
// expected-remark @+1 {{gradients match}}
func.func @argmax_argmin(%x: tensor<3x4xf64>) -> (tensor<3x1xf64>, tensor<1x4xf64>) {
  %i = dtg.argmax %x {axis = 1 : i64, keepdims = true, select_last_index = false} : tensor<3x4xf64> -> tensor<3x1xi64>
  %j = dtg.argmin %x {axis = 0 : i64, keepdims = true, select_last_index = true} : tensor<3x4xf64> -> tensor<1x4xi64>
  %m = dtg.gather_elements %x, %i {axis = 1 : i64} : tensor<3x4xf64>, tensor<3x1xi64> -> tensor<3x1xf64>
  %n = dtg.gather_elements %x, %j {axis = 0 : i64} : tensor<3x4xf64>, tensor<1x4xi64> -> tensor<1x4xf64>
  %s = dtg.sin %m : tensor<3x1xf64>
  %t = dtg.exp %n : tensor<1x4xf64>
  return %s, %t : tensor<3x1xf64>, tensor<1x4xf64>
}

// Tests cumsum, inclusive and forward.
// expected-remark @+1 {{gradients match}}
func.func @cumsum(%x: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %c = dtg.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<3x5xf64>
  %s = dtg.sin %c : tensor<3x5xf64>
  return %s : tensor<3x5xf64>
}

// Tests cumsum, exclusive and forward.
// expected-remark @+1 {{gradients match}}
func.func @cumsum_exclusive(%x: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %c = dtg.cumsum %x {axis = 0 : i64, exclusive = true, reverse = false} : tensor<4x3xf64>
  %s = dtg.sin %c : tensor<4x3xf64>
  return %s : tensor<4x3xf64>
}

// Tests cumsum, inclusive and reversed.
// expected-remark @+1 {{gradients match}}
func.func @cumsum_reverse(%x: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %c = dtg.cumsum %x {axis = 1 : i64, exclusive = false, reverse = true} : tensor<3x5xf64>
  %s = dtg.sin %c : tensor<3x5xf64>
  return %s : tensor<3x5xf64>
}

// Tests cumsum, exclusive and reversed.
// expected-remark @+1 {{gradients match}}
func.func @cumsum_exclusive_reverse(%x: tensor<2x4x2xf64>) -> tensor<2x4x2xf64> {
  %c = dtg.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x4x2xf64>
  %s = dtg.sin %c : tensor<2x4x2xf64>
  return %s : tensor<2x4x2xf64>
}

// Tests nll_loss with reduction none, a class weight and an ignored position
// (it gets no gradient).
// expected-remark @+1 {{gradients match}}
func.func @nll_none(%x: tensor<4x3xf64>, %t: tensor<4xi64> {dtc.test_value = dense<[2, -100, 0, 2]> : tensor<4xi64>}) -> tensor<4xf64> {
  %w = dtg.constant dense<[0.5, 2.0, 1.5]> : tensor<3xf64>
  %l = dtg.nll_loss %x, %t, %w {reduction = "none", ignore_index = -100 : i64} : tensor<4x3xf64>, tensor<4xi64>, tensor<3xf64> -> tensor<4xf64>
  %s = dtg.sin %l : tensor<4xf64>
  return %s : tensor<4xf64>
}

// Tests nll_loss with reduction sum, no weight, over [N, C, d] with i32
// targets.
// expected-remark @+1 {{gradients match}}
func.func @nll_sum(%x: tensor<2x4x3xf64>, %t: tensor<2x3xi32> {dtc.test_value = dense<[[0, 3, 3], [1, 2, 0]]> : tensor<2x3xi32>}) -> tensor<f64> {
  %l = dtg.nll_loss %x, %t {reduction = "sum"} : tensor<2x4x3xf64>, tensor<2x3xi32> -> tensor<f64>
  %s = dtg.sin %l : tensor<f64>
  return %s : tensor<f64>
}

// Tests nll_loss with reduction mean, a weight and an ignore_index that is a
// class (ignored positions neither add to the loss nor to the total weight).
// expected-remark @+1 {{gradients match}}
func.func @nll_mean_weighted(%x: tensor<5x3xf64>, %t: tensor<5xi64> {dtc.test_value = dense<[1, 0, 2, 1, 1]> : tensor<5xi64>}) -> tensor<f64> {
  %w = dtg.constant dense<[0.5, 2.0, 1.5]> : tensor<3xf64>
  %l = dtg.nll_loss %x, %t, %w {reduction = "mean", ignore_index = 0 : i64} : tensor<5x3xf64>, tensor<5xi64>, tensor<3xf64> -> tensor<f64>
  %s = dtg.sin %l : tensor<f64>
  return %s : tensor<f64>
}

// Tests nll_loss with reduction mean and no weight over [N, C, d1, d2].
// expected-remark @+1 {{gradients match}}
func.func @nll_mean_spatial(%x: tensor<2x3x2x2xf64>, %t: tensor<2x2x2xi64> {dtc.test_value = dense<[[[0, 2], [1, -1]], [[2, 2], [-1, 0]]]> : tensor<2x2x2xi64>}) -> tensor<f64> {
  %l = dtg.nll_loss %x, %t {reduction = "mean", ignore_index = -1 : i64} : tensor<2x3x2x2xf64>, tensor<2x2x2xi64> -> tensor<f64>
  %s = dtg.sin %l : tensor<f64>
  return %s : tensor<f64>
}

// Tests the gradient of nll_loss's weight when it is a parameter, for each
// reduction (PyTorch has none; this is the exact derivative, the total
// weight of mean included).
// expected-remark @+1 {{gradients match}}
func.func @nll_weight(%x: tensor<5x3xf64>, %t: tensor<5xi64> {dtc.test_value = dense<[1, 0, 2, -100, 1]> : tensor<5xi64>}, %w: tensor<3xf64> {dtc.test_range = [0.5, 2.0]}) -> (tensor<5xf64>, tensor<f64>, tensor<f64>) {
  %a = dtg.nll_loss %x, %t, %w {reduction = "none", ignore_index = -100 : i64} : tensor<5x3xf64>, tensor<5xi64>, tensor<3xf64> -> tensor<5xf64>
  %b = dtg.nll_loss %x, %t, %w {reduction = "sum", ignore_index = -100 : i64} : tensor<5x3xf64>, tensor<5xi64>, tensor<3xf64> -> tensor<f64>
  %c = dtg.nll_loss %x, %t, %w {reduction = "mean", ignore_index = -100 : i64} : tensor<5x3xf64>, tensor<5xi64>, tensor<3xf64> -> tensor<f64>
  %s = dtg.sin %a : tensor<5xf64>
  %u = dtg.sin %b : tensor<f64>
  %v = dtg.sin %c : tensor<f64>
  return %s, %u, %v : tensor<5xf64>, tensor<f64>, tensor<f64>
}

// Tests a cross-entropy loss as the importer builds it (log_softmax, then
// nll_loss with mean).
// expected-remark @+1 {{gradients match}}
func.func @cross_entropy(%x: tensor<4x5xf64>, %t: tensor<4xi64> {dtc.test_value = dense<[4, 0, 2, 2]> : tensor<4xi64>}) -> tensor<f64> {
  %m = dtg.reduce_logsumexp %x {axes = array<i64: 1>, keepdims = true} : tensor<4x5xf64> -> tensor<4x1xf64>
  %p = dtg.sub %x, %m : tensor<4x5xf64>, tensor<4x1xf64> -> tensor<4x5xf64>
  %l = dtg.nll_loss %p, %t {reduction = "mean"} : tensor<4x5xf64>, tensor<4xi64> -> tensor<f64>
  return %l : tensor<f64>
}
