// RUN: dtc-opt %s --split-input-file --dtc-plan-memory | FileCheck %s

// Tests that a chain reuses memory: %b may not overlap %a (live together),
// and %c takes %a's place once %a is dead. Buffers are 64-byte aligned.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.add %{{.*}} {dtc.offsets = array<i64: -1>}
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = dtg.exp %a : tensor<16xf32>
  %c = dtg.exp %b : tensor<16xf32>
  %d = dtg.add %c, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %d : tensor<16xf32>
}

// -----

// Tests that a reshape aliases its operand (no buffer of its own) and keeps
// the operand's buffer alive while the alias is used (so the first mul may
// not reuse it: an op never writes over its own operands); constants take
// no arena space.
// CHECK-LABEL: func.func @alias
// CHECK-SAME: dtc.arena_bytes = 192 : i64
// CHECK: dtg.constant
// CHECK-NOT: dtc.offsets
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.reshape %{{.*}} {dtc.alias}
// CHECK: dtg.neg %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.mul %{{.*}} {dtc.offsets = array<i64: 128>}
func.func @alias(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %k = dtg.constant dense<2.0> : tensor<16xf32>
  %a = dtg.exp %x : tensor<4x4xf32>
  %r = dtg.reshape %a : tensor<4x4xf32> -> tensor<16xf32>
  %n = dtg.neg %r : tensor<16xf32>
  %m = dtg.mul %n, %r : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %o = dtg.mul %m, %k : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that a callee's arena sits above the caller's buffers and counts in
// the caller's total.
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: dtc.arena_bytes = 64 : i64
// CHECK-LABEL: func.func @caller
// CHECK-SAME: dtc.arena_bytes = 192 : i64
// CHECK: call @callee({{.*}}) {dtc.callee_base = 128 : i64, dtc.offsets = array<i64: 64>}
func.func private @callee(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = dtg.exp %a : tensor<16xf32>
  return %b : tensor<16xf32>
}
func.func @caller(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = func.call @callee(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %c = dtg.add %a, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %c : tensor<16xf32>
}
