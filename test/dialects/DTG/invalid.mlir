// RUN: dtc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// ODS type and attribute constraints
//===----------------------------------------------------------------------===//

// Tests that dtg ops reject tensors without a static shape.
func.func @dynamic_shape(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %0 = dtg.neg %x : tensor<?xf32>
  return
}

// -----

// Tests that the float-only unary ops reject integer tensors.
func.func @float_only(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = dtg.exp %x : tensor<4xi32>
  return
}

// -----

// Tests that the logical (bitwise) ops take only integers.
func.func @integers_only(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of signless integer or unsigned integer values, but got 'tensor<4xf32>'}}
  %0 = dtg.and %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that comparisons produce booleans.
func.func @compare_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = dtg.less %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that gather indices are i32 or i64.
func.func @index_type(%x: tensor<4xf32>, %i: tensor<2xi16>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi16>'}}
  %0 = dtg.gather %x, %i {axis = 0 : i64} : tensor<4xf32>, tensor<2xi16> -> tensor<2xf32>
  return
}

// -----

// Tests that the dropout key is an i64 tensor.
func.func @key_type(%x: tensor<4xf32>, %k: tensor<2xi32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0:2 = dtg.dropout %x, %k {ratio = 0.1 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<2xi32> -> tensor<4xf32>, tensor<4xi1>
  return
}

// -----

// Tests that argmax produces i64 indices.
func.func @argmax_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = dtg.argmax %x {axis = 0 : i64, keepdims = false, select_last_index = false} : tensor<4xf32> -> tensor<i32>
  return
}

// -----

// Tests that unary ops keep the operand's type.
func.func @same_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "dtg.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Tests that a bool attribute must be a bool.
func.func @bool_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'approximate' failed to satisfy constraint: bool attribute}}
  %0 = dtg.gelu %x {approximate = 1 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that an f64 attribute must be an f64.
func.func @f64_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = dtg.leaky_relu %x {alpha = 0.1 : f32} : tensor<4xf32>
  return
}

// -----

// Tests that an i64 attribute must be an i64.
func.func @i64_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = dtg.softmax %x {axis = 0 : i32} : tensor<4xf32>
  return
}

// -----

// Tests that an i64 array attribute must be a dense i64 array.
func.func @array_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'axes' failed to satisfy constraint: i64 dense array attribute}}
  %0 = dtg.reduce_sum %x {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
  return
}

// -----

// Tests that a string attribute must be a string.
func.func @string_attr(%x: tensor<4x3xf32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{attribute 'reduction' failed to satisfy constraint: string attribute}}
  %0 = dtg.nll_loss %x, %t {reduction = 1 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return
}

// -----

// Tests that required attributes must be present.
func.func @missing_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires attribute 'axis'}}
  %0 = dtg.softmax %x : tensor<4xf32>
  return
}

// -----

// Tests that a constant's value must be an elements attribute (in the custom
// form the parser already refuses it).
func.func @constant_value() {
  // expected-error @+1 {{attribute 'value' failed to satisfy constraint: constant vector/tensor attribute}}
  %0 = "dtg.constant"() {value = 1.0 : f32} : () -> tensor<f32>
  return
}

//===----------------------------------------------------------------------===//
// Type inference: results that differ from the inferred ones
//===----------------------------------------------------------------------===//

// -----

// Tests that a declared result type that differs from the inferred one is an
// error.
func.func @incompatible_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'dtg.add' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that a declared element type that differs from the inferred one is an
// error.
func.func @incompatible_element(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dtg.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf16>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

// Tests that binary operands must broadcast.
func.func @no_broadcast(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{shapes [4] and [3] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.add %a, %b : tensor<4xf32>, tensor<3xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that binary operands must share an element type.
func.func @mixed_elements(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{operands have different element types}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

// Tests that comparison operands must broadcast.
func.func @compare_broadcast(%a: tensor<2x4xi64>, %b: tensor<3x1xi64>) {
  // expected-error @+2 {{shapes [2,4] and [3,1] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.equal %a, %b : tensor<2x4xi64>, tensor<3x1xi64> -> tensor<2x4xi1>
  return
}

// -----

// Tests that the two branches of a where share an element type.
func.func @where_elements(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{operands have different element types}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

// Tests that the condition of a where must broadcast with the branches.
func.func @where_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{shapes [3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.where %c, %a, %b : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that is_nan keeps the operand's shape. (The Elementwise trait checks
// shapes before the op's own verifier can.)
func.func @is_nan_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dtg.is_nan' op all non-scalar operands/results must have the same shape and base type}}
  %0 = dtg.is_nan %x : tensor<4xf32> -> tensor<3xi1>
  return
}

// -----

// Tests that is_inf keeps the operand's shape.
func.func @is_inf_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dtg.is_inf' op all non-scalar operands/results must have the same shape and base type}}
  %0 = dtg.is_inf %x {detect_negative = true, detect_positive = true} : tensor<4xf32> -> tensor<4x1xi1>
  return
}

// -----

// Tests that cast keeps the operand's shape.
func.func @cast_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'dtg.cast' op all non-scalar operands/results must have the same shape and base type}}
  %0 = dtg.cast %x : tensor<2x3xf32> -> tensor<3x2xi32>
  return
}

//===----------------------------------------------------------------------===//
// Constants and shape
//===----------------------------------------------------------------------===//

// -----

// Tests that a constant's value must be a tensor (a vector is not).
func.func @constant_vector() {
  // expected-error @+1 {{'dtg.constant' op value must be a statically shaped tensor}}
  %0 = "dtg.constant"() <{value = dense<1.0> : vector<4xf32>}> : () -> tensor<4xf32>
  return
}

// -----

// Tests that reshape keeps the element type.
func.func @reshape_element(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'dtg.reshape' op element type changes from 'f32' to 'f16'}}
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

// Tests that reshape keeps the element count.
func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'dtg.reshape' op cannot reshape [2,3] (6 elements) to [7] (7 elements)}}
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

// Tests that perm has one entry per dimension.
func.func @perm_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm has 3 entries for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that perm must be a permutation.
func.func @perm_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm is not a permutation of [0, rank)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.transpose %x {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// Tests that concat needs an operand (only the generic form can say none).
func.func @concat_empty() {
  // expected-error @+2 {{needs at least one operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "dtg.concat"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  return
}

// -----

// Tests that the concat axis must index a dimension.
func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.concat %a, %a {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

// Tests that concat operands share a rank.
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{operands differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return
}

// -----

// Tests that concat operands agree outside the axis.
func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{operand shapes [2,3] and [2,4] differ outside axis 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that slice needs one start, limit and step per dimension.
func.func @slice_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{starts, limits and steps need one entry per dimension (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.slice %x {starts = array<i64: 0>, limits = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that no slice step is zero.
func.func @slice_step(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{step of dimension 1 is 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2, 3>, steps = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that every index a slice takes lies in the operand.
func.func @slice_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{slice of dimension 1 leaves the operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 2, 5>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that a slice whose bounds are far apart (their distance overflows
// int64) is still checked exactly: the second index leaves the operand.
func.func @slice_extreme(%x: tensor<10xf32>) {
  // expected-error @+2 {{slice of dimension 0 leaves the operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.slice %x {starts = array<i64: 5>, limits = array<i64: -9223372036854775808>, steps = array<i64: -9223372036854775808>} : tensor<10xf32> -> tensor<1xf32>
  return
}

// -----

// Tests that the gather axis must index a dimension of data.
func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{axis -1 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gather %x, %i {axis = -1 : i64} : tensor<4x8xf32>, tensor<2xi64> -> tensor<4x2xf32>
  return
}

// -----

// Tests that gather_elements data and indices share a rank.
func.func @gather_elements_rank(%x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{data and indices differ in rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gather_elements %x, %i {axis = 0 : i64} : tensor<4x8xf32>, tensor<2xi64> -> tensor<2xf32>
  return
}

// -----

// Tests that the gather_elements axis must index a dimension.
func.func @gather_elements_axis(%x: tensor<4x8xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gather_elements %x, %i {axis = 2 : i64} : tensor<4x8xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  return
}

// -----

// Tests that scatter_elements indices and updates have one shape.
func.func @scatter_shape(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x1xf32>) {
  // expected-error @+2 {{indices and updates must have one shape of data's rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x1xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that scatter_elements names a known reduction.
func.func @scatter_reduction(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>) {
  // expected-error @+1 {{reduction must be one of none, add, mul, max, min, not 'sub'}}
  %0 = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "sub"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that scatter_elements updates have the data's element type.
func.func @scatter_element(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf16>) {
  // expected-error @+2 {{updates and data differ in element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf16> -> tensor<2x3xf32>
  return
}

// -----

// Tests that the scatter_elements axis must index a dimension.
func.func @scatter_axis(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>) {
  // expected-error @+2 {{axis 5 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.scatter_elements %x, %i, %u {axis = 5 : i64, reduction = "add"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that broadcast keeps the element type.
func.func @broadcast_element(%x: tensor<3xf32>) {
  // expected-error @+1 {{'dtg.broadcast' op element type changes}}
  %0 = dtg.broadcast %x : tensor<3xf32> -> tensor<2x3xi32>
  return
}

// -----

// Tests that broadcast follows NumPy rules in one direction.
func.func @broadcast_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'dtg.broadcast' op cannot broadcast [2,3] to [3]}}
  %0 = dtg.broadcast %x : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that tile needs one repeat per dimension.
func.func @tile_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{needs one repeat per dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.tile %x {repeats = array<i64: 2>} : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that tile repeats are non-negative.
func.func @tile_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{repeats must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.tile %x {repeats = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that repeats whose product with the size overflows are refused.
func.func @tile_overflow(%x: tensor<2xf32>) {
  // expected-error @+2 {{repeats overflow the result's size}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.tile %x {repeats = array<i64: 4611686018427387904>} : tensor<2xf32> -> tensor<2xf32>
  return
}

// -----

// Tests that pad needs one low and one high amount per dimension.
func.func @pad_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{needs one low and one high pad per dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 0, 1>, high = array<i64: 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
  return
}

// -----

// Tests that pad amounts whose sum with the size overflows are refused.
func.func @pad_overflow(%x: tensor<10xf32>) {
  // expected-error @+2 {{padding of dimension 0 overflows its size}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 9223372036854775807>, high = array<i64: 9223372036854775807>, mode = "constant", value = 0.0 : f64} : tensor<10xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that the pad mode is one of constant, reflect, edge.
func.func @pad_mode(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{unknown pad mode 'wrap'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "wrap", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
  return
}

// -----

// Tests that cropping may not make a dimension negative.
func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{padding makes dimension 1 negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 0, -2>, high = array<i64: 0, -2>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that edge padding needs an edge to repeat.
func.func @pad_empty(%x: tensor<0x3xf32>) {
  // expected-error @+2 {{cannot edge-pad an empty dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 0>, mode = "edge", value = 0.0 : f64} : tensor<0x3xf32> -> tensor<1x3xf32>
  return
}

// -----

// Tests that reflect padding is smaller than the dimension.
func.func @pad_reflect(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{reflect padding of dimension 1 must be smaller than its size}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.pad %x {low = array<i64: 0, 3>, high = array<i64: 0, 0>, mode = "reflect", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

// Tests that trilu needs a matrix.
func.func @trilu_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dtg.trilu' op needs rank at least 2}}
  %0 = dtg.trilu %x {upper = true, k = 0 : i64} : tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reductions, scans and losses
//===----------------------------------------------------------------------===//

// -----

// Tests that reduction axes must index a dimension.
func.func @reduce_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{reduction axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.reduce_sum %x {axes = array<i64: 2>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that reduction axes are strictly increasing.
func.func @reduce_order(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{reduction axes must be strictly increasing}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.reduce_mean %x {axes = array<i64: 1, 0>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

// Tests that the argmax axis must index a dimension.
func.func @argmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.argmax %x {axis = 2 : i64, keepdims = false, select_last_index = false} : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

// Tests that the argmin axis must index a dimension.
func.func @argmin_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{axis -1 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.argmin %x {axis = -1 : i64, keepdims = false, select_last_index = false} : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

// Tests that the cumsum axis must index a dimension.
func.func @cumsum_axis(%x: tensor<5xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = dtg.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<5xf32>
  return
}

// -----

// Tests that nll_loss input has a class dimension.
func.func @nll_rank(%x: tensor<4xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{input needs rank at least 2 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.nll_loss %x, %t {reduction = "mean"} : tensor<4xf32>, tensor<4xi64> -> tensor<f32>
  return
}

// -----

// Tests that nll_loss target has the input's shape without the class axis.
func.func @nll_target(%x: tensor<4x10x3xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{target shape [4] does not match input [4,10,3] (expected [4,3])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.nll_loss %x, %t {reduction = "sum"} : tensor<4x10x3xf32>, tensor<4xi64> -> tensor<f32>
  return
}

// -----

// Tests that the nll_loss weight has one entry per class.
func.func @nll_weight(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<9xf32>) {
  // expected-error @+2 {{weight must be 1-D with one entry per class}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.nll_loss %x, %t, %w {reduction = "mean"} : tensor<4x10xf32>, tensor<4xi64>, tensor<9xf32> -> tensor<f32>
  return
}

// -----

// Tests that the nll_loss reduction is one of none, sum, mean.
func.func @nll_reduction(%x: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{unknown reduction 'max'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.nll_loss %x, %t {reduction = "max"} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

// -----

// Tests that matmul operands are at least matrices.
func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{operands need rank at least 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that matmul operands share an element type.
func.func @matmul_element(%a: tensor<2x8xf32>, %b: tensor<8x4xf16>) {
  // expected-error @+2 {{operands differ in element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.matmul %a, %b : tensor<2x8xf32>, tensor<8x4xf16> -> tensor<2x4xf32>
  return
}

// -----

// Tests that matmul contracting dimensions agree.
func.func @matmul_k(%a: tensor<2x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error @+2 {{contracting dimensions differ: [2,8] x [7,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.matmul %a, %b : tensor<2x8xf32>, tensor<7x4xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that matmul batch dimensions broadcast.
func.func @matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) {
  // expected-error @+2 {{batch dimensions do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.matmul %a, %b : tensor<3x2x8xf32>, tensor<5x8x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

// Tests that gemm A and B are matrices.
func.func @gemm_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{A and B must be matrices}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that gemm contracting dimensions agree after transposition.
func.func @gemm_k(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+2 {{contracting dimensions differ (8 vs 16)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that gemm C broadcasts to [M, N].
func.func @gemm_c(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<4xf32>) {
  // expected-error @+2 {{C does not broadcast to [4,16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = true} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<4xf32> -> tensor<4x16xf32>
  return
}

// -----

// Tests that an einsum equation must have an explicit output.
func.func @einsum_form(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{equation 'ij' is not of the form 'ab,bc->ac'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a {equation = "ij"} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that an einsum equation has one term per operand.
func.func @einsum_terms(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{equation has 2 terms for 1 operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a {equation = "ij,jk->ik"} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that an einsum term has one letter per dimension.
func.func @einsum_rank(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{term 'ijk' does not match rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a {equation = "ijk->ik"} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that the dimensions of one einsum letter agree.
func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{sizes of 'j' disagree}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a, %b {equation = "ij,jk->ik"} : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

// Tests that every einsum output letter appears in an input.
func.func @einsum_output(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{output letter 'k' is in no input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a {equation = "ij->ik"} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that an einsum output letter appears only once.
func.func @einsum_output_twice(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{output letter 'i' appears twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.einsum %a {equation = "ij->ii"} : tensor<2x2xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that conv input and weight share a rank.
func.func @conv_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{input and weight differ in rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that conv input has batch, channel and spatial dimensions (also when
// the weight has the same too-small rank).
func.func @conv_small_rank(%x: tensor<f32>, %w: tensor<f32>) {
  // expected-error @+2 {{input needs rank at least 3 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.conv %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>, group = 1 : i64} : tensor<f32>, tensor<f32> -> tensor<f32>
  return
}

// -----

// Tests that conv channels fit the group.
func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{channels do not fit: input [1,3,8,8], weight [4,3,3,3], group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that the conv bias has one entry per filter.
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias must be 1-D with one entry per filter}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that window attributes have one entry per spatial dimension.
func.func @window_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{window attributes need 2 entries (pads 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that strides are positive.
func.func @window_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 0, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that pads are non-negative.
func.func @window_pads(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{pads must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.avg_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, -1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that the window fits the padded input.
func.func @window_large(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{window is larger than the padded input in spatial dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool %x {kernel = array<i64: 2, 9>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x8x8xf32> -> tensor<1x3x7x1xf32>
  return
}

// -----

// Tests that window attributes whose sizes overflow int64 fit no window.
func.func @window_overflow(%x: tensor<1x1x10xf32>) {
  // expected-error @+2 {{window is larger than the padded input in spatial dimension 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool %x {kernel = array<i64: 1>, strides = array<i64: 1>, pads = array<i64: 9223372036854775807, 9223372036854775807>, dilations = array<i64: 1>, ceil_mode = true} : tensor<1x1x10xf32> -> tensor<1x1x7xf32>
  return
}

// -----

// Tests that pooling needs batch, channel and spatial dimensions.
func.func @pool_rank(%x: tensor<3x8xf32>) {
  // expected-error @+2 {{input needs rank at least 3 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool %x {kernel = array<i64>, strides = array<i64>, pads = array<i64>, dilations = array<i64>, ceil_mode = false} : tensor<3x8xf32> -> tensor<3x8xf32>
  return
}

// -----

// Tests that batch norm needs a channel dimension.
func.func @bn_rank(%x: tensor<3xf32>, %p: tensor<3xf32>) {
  // expected-error @+2 {{input needs rank at least 2 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.batch_norm_inference %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f64} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that batch norm statistics have one entry per channel.
func.func @bn_params(%x: tensor<2x3x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) {
  // expected-error @+2 {{scale, bias, mean and variance must be 1-D of size C = 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = dtg.batch_norm_training %x, %p, %p, %p, %q {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<3xf32>, tensor<4xf32>
  return
}

// -----

// Tests that the layer_norm axis must index a dimension.
func.func @ln_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

// Tests that the layer_norm scale broadcasts to the normalized shape.
func.func @ln_scale(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+2 {{scale does not broadcast to the normalized shape [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

// Tests that the layer_norm bias broadcasts to the normalized shape.
func.func @ln_bias(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{bias does not broadcast to the normalized shape [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<4xf32> -> tensor<2x8xf32>
  return
}

// -----

// Tests that the softmax axis must index a dimension.
func.func @softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = dtg.softmax %x {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

// Tests that the log_softmax axis must index a dimension.
func.func @log_softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = dtg.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  return
}

// -----

// Tests that the dropout ratio is in [0, 1).
func.func @dropout_ratio(%x: tensor<4xf32>, %k: tensor<2xi64>) {
  // expected-error @+2 {{ratio 1.000000 is outside [0, 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = dtg.dropout %x, %k {ratio = 1.0 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<2xi64> -> tensor<4xf32>, tensor<4xi1>
  return
}

// -----

// Tests that the dropout key holds two i64 words (seed, step) or three (and
// an element offset).
func.func @dropout_key(%x: tensor<4xf32>, %k: tensor<4xi64>) {
  // expected-error @+2 {{key must be a tensor<2xi64> or tensor<3xi64>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = dtg.dropout %x, %k {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<4xi64> -> tensor<4xf32>, tensor<4xi1>
  return
}

// -----

// Tests that a dropout of a block (block_of) takes the block's start in its
// key: seed, step, offset and one coordinate per dimension.
func.func @dropout_block_key(%x: tensor<2x4xf32>, %k: tensor<3xi64>) {
  // expected-error @+2 {{key must be a tensor<5xi64> with block_of (seed, step, offset, the block's start)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = dtg.dropout %x, %k {block_of = array<i64: 2, 8>, ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<3xi64> -> tensor<2x4xf32>, tensor<2x4xi1>
  return
}

// -----

// Tests that block_of, the whole tensor's shape, contains the block.
func.func @dropout_block_shape(%x: tensor<2x4xf32>, %k: tensor<5xi64>) {
  // expected-error @+2 {{block_of is smaller than the operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = dtg.dropout %x, %k {block_of = array<i64: 2, 2>, ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x4xf32>, tensor<5xi64> -> tensor<2x4xf32>, tensor<2x4xi1>
  return
}
