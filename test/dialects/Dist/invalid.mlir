// RUN: dtc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #dist.mesh
//===----------------------------------------------------------------------===//

// Tests that a mesh needs an axis.
// expected-error @+1 {{mesh needs at least one axis}}
dist.mesh @mesh = <[]>

// -----

// Tests that mesh axes have names.
// expected-error @+1 {{mesh axis 1 has an empty name}}
dist.mesh @mesh = <["dp" = 2, "" = 2]>

// -----

// Tests that mesh axis names are unique.
// expected-error @+1 {{mesh axis "dp" is declared twice}}
dist.mesh @mesh = <["dp" = 2, "tp" = 2, "dp" = 4]>

// -----

// Tests that mesh axis sizes are positive.
// expected-error @+1 {{mesh axis "tp" has size 0; sizes must be positive}}
dist.mesh @mesh = <["dp" = 2, "tp" = 0]>

// -----

// Tests that a mesh's device count cannot overflow.
// expected-error @+1 {{mesh has more than 2147483647 devices}}
dist.mesh @mesh = <["a" = 65536, "b" = 65536, "c" = 4611686018427387904]>

//===----------------------------------------------------------------------===//
// #dist.sharding and sharding annotations
//===----------------------------------------------------------------------===//

// -----

// Tests that a sharding names each axis once across its dimensions.
func.func @axis_twice_in_dims(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{axis "tp" appears twice in the sharding}}
  %c = dist.sharding_constraint %x <@mesh, [{"tp"}, {"dp", "tp"}]> : tensor<8x8xf32>
  return
}

// -----

// Tests that a partial-sum axis cannot also split a dimension.
func.func @axis_twice_in_partial(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{axis "dp" appears twice in the sharding}}
  %c = dist.sharding_constraint %x <@mesh, [{"dp"}, {}], partial = {"dp"}> : tensor<8x8xf32>
  return
}

// -----

// Tests that a sharding refers to its mesh by a flat symbol.
func.func @mesh_not_symbol(%x: tensor<8xf32>) {
  // expected-error @+1 {{invalid kind of attribute specified}}
  %c = dist.sharding_constraint %x <"mesh", [[]]> : tensor<8xf32>
  return
}

// -----

// Tests that a sharding constraint's mesh must exist.
func.func @no_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.sharding_constraint' op @mesh does not name a dist.mesh}}
  %c = dist.sharding_constraint %x <@mesh, [{}]> : tensor<8xf32>
  return
}

// -----

// Tests that a reshard's mesh symbol must name a dist.mesh, not another op.
func.func @not_a_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.reshard' op @not_a_mesh does not name a dist.mesh}}
  %c = dist.reshard %x <@not_a_mesh, [{}]> : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a sharding's axes belong to its mesh.
func.func @unknown_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{sharding names axis "pp", which mesh @mesh does not have}}
  %c = dist.sharding_constraint %x <@mesh, [{"pp"}, {}]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that partial-sum axes belong to the mesh too.
func.func @unknown_partial_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{sharding names axis "ep", which mesh @mesh does not have}}
  %c = dist.reshard %x <@mesh, [{"dp"}, {}], partial = {"ep"}> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a sharding has one entry per tensor dimension.
func.func @rank_mismatch(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{sharding has 1 dimension entries for a tensor of rank 2}}
  %c = dist.sharding_constraint %x <@mesh, [{"dp"}]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that the mesh divides each sharded dimension evenly.
func.func @not_divisible(%x: tensor<8x10xf32>) {
  // expected-error @+1 {{dimension 1 of size 10 does not divide into 8 shards}}
  %c = dist.reshard %x <@mesh, [{}, {"dp", "tp"}]> : tensor<8x10xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that sharding annotations need statically shaped tensors.
func.func @dynamic_shape(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of any type values}}
  %c = dist.sharding_constraint %x <@mesh, [{}]> : tensor<?xf32>
  return
}

//===----------------------------------------------------------------------===//
// #dist.schedule and !dist.future
//===----------------------------------------------------------------------===//

// -----

// Tests that the schedule kind is one of the three.
// expected-error @+1 {{unknown schedule "pipedream"; expected "gpipe", "1f1b" or "interleaved"}}
func.func @unknown_schedule() attributes {dist.schedule = #dist.schedule<"pipedream", micro_batches = 4>} {
  return
}

// -----

// Tests that a schedule has at least one micro-batch.
// expected-error @+1 {{micro_batches must be positive, got 0}}
func.func @no_micro_batches() attributes {dist.schedule = #dist.schedule<"gpipe", micro_batches = 0>} {
  return
}

// -----

// Tests that the interleaved schedule has at least two virtual stages.
// expected-error @+1 {{the interleaved schedule needs virtual_stages >= 2, got 1}}
func.func @interleaved_one_chunk() attributes {dist.schedule = #dist.schedule<"interleaved", micro_batches = 4>} {
  return
}

// -----

// Tests that only the interleaved schedule has virtual stages.
// expected-error @+1 {{the 1f1b schedule takes virtual_stages = 1, not 2}}
func.func @virtual_stages_without_interleaving() attributes {dist.schedule = #dist.schedule<"1f1b", micro_batches = 4, virtual_stages = 2>} {
  return
}

// -----

// Tests that a future holds a statically shaped tensor.
// expected-error @+1 {{a future holds a statically shaped tensor, not 'i32'}}
func.func @future_of_scalar(%f: !dist.future<i32>) {
  return
}

//===----------------------------------------------------------------------===//
// dist.* attributes on other ops
//===----------------------------------------------------------------------===//

// -----

// Tests that unknown dist attributes on operations are rejected.
// expected-error @+1 {{unknown attribute 'dist.stages' of the dist dialect on an operation}}
func.func @unknown_op_attribute() attributes {dist.stages = 2 : i64} {
  return
}

// -----

// Tests that dist.schedule holds a #dist.schedule.
// expected-error @+1 {{'dist.schedule' must be a #dist.schedule, not "1f1b"}}
func.func @schedule_not_attribute() attributes {dist.schedule = "1f1b"} {
  return
}

// -----

// Tests that unknown dist attributes on arguments are rejected.
// expected-error @+1 {{unknown attribute 'dist.shard' of the dist dialect on argument 0}}
func.func @unknown_argument_attribute(%x: tensor<8xf32> {dist.shard = 1 : i64}) {
  return
}

// -----

// Tests that dist.sharding on an argument holds a #dist.sharding.
// expected-error @+1 {{'dist.sharding' of argument 1 must be a #dist.sharding, not "dp"}}
func.func @sharding_not_attribute(%x: tensor<8xf32>, %y: tensor<8xf32> {dist.sharding = "dp"}) {
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that an argument's sharding fits the argument's type.
// expected-error @+1 {{'dist.sharding' of argument 0: a sharding applies to a statically shaped tensor, not 'i64'}}
func.func @sharding_on_scalar(%x: i64 {dist.sharding = #dist.sharding<@mesh, []>}) {
  return
}

// -----

// Tests that an argument's sharding needs its mesh.
// expected-error @+1 {{'func.func' op @mesh does not name a dist.mesh}}
func.func @argument_without_mesh(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}]>}) {
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a result's sharding fits the result's shape.
// expected-error @+1 {{'dist.sharding' of result 0: dimension 0 of size 6 does not divide into 4 shards}}
func.func @result_sharding(%x: tensor<6xf32>) -> (tensor<6xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}]>}) {
  return %x : tensor<6xf32>
}

// -----

// Tests that unknown dist attributes on results are rejected.
// expected-error @+1 {{unknown attribute 'dist.layout' of the dist dialect on result 0}}
func.func @unknown_result_attribute(%x: tensor<8xf32>) -> (tensor<8xf32> {dist.layout = 0 : i64}) {
  return %x : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// -----

// Tests that a collective's mesh must exist.
func.func @collective_without_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op @mesh does not name a dist.mesh}}
  %y = dist.all_reduce sum %x on @mesh mesh_axes = ["dp"] : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a collective names at least one mesh axis.
func.func @no_axes(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op needs at least one mesh axis}}
  %y = dist.all_reduce sum %x on @mesh mesh_axes = [] : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a collective names each mesh axis once.
func.func @axis_twice(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op lists mesh axis "dp" twice}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["dp", "tp", "dp"] gather_axis = 0 : tensor<8xf32> -> tensor<128xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that a collective's axes belong to its mesh.
func.func @unknown_collective_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op mesh @mesh has no axis "pp"}}
  %y = dist.reduce_scatter sum %x on @mesh mesh_axes = ["pp"] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that a mean is only taken of floats.
func.func @integer_mean(%x: tensor<8xi32>) {
  // expected-error @+1 {{'dist.all_reduce' op kind mean needs a float element type, not 'i32'}}
  %y = dist.all_reduce mean %x on @mesh mesh_axes = ["dp"] : tensor<8xi32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that a reduce-scatter's mean is only taken of floats too.
func.func @integer_mean_scatter(%x: tensor<8xi64>) {
  // expected-error @+1 {{'dist.reduce_scatter_start' op kind mean needs a float element type, not 'i64'}}
  %y = dist.reduce_scatter_start mean %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8xi64> -> !dist.future<tensor<4xi64>>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that collectives operate on statically shaped tensors.
func.func @dynamic_collective(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of any type values}}
  %y = dist.all_reduce sum %x on @mesh mesh_axes = ["dp"] : tensor<?xf32>
  return
}

// -----

dist.mesh @mesh = <["tp" = 4]>

// Tests that an all-gather keeps the element type.
func.func @gather_element_type(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result element type 'f16' differs from the operand's 'f32'}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x16xf16>
  return
}

// -----

dist.mesh @mesh = <["tp" = 4]>

// Tests that an all-gather keeps the rank.
func.func @gather_rank(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result rank 1 differs from the operand rank 2}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<128xf32>
  return
}

// -----

dist.mesh @mesh = <["tp" = 4]>

// Tests that gather_axis is a dimension of the operand.
func.func @gather_axis_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op gather_axis 2 is out of range for rank 2}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 2 : tensor<8x4xf32> -> tensor<8x16xf32>
  return
}

// -----

dist.mesh @mesh = <["tp" = 4]>

// Tests that an all-gather multiplies the gathered dimension by the group size.
func.func @gather_shape(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result shape [8,12] differs from the expected [8,16]}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x12xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2, "tp" = 4]>

// Tests that an asynchronous all-gather checks the future's shape, over the
// product of its axes' sizes.
func.func @gather_start_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.all_gather_start' op result shape [16] differs from the expected [64]}}
  %f = dist.all_gather_start %x on @mesh mesh_axes = ["dp", "tp"] gather_axis = 0 : tensor<8xf32> -> !dist.future<tensor<16xf32>>
  return
}

// -----

dist.mesh @mesh = <["tp" = 4]>

// Tests that a gathered dimension that would overflow is rejected.
func.func @gather_overflow(%x: tensor<2x4611686018427387904xi8>) {
  // expected-error @+1 {{'dist.all_gather' op dimension 1 of size 4611686018427387904 times the group size 4 overflows}}
  %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x4611686018427387904xi8> -> tensor<2x4611686018427387904xi8>
  return
}

// -----

dist.mesh @mesh = <["dp" = 2]>

// Tests that scatter_axis is a dimension of the operand.
func.func @scatter_axis_range(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op scatter_axis -1 is out of range for rank 1}}
  %y = dist.reduce_scatter sum %x on @mesh mesh_axes = ["dp"] scatter_axis = -1 : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 4]>

// Tests that the group size divides the scattered dimension.
func.func @scatter_not_divisible(%x: tensor<6xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dimension 0 of size 6 is not divisible by the group size 4}}
  %y = dist.reduce_scatter sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<6xf32> -> tensor<1xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 4]>

// Tests that a reduce-scatter divides the scattered dimension by the group size.
func.func @scatter_shape(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op result shape [4,3] differs from the expected [2,3]}}
  %y = dist.reduce_scatter max %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8x3xf32> -> tensor<4x3xf32>
  return
}

// -----

dist.mesh @mesh = <["dp" = 4]>

// Tests that an asynchronous reduce-scatter checks the future's element type.
func.func @scatter_start_element_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter_start' op result element type 'bf16' differs from the operand's 'f32'}}
  %f = dist.reduce_scatter_start sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8xf32> -> !dist.future<tensor<2xbf16>>
  return
}

// -----

dist.mesh @mesh = <["dp" = 4]>

// Tests that an asynchronous reduce-scatter checks the future's shape.
func.func @scatter_start_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter_start' op result shape [4] differs from the expected [2]}}
  %f = dist.reduce_scatter_start sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8xf32> -> !dist.future<tensor<4xf32>>
  return
}

// -----

dist.mesh @mesh = <["ep" = 4]>

// Tests that split_axis is a dimension of the operand.
func.func @split_axis_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op split_axis 2 is out of range for rank 2}}
  %y = dist.all_to_all %x on @mesh mesh_axes = ["ep"] split_axis = 2 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  return
}

// -----

dist.mesh @mesh = <["ep" = 4]>

// Tests that concat_axis is a dimension of the operand.
func.func @concat_axis_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op concat_axis -2 is out of range for rank 2}}
  %y = dist.all_to_all %x on @mesh mesh_axes = ["ep"] split_axis = 0 concat_axis = -2 : tensor<8x4xf32> -> tensor<2x16xf32>
  return
}

// -----

dist.mesh @mesh = <["ep" = 4]>

// Tests that the group size divides an all-to-all's split dimension.
func.func @split_not_divisible(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op dimension 0 of size 6 is not divisible by the group size 4}}
  %y = dist.all_to_all %x on @mesh mesh_axes = ["ep"] split_axis = 0 concat_axis = 1 : tensor<6x4xf32> -> tensor<1x16xf32>
  return
}

// -----

dist.mesh @mesh = <["ep" = 4]>

// Tests that an all-to-all divides the split and multiplies the concat dimension.
func.func @all_to_all_shape(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op result shape [8,4] differs from the expected [2,16]}}
  %y = dist.all_to_all %x on @mesh mesh_axes = ["ep"] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

dist.mesh @mesh = <["ep" = 4]>

// Tests that an all-to-all keeps the element type.
func.func @all_to_all_element_type(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op result element type 'i32' differs from the operand's 'f32'}}
  %y = dist.all_to_all %x on @mesh mesh_axes = ["ep"] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xi32>
  return
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

// -----

dist.mesh @mesh = <["pp" = 2]>

// Tests that a send goes to another rank.
func.func @send_to_self(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op shift must be nonzero (a rank does not send to itself)}}
  dist.send %x on @mesh mesh_axis = "pp" shift = 0 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["pp" = 2]>

// Tests that a shift stays within the axis.
func.func @send_too_far(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op shift 2 is out of range for mesh axis "pp" of size 2; it must lie in (-2, 2)}}
  dist.send %x on @mesh mesh_axis = "pp" shift = 2 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["pp" = 4]>

// Tests that a negative shift stays within the axis.
func.func @recv_too_far() {
  // expected-error @+1 {{'dist.recv' op shift -4 is out of range for mesh axis "pp" of size 4; it must lie in (-4, 4)}}
  %y = dist.recv on @mesh mesh_axis = "pp" shift = -4 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["pp" = 4]>

// Tests that a receive comes from another rank.
func.func @recv_from_self() {
  // expected-error @+1 {{'dist.recv' op shift must be nonzero (a rank does not send to itself)}}
  %y = dist.recv on @mesh mesh_axis = "pp" shift = 0 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh = <["pp" = 4]>

// Tests that a transfer's axis belongs to the mesh.
func.func @recv_unknown_axis() {
  // expected-error @+1 {{'dist.recv' op mesh @mesh has no axis "stage"}}
  %y = dist.recv on @mesh mesh_axis = "stage" shift = 1 : tensor<8xf32>
  return
}

// -----

// Tests that a transfer's mesh must exist.
func.func @send_without_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op @mesh does not name a dist.mesh}}
  dist.send %x on @mesh mesh_axis = "pp" shift = 1 : tensor<8xf32>
  return
}

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

// -----

// Tests that a stage index is non-negative.
func.func @negative_stage() {
  // expected-error @+1 {{'dist.stage' op index -1 is negative}}
  dist.stage -1 : () -> () {
    dist.yield
  }
  return
}

// -----

// Tests that stages do not nest.
func.func @nested_stage() {
  dist.stage 0 : () -> () {
    // expected-error @+1 {{'dist.stage' op is nested in another dist.stage}}
    dist.stage 1 : () -> () {
      dist.yield
    }
    dist.yield
  }
  return
}

// -----

// Tests that the body takes one argument per input.
func.func @stage_argument_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stage' op body has 1 arguments for 2 inputs}}
  dist.stage 0 ins(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    dist.yield
  }
  return
}

// -----

// Tests that the body's arguments have the inputs' types.
func.func @stage_argument_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stage' op body argument 0 has type 'tensor<4xf16>' but input 0 has type 'tensor<4xf32>'}}
  dist.stage 0 ins(%x) : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf16>):
    dist.yield
  }
  return
}

// -----

dist.mesh @mesh = <["pp" = 2]>

// Tests that a stage body ends in dist.yield.
func.func @stage_without_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stage' op body must end in dist.yield}}
  dist.stage 0 ins(%x) : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    dist.send %a on @mesh mesh_axis = "pp" shift = 1 : tensor<4xf32>
  }
  return
}

// -----

// Tests that a stage has a body block.
func.func @stage_without_body() {
  // expected-error @+1 {{'dist.stage' op expects a non-empty block}}
  dist.stage 0 : () -> () {
  }
  return
}

// -----

// Tests that a stage yields one value per result.
func.func @yield_count(%x: tensor<4xf32>) {
  %y = dist.stage 0 ins(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'dist.yield' op yields 2 values for a stage with 1 results}}
    dist.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

// Tests that a stage yields values of its result types.
func.func @yield_type(%x: tensor<4xf32>) {
  %y = dist.stage 0 ins(%x) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'dist.yield' op yielded value 0 has type 'tensor<4xf32>' but stage result 0 has type 'tensor<8xf32>'}}
    dist.yield %a : tensor<4xf32>
  }
  return
}

// -----

// Tests that dist.yield only ends a stage.
func.func @yield_outside_stage() {
  // expected-error @+1 {{'dist.yield' op expects parent op 'dist.stage'}}
  dist.yield
}
