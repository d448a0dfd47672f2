// RUN: dtc-opt %s --split-input-file --dtc-build-train-step="loss=cross_entropy logits=y labels=t optimizer=adamw" --dtc-mixed-precision="precision=bf16" | FileCheck %s
// RUN: dtc-opt %s --split-input-file --dtc-build-train-step="loss=cross_entropy logits=y labels=t optimizer=sgd momentum=0.9" --dtc-mixed-precision="precision=fp16 loss-scale-init=1024 loss-scale-window=3" | FileCheck %s --check-prefix=FP16
// RUN: dtc-opt %s --split-input-file --dtc-build-train-step="loss=cross_entropy logits=y labels=t" --dtc-mixed-precision="precision=fp32" | FileCheck %s --check-prefix=FP32

// Tests that under bf16 the matmul and gelu (and their gradients) take bf16
// operands, while layer_norm, log_softmax and the loss stay in fp32 with casts
// between; that the parameters become bf16 arguments of every step (initial
// values rounded) with fp32 master copies as optimizer state that the
// optimizer updates, the new parameters being the masters cast to bf16; and
// that gradients come back from @micro_step in fp32. Under fp16 the step
// also carries the loss scale (the backward seeded with scale / count, the
// gradients unscaled in fp32 before the norm), skips the update on a
// non-finite norm (masters and momentum kept; the optimizer's own step count
// decides SGD's first step), updates the scale and logs loss_scale and
// skipped; fp32 only marks the module.

func.func @main(%w: tensor<3x4xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.3> : tensor<3x4xf32>},
                %g: tensor<4xf32> {dtg.name = "g", dtg.role = "parameter", dtg.initial = dense<1.0> : tensor<4xf32>},
                %b: tensor<4xf32> {dtg.name = "b", dtg.role = "parameter", dtg.initial = dense<0.0> : tensor<4xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2xi64> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x4xf32> {dtg.name = "y"}) {
  %h = dtg.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %n = dtg.layer_norm %h, %g, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %y = dtg.gelu %n {approximate = false} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK: module attributes {{{.*}}dtc.precision = "bf16"
// CHECK-LABEL: func.func private @micro_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x4xbf16> {dtg.initial = dense<3.007810e-01> : tensor<3x4xbf16>, dtg.name = "w"
// CHECK-SAME: %[[G:[^:]+]]: tensor<4xbf16> {{.*}}dtg.name = "g"
// CHECK-SAME: %[[B:[^:]+]]: tensor<4xbf16> {{.*}}dtg.name = "b"
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-SAME: -> (tensor<f32> {dtg.role = "loss_sum"}, tensor<f32> {dtg.role = "loss_count"}, tensor<3x4xf32> {dtg.role = "gradient"}, tensor<4xf32> {dtg.role = "gradient"}, tensor<4xf32> {dtg.role = "gradient"})
// CHECK-DAG: %[[BF:.+]] = dtg.cast %[[B]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG: %[[GF:.+]] = dtg.cast %[[G]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG: %[[XB:.+]] = dtg.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: %[[H:.+]] = dtg.matmul %[[XB]], %[[W]] : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xbf16>
// CHECK: %[[HF:.+]] = dtg.cast %[[H]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[N:.+]] = dtg.layer_norm %[[HF]], %[[GF]], %[[BF]] {{.*}} -> tensor<2x4xf32>
// CHECK: %[[NB:.+]] = dtg.cast %[[N]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK: %[[Y:.+]] = dtg.gelu %[[NB]] {approximate = false} : tensor<2x4xbf16>
// CHECK: %[[YF:.+]] = dtg.cast %[[Y]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[LOGP:.+]] = dtg.log_softmax %[[YF]] {axis = 1 : i64} : tensor<2x4xf32>
// CHECK: %[[SUM:.+]] = dtg.nll_loss %[[LOGP]], {{.*}}reduction = "sum"{{.*}} -> tensor<f32>
// CHECK: dtg.exp %[[LOGP]] {dtg.backward} : tensor<2x4xf32>
// GELU's derivative and its product with the incoming gradient in f32,
// rounded to bf16 once.
// CHECK: dtg.cast %[[NB]] {dtg.backward} : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: dtg.erf {{.*}}{dtg.backward} : tensor<2x4xf32>
// CHECK: dtg.cast {{.*}}{dtg.backward} : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK: dtg.rsqrt {{.*}}{dtg.backward} : tensor<2x1xf32>
// CHECK: %[[GW:.+]] = dtg.matmul {{.*}}{dtg.backward} : tensor<3x2xbf16>, tensor<2x4xbf16> -> tensor<3x4xbf16>
// CHECK: %[[GWF:.+]] = dtg.cast %[[GW]] {dtg.backward} : tensor<3x4xbf16> -> tensor<3x4xf32>
// CHECK: return %[[SUM]], %{{.+}}, %[[GWF]], %{{.+}}, %{{.+}} : tensor<f32>, tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[TW:[^:]+]]: tensor<3x4xbf16> {dtg.initial = dense<3.007810e-01> : tensor<3x4xbf16>, dtg.name = "w", dtg.role = "parameter", dtg.trainable}
// CHECK-SAME: %[[M:[^:]+]]: tensor<3x4xf32> {dtg.name = "w.exp_avg", dtg.role = "optimizer_state"}
// CHECK-SAME: %[[V:[^:]+]]: tensor<3x4xf32> {dtg.name = "w.exp_avg_sq", dtg.role = "optimizer_state"}
// CHECK-SAME: %[[MW:[^:]+]]: tensor<3x4xf32> {dtg.initial = dense<3.000000e-01> : tensor<3x4xf32>, dtg.name = "w.master", dtg.role = "optimizer_state"}
// CHECK-SAME: tensor<4xf32> {dtg.initial = dense<1.000000e+00> : tensor<4xf32>, dtg.name = "g.master", dtg.role = "optimizer_state"}
// CHECK-SAME: tensor<4xf32> {dtg.initial = dense<0.000000e+00> : tensor<4xf32>, dtg.name = "b.master", dtg.role = "optimizer_state"}
// CHECK-SAME: -> (tensor<3x4xbf16> {dtg.name = "w", dtg.role = "parameter"}, tensor<4xbf16> {dtg.name = "g", dtg.role = "parameter"}, tensor<4xbf16> {dtg.name = "b", dtg.role = "parameter"},
// CHECK-SAME: tensor<3x4xf32> {dtg.name = "w.master", dtg.role = "optimizer_state"}
// CHECK: %[[R:.+]]:5 = call @micro_step(%[[TW]],
// CHECK: %[[NEW:.+]], %[[NEWM:.+]], %[[NEWV:.+]] = dtg.adamw_update %[[MW]], %{{.+}}, %[[M]], %[[V]], {{.*}} : tensor<3x4xf32>
// CHECK: %[[NEWB:.+]] = dtg.cast %[[NEW]] : tensor<3x4xf32> -> tensor<3x4xbf16>
// CHECK: return %[[NEWB]], %{{.+}}, %{{.+}}, %[[NEWM]], %[[NEWV]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NEW]],

// CHECK-LABEL: func.func private @eval_micro_step(
// CHECK-SAME: tensor<3x4xbf16>
// CHECK: dtg.matmul {{.*}} : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xbf16>
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: tensor<3x4xbf16> {{.*}}dtg.name = "w"
// CHECK-SAME: dtg.name = "w.master", dtg.role = "optimizer_state"

// FP16: module attributes {{{.*}}dtc.precision = "fp16"
// FP16-LABEL: func.func private @micro_step(
// FP16-SAME: %[[W:[^:]+]]: tensor<3x4xf16>
// FP16-SAME: %[[SCALE:[^:]+]]: tensor<f32> {dtg.name = "loss_scale", dtg.role = "loss_scale"})
// FP16: %[[COUNT:.+]] = dtg.reduce_sum
// FP16: %[[POSITIVE:.+]] = dtg.greater %[[COUNT]], %{{.+}} {dtg.backward}
// FP16: %[[DENOM:.+]] = dtg.where %[[POSITIVE]], %[[COUNT]], %{{.+}} {dtg.backward}
// FP16: %[[SEED:.+]] = dtg.div %[[SCALE]], %[[DENOM]] {dtg.backward}
// FP16: %[[INV:.+]] = dtg.div %[[DENOM]], %[[SCALE]] {dtg.backward}
// FP16: dtg.mul %{{.+}}, %[[SEED]] {dtg.backward}
// FP16: %[[GW:.+]] = dtg.matmul {{.*}}{dtg.backward} : tensor<3x2xf16>, tensor<2x4xf16> -> tensor<3x4xf16>
// FP16: %[[GWF:.+]] = dtg.cast %[[GW]] {dtg.backward} : tensor<3x4xf16> -> tensor<3x4xf32>
// FP16: %[[UNSCALED:.+]] = dtg.mul %[[GWF]], %[[INV]] {dtg.backward}
// FP16: return %{{.+}}, %{{.+}}, %[[UNSCALED]],

// FP16-LABEL: func.func @train_step(
// FP16-SAME: %[[TW:[^:]+]]: tensor<3x4xf16> {{.*}}dtg.name = "w", dtg.role = "parameter", dtg.trainable}
// FP16-SAME: %[[BUF:[^:]+]]: tensor<3x4xf32> {dtg.name = "w.momentum_buffer", dtg.role = "optimizer_state"}
// FP16-SAME: %[[MW:[^:]+]]: tensor<3x4xf32> {{[^}]*}}dtg.name = "w.master", dtg.role = "optimizer_state"}
// FP16-SAME: %[[S:[^:]+]]: tensor<f32> {dtg.name = "loss_scale", dtg.role = "optimizer_state"}
// FP16-SAME: %[[GOOD:[^:]+]]: tensor<i64> {dtg.name = "loss_scale_good_steps", dtg.role = "optimizer_state"}
// FP16-SAME: %[[OPT:[^:]+]]: tensor<i64> {dtg.name = "optimizer_steps", dtg.role = "optimizer_state"}
// FP16-SAME: %[[INIT:[^:]+]]: tensor<f64> {dtg.default = 1.024000e+03 : f64, dtg.name = "loss_scale_init", dtg.role = "hyper"}
// FP16-SAME: %[[WINDOW:[^:]+]]: tensor<i64> {dtg.default = 3 : i64, dtg.name = "loss_scale_window", dtg.role = "hyper"}
// FP16-SAME: %[[STEP:[^:]+]]: tensor<i64> {dtg.name = "step", dtg.role = "step"})
// FP16-SAME: tensor<f32> {dtg.name = "loss_scale", dtg.role = "optimizer_state"}, tensor<i64> {dtg.name = "loss_scale_good_steps", dtg.role = "optimizer_state"}, tensor<i64> {dtg.name = "optimizer_steps", dtg.role = "optimizer_state"}
// FP16-SAME: tensor<f64> {dtg.name = "grad_norm", dtg.role = "metric"}, tensor<f32> {dtg.name = "loss_scale", dtg.role = "metric"}, tensor<i64> {dtg.name = "skipped", dtg.role = "metric"})
// FP16: %[[FIRST:.+]] = dtg.equal %[[STEP]]
// FP16: %[[LARGEST:.+]] = dtg.constant dense<1.70141183E+38> : tensor<f32>
// FP16: %[[INITF:.+]] = dtg.cast %[[INIT]] : tensor<f64> -> tensor<f32>
// FP16: %[[CLAMPED:.+]] = dtg.min %[[INITF]], %[[LARGEST]]
// FP16: %[[CUR:.+]] = dtg.where %[[FIRST]], %[[CLAMPED]], %[[S]]
// FP16: %[[COUNT:.+]] = dtg.where %[[FIRST]], %{{.+}}, %[[OPT]]
// FP16: %[[FIRSTUPDATE:.+]] = dtg.equal %[[COUNT]]
// FP16: call @micro_step(%[[TW]], {{.*}}, %[[CUR]])
// FP16: %[[NORM:.+]] = dtg.sqrt
// FP16: %[[NEW:.+]], %[[NEWBUF:.+]] = dtg.sgd_update %[[MW]], %{{.+}}, %[[BUF]], {{.*}}, %[[FIRSTUPDATE]] : tensor<3x4xf32>
// FP16: %[[NAN:.+]] = dtg.is_nan %[[NORM]]
// FP16: %[[INF:.+]] = dtg.is_inf %[[NORM]]
// FP16: %[[BAD:.+]] = dtg.or %[[NAN]], %[[INF]]
// FP16: %[[KEPT:.+]] = dtg.where %[[BAD]], %[[MW]], %[[NEW]]
// FP16: %[[NEWW:.+]] = dtg.cast %[[KEPT]] : tensor<3x4xf32> -> tensor<3x4xf16>
// FP16: %[[KEPTBUF:.+]] = dtg.where %[[BAD]], %[[BUF]], %[[NEWBUF]]
// FP16: %[[GROW:.+]] = dtg.greater_equal %{{.+}}, %[[WINDOW]]
// FP16: %[[HALF:.+]] = dtg.mul %[[CUR]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// FP16: %[[DOUBLED:.+]] = dtg.mul %[[CUR]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// FP16: %[[TWICE:.+]] = dtg.min %[[DOUBLED]], %[[LARGEST]]
// FP16: %[[GROWN:.+]] = dtg.where %{{.+}}, %[[TWICE]], %[[CUR]]
// FP16: %[[NEWSCALE:.+]] = dtg.where %[[BAD]], %[[HALF]], %[[GROWN]]
// FP16: %[[SKIPPED:.+]] = dtg.cast %[[BAD]] : tensor<i1> -> tensor<i64>
// FP16: return %[[NEWW]], {{.*}}%[[NEWSCALE]], {{.*}}%[[NORM]], %[[CUR]], %[[SKIPPED]] :

// FP32: module attributes {{{.*}}dtc.precision = "fp32"
// FP32-NOT: f16
// FP32-NOT: master
// FP32-LABEL: func.func @train_step(
// FP32-SAME: tensor<3x4xf32> {dtg.initial = dense<3.000000e-01> : tensor<3x4xf32>, dtg.name = "w", dtg.role = "parameter", dtg.trainable}
// FP32-NOT: f16
// FP32-NOT: master
