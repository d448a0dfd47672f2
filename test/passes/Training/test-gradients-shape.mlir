// RUN: dtc-opt %s --dtc-test-gradients -verify-diagnostics -o /dev/null

// Tests that the gradient rules of the shape family match central finite
// differences (f64, through the reference interpreter). Each function ends in
// a nonlinearity where the op alone would be linear, so a gradient routed to
// the wrong element shows up.

// Tests reshape (Flatten/Squeeze/Unsqueeze) and a 3-D transpose.
// expected-remark @+1 {{gradients match}}
func.func @reshape_transpose(%x: tensor<2x3x4xf64>) -> tensor<4x6xf64> {
  %t = dtg.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
  %r = dtg.reshape %t : tensor<4x2x3xf64> -> tensor<4x6xf64>
  %s = dtg.sin %r : tensor<4x6xf64>
  return %s : tensor<4x6xf64>
}

// Tests concat along a middle axis, with an operand used twice.
// expected-remark @+1 {{gradients match}}
func.func @concat_axis1(%a: tensor<2x1x3xf64>, %b: tensor<2x2x3xf64>) -> tensor<2x5x3xf64> {
  %c = dtg.concat %a, %b, %a {axis = 1 : i64} : tensor<2x1x3xf64>, tensor<2x2x3xf64>, tensor<2x1x3xf64> -> tensor<2x4x3xf64>
  %d = dtg.concat %c, %a {axis = 1 : i64} : tensor<2x4x3xf64>, tensor<2x1x3xf64> -> tensor<2x5x3xf64>
  %s = dtg.sin %d : tensor<2x5x3xf64>
  return %s : tensor<2x5x3xf64>
}

// Tests concat with an empty operand along the axis.
// expected-remark @+1 {{gradients match}}
func.func @concat_empty(%a: tensor<0x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %c = dtg.concat %a, %b {axis = 0 : i64} : tensor<0x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  %s = dtg.exp %c : tensor<2x3xf64>
  return %s : tensor<2x3xf64>
}

// Tests a unit-step slice (the gradient is a zero pad on both sides).
// expected-remark @+1 {{gradients match}}
func.func @slice_unit(%x: tensor<4x5xf64>) -> tensor<2x3xf64> {
  %y = dtg.slice %x {starts = array<i64: 1, 2>, limits = array<i64: 3, 5>, steps = array<i64: 1, 1>} : tensor<4x5xf64> -> tensor<2x3xf64>
  %s = dtg.sin %y : tensor<2x3xf64>
  return %s : tensor<2x3xf64>
}

// Tests a slice with step -1 (a reversal) in one dimension.
// expected-remark @+1 {{gradients match}}
func.func @slice_reverse(%x: tensor<3x6xf64>) -> tensor<2x4xf64> {
  %y = dtg.slice %x {starts = array<i64: 0, 4>, limits = array<i64: 2, 0>, steps = array<i64: 1, -1>} : tensor<3x6xf64> -> tensor<2x4xf64>
  %s = dtg.sin %y : tensor<2x4xf64>
  return %s : tensor<2x4xf64>
}

// Tests slices with steps 2 and -2 (taking index 0 with limit -1) and 3.
// expected-remark @+1 {{gradients match}}
func.func @slice_strided(%x: tensor<7x8xf64>) -> (tensor<3x4xf64>, tensor<2x3xf64>) {
  %y = dtg.slice %x {starts = array<i64: 1, 6>, limits = array<i64: 7, -1>, steps = array<i64: 2, -2>} : tensor<7x8xf64> -> tensor<3x4xf64>
  %z = dtg.slice %x {starts = array<i64: 6, 0>, limits = array<i64: 0, 8>, steps = array<i64: -3, 3>} : tensor<7x8xf64> -> tensor<2x3xf64>
  %s = dtg.sin %y : tensor<3x4xf64>
  %t = dtg.exp %z : tensor<2x3xf64>
  return %s, %t : tensor<3x4xf64>, tensor<2x3xf64>
}

// Tests an empty slice (no gradient reaches the operand).
// expected-remark @+1 {{gradients match}}
func.func @slice_empty(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = dtg.slice %x {starts = array<i64: 2>, limits = array<i64: 2>, steps = array<i64: 1>} : tensor<4xf64> -> tensor<0xf64>
  %c = dtg.concat %y, %x {axis = 0 : i64} : tensor<0xf64>, tensor<4xf64> -> tensor<4xf64>
  %s = dtg.sin %c : tensor<4xf64>
  return %s : tensor<4xf64>
}

// Tests gather on axis 0 (an embedding lookup) with negative and repeated
// indices: repeated rows accumulate.
// expected-remark @+1 {{gradients match}}
func.func @gather_embedding(%table: tensor<5x3xf64>, %ids: tensor<2x3xi64> {dtc.test_value = dense<[[1, -1, 1], [4, 0, 1]]> : tensor<2x3xi64>}) -> tensor<2x3x3xf64> {
  %e = dtg.gather %table, %ids {axis = 0 : i64} : tensor<5x3xf64>, tensor<2x3xi64> -> tensor<2x3x3xf64>
  %s = dtg.sin %e : tensor<2x3x3xf64>
  return %s : tensor<2x3x3xf64>
}

// Tests gather on a middle axis with i32 indices and a scalar index.
// expected-remark @+1 {{gradients match}}
func.func @gather_middle(%x: tensor<2x4x3xf64>, %i: tensor<3xi32> {dtc.test_value = dense<[3, -4, 3]> : tensor<3xi32>}, %j: tensor<i64> {dtc.test_value = dense<-2> : tensor<i64>}) -> (tensor<2x3x3xf64>, tensor<2x3xf64>) {
  %y = dtg.gather %x, %i {axis = 1 : i64} : tensor<2x4x3xf64>, tensor<3xi32> -> tensor<2x3x3xf64>
  %z = dtg.gather %x, %j {axis = 1 : i64} : tensor<2x4x3xf64>, tensor<i64> -> tensor<2x3xf64>
  %s = dtg.sin %y : tensor<2x3x3xf64>
  %t = dtg.exp %z : tensor<2x3xf64>
  return %s, %t : tensor<2x3x3xf64>, tensor<2x3xf64>
}

// Tests gather_elements (torch.gather) with negative and repeated indices,
// and indices smaller than data outside the axis.
// expected-remark @+1 {{gradients match}}
func.func @gather_elements(%x: tensor<3x4xf64>, %i: tensor<2x3xi64> {dtc.test_value = dense<[[0, 2, -1], [2, 2, -3]]> : tensor<2x3xi64>}) -> tensor<2x3xf64> {
  %y = dtg.gather_elements %x, %i {axis = 0 : i64} : tensor<3x4xf64>, tensor<2x3xi64> -> tensor<2x3xf64>
  %s = dtg.sin %y : tensor<2x3xf64>
  return %s : tensor<2x3xf64>
}

// Tests scatter_elements in add mode: data passes its gradient through, each
// update (repeated targets included) gets the gradient at its target.
// expected-remark @+1 {{gradients match}}
func.func @scatter_add(%x: tensor<3x4xf64>, %i: tensor<3x2xi64> {dtc.test_value = dense<[[1, 1], [-1, 0], [3, 2]]> : tensor<3x2xi64>}, %u: tensor<3x2xf64>) -> tensor<3x4xf64> {
  %y = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : tensor<3x4xf64>, tensor<3x2xi64>, tensor<3x2xf64> -> tensor<3x4xf64>
  %s = dtg.sin %y : tensor<3x4xf64>
  return %s : tensor<3x4xf64>
}

// Tests scatter_elements in assign mode: overwritten data gets no gradient,
// and of two updates aimed at one element only the last written one does.
// expected-remark @+1 {{gradients match}}
func.func @scatter_assign(%x: tensor<3x4xf64>, %i: tensor<3x2xi64> {dtc.test_value = dense<[[1, 1], [-1, 0], [3, -2]]> : tensor<3x2xi64>}, %u: tensor<3x2xf64>) -> tensor<3x4xf64> {
  %y = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<3x4xf64>, tensor<3x2xi64>, tensor<3x2xf64> -> tensor<3x4xf64>
  %s = dtg.sin %y : tensor<3x4xf64>
  return %s : tensor<3x4xf64>
}

// Tests broadcast over a new leading axis and a size-1 axis.
// expected-remark @+1 {{gradients match}}
func.func @broadcast(%x: tensor<3x1xf64>) -> tensor<2x3x4xf64> {
  %y = dtg.broadcast %x : tensor<3x1xf64> -> tensor<2x3x4xf64>
  %s = dtg.sin %y : tensor<2x3x4xf64>
  return %s : tensor<2x3x4xf64>
}

// Tests tile with repeats in several dimensions (one of them 1).
// expected-remark @+1 {{gradients match}}
func.func @tile(%x: tensor<2x3x2xf64>) -> tensor<6x3x4xf64> {
  %y = dtg.tile %x {repeats = array<i64: 3, 1, 2>} : tensor<2x3x2xf64> -> tensor<6x3x4xf64>
  %s = dtg.sin %y : tensor<6x3x4xf64>
  return %s : tensor<6x3x4xf64>
}

// Tests tile with a zero repeat (an empty result; no gradient).
// expected-remark @+1 {{gradients match}}
func.func @tile_zero(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %y = dtg.tile %x {repeats = array<i64: 0, 1>} : tensor<2x3xf64> -> tensor<0x3xf64>
  %c = dtg.concat %y, %x {axis = 0 : i64} : tensor<0x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  %s = dtg.sin %c : tensor<2x3xf64>
  return %s : tensor<2x3xf64>
}

// Tests constant padding, with a crop (negative amount) in one place.
// expected-remark @+1 {{gradients match}}
func.func @pad_constant(%x: tensor<3x4xf64>) -> tensor<6x4xf64> {
  %y = dtg.pad %x {low = array<i64: 1, -1>, high = array<i64: 2, 1>, mode = "constant", value = 0.5 : f64} : tensor<3x4xf64> -> tensor<6x4xf64>
  %s = dtg.sin %y : tensor<6x4xf64>
  return %s : tensor<6x4xf64>
}

// Tests reflect padding (mirrored elements collect several gradients).
// expected-remark @+1 {{gradients match}}
func.func @pad_reflect(%x: tensor<3x4xf64>) -> tensor<7x5xf64> {
  %y = dtg.pad %x {low = array<i64: 2, 0>, high = array<i64: 2, 1>, mode = "reflect", value = 0.0 : f64} : tensor<3x4xf64> -> tensor<7x5xf64>
  %s = dtg.sin %y : tensor<7x5xf64>
  return %s : tensor<7x5xf64>
}

// Tests edge padding, with a crop on one side of one dimension.
// expected-remark @+1 {{gradients match}}
func.func @pad_edge(%x: tensor<3x4xf64>) -> tensor<6x5xf64> {
  %y = dtg.pad %x {low = array<i64: 1, -1>, high = array<i64: 2, 2>, mode = "edge", value = 0.0 : f64} : tensor<3x4xf64> -> tensor<6x5xf64>
  %s = dtg.sin %y : tensor<6x5xf64>
  return %s : tensor<6x5xf64>
}

// Tests trilu, upper and lower with diagonal offsets, on a batch.
// expected-remark @+1 {{gradients match}}
func.func @trilu(%x: tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xf64>) {
  %u = dtg.trilu %x {upper = true, k = 1 : i64} : tensor<2x3x4xf64>
  %l = dtg.trilu %x {upper = false, k = -1 : i64} : tensor<2x3x4xf64>
  %s = dtg.exp %u : tensor<2x3x4xf64>
  %t = dtg.sin %l : tensor<2x3x4xf64>
  return %s, %t : tensor<2x3x4xf64>, tensor<2x3x4xf64>
}

// Tests that a constant operand gets no gradient and does not stop the
// others'.
// expected-remark @+1 {{gradients match}}
func.func @constant(%x: tensor<2xf64>) -> tensor<4xf64> {
  %c = dtg.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %y = dtg.concat %c, %x {axis = 0 : i64} : tensor<2xf64>, tensor<2xf64> -> tensor<4xf64>
  %s = dtg.sin %y : tensor<4xf64>
  return %s : tensor<4xf64>
}

// Tests that a constant pad whose amounts cannot be negated into a crop is an
// error at the pad naming why, not a crash.
func.func @pad_overflow(%x: tensor<2xf64>) -> tensor<3xf64> {
  // expected-error @+1 {{'dtg.pad' op has no gradient: padding amounts -9223372036854775807 and 9223372036854775806 of dimension 0 overflow when negated}}
  %y = dtg.pad %x {low = array<i64: -9223372036854775807>, high = array<i64: 9223372036854775806>, mode = "constant", value = 0.0 : f64} : tensor<2xf64> -> tensor<1xf64>
  %c = dtg.concat %y, %x {axis = 0 : i64} : tensor<1xf64>, tensor<2xf64> -> tensor<3xf64>
  %s = dtg.sin %c : tensor<3xf64>
  return %s : tensor<3xf64>
}
