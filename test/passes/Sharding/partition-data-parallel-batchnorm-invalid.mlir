// RUN: dtc-opt %s -verify-diagnostics --dtc-build-train-step="loss=mse logits=y labels=t" --dtc-partition-data-parallel="dp=2"

// Tests that a batch norm left unsynchronized in @micro_step (the step was
// built without sync-batch-norm-dp) is refused at the op, unless
// local-batchnorm asks for per-rank statistics.

func.func @main(%s: tensor<2xf32> {dtg.name = "bn.weight", dtg.role = "parameter", dtg.initial = dense<1.0> : tensor<2xf32>},
                %b: tensor<2xf32> {dtg.name = "bn.bias", dtg.role = "parameter", dtg.initial = dense<0.0> : tensor<2xf32>},
                %rm: tensor<2xf32> {dtg.name = "bn.running_mean", dtg.role = "state", dtg.initial = dense<0.0> : tensor<2xf32>},
                %rv: tensor<2xf32> {dtg.name = "bn.running_var", dtg.role = "state", dtg.initial = dense<1.0> : tensor<2xf32>},
                %x: tensor<2x2xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2x2xf32> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x2xf32> {dtg.name = "y"}) {
  // expected-error @+1 {{BatchNormalization in training mode takes statistics over the whole batch, which dp=2 splits across ranks, and the training step does not synchronize them (build it with sync-batch-norm-dp=N, as dtc compile does); or pass --local-batchnorm for per-rank statistics}}
  %n, %nrm, %nrv = dtg.batch_norm_training %x, %s, %b, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>
  return %n : tensor<2x2xf32>
}
