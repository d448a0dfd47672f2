// RUN: dtc-opt %s --dtc-build-train-step="loss=cross_entropy logits=y labels=t optimizer=sgd" --dtc-mixed-precision="precision=bf16" | FileCheck %s

// Tests that under bf16 a softmax's fp32 output, which the forward casts to
// bf16 for its product with the values, is kept for the backward only as
// that bf16 copy: the backward reads the copy widened to fp32 (a cast marked
// backward), never the fp32 output itself, so the fp32 output dies within
// the forward (Megatron-LM's 16-bit softmax output; Korthikanti et al.'s
// 2as^2b bytes a layer, not 6).

func.func @main(%w: tensor<3x4xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.3> : tensor<3x4xf32>},
                %v: tensor<4x4xf32> {dtg.name = "v", dtg.role = "parameter", dtg.initial = dense<0.1> : tensor<4x4xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2xi64> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x4xf32> {dtg.name = "y"}) {
  %s = dtg.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %p = dtg.softmax %s {axis = 1 : i64} : tensor<2x4xf32>
  %y = dtg.matmul %p, %v : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func private @micro_step(
// CHECK: %[[P:[^ ]+]] = dtg.softmax %{{.+}} {axis = 1 : i64} : tensor<2x4xf32>
// CHECK-NEXT: %[[PB:[^ ]+]] = dtg.cast %[[P]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NOT: %[[P]]{{[ ,)]}}
// CHECK: %{{.+}} = dtg.cast %[[PB]] {dtg.backward} : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-NOT: %[[P]]{{[ ,)]}}
// CHECK: return
