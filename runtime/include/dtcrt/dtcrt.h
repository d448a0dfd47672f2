/*===- dtcrt.h - the dtc runtime's C ABI ----------------------------------===*
 *
 * Generated code (OUTDIR/train.cpp) describes the compiled step with these
 * structs and hands control to dtcrt_train_main, which implements the
 * `train` command line (DESIGN.md section 1). The runtime links no MLIR or
 * LLVM. Functions are named dtcrt_<object>_<verb>.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DTCRT_DTCRT_H
#define DTCRT_DTCRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DTCRT_MAX_RANK 8

/* One argument or result of the step function. */
typedef struct dtcrt_tensor_desc {
  const char *name;  /* ONNX name (parameters: the initializer's name) */
  const char *role;  /* parameter, constant, state, optimizer_state, input,
                        hyper, step, data_offset (arguments: the index
                        of this rank's first sample in the global batch,
                        for dropout); parameter, state,
                        optimizer_state, metric, gradient (results). A
                        constant (an initializer without a gradient path to
                        the loss, such as a causal mask) is loaded from
                        weights.bin and never updated. */
  const char *dtype; /* f32, f64, f16, bf16, i64, i32, i16, i8, u8, bool */
  int rank;
  int64_t dims[DTCRT_MAX_RANK];
  /* Byte offset of the initial value in OUTDIR/weights.bin (parameters,
     constants, state), or -1 (optimizer state starts at zero; inputs come
     from data). */
  int64_t weights_offset;
  /* For role hyper: the compiled-in default. */
  double default_value;
  /* For an integer input: the largest valid value (a class count minus one,
     a vocabulary size minus one), which --synthetic draws up to; 0 when
     unknown (synthetic integers are then 0 or 1). */
  int64_t max_value;
  /* For a carried result (parameter, state, optimizer_state): nonzero when
     the step writes it over the argument it updates (the one of the same
     name and role; dtc compile's donation, plan.json's in_place_results),
     so that argument and result share one buffer and the step holds its
     state once. Zero: the result has a buffer of its own, which becomes the
     argument of the next step. */
  int in_place;
  /* For a tensor split over the mesh (ZeRO-sharded optimizer state): the
     dimension cut into blocks and the mesh axes that cut it (a mask of
     DTCRT_AXIS_*); this rank holds block (its group rank) of the whole
     tensor, whose dimension shard_dim is dims[shard_dim] times the group
     size. shard_axes 0: the tensor is whole on every rank. */
  int shard_dim;
  int shard_axes;
  /* Of shard_axes, those that cut each block of the others again (ZeRO's
     dp inside a tensor-parallel block): the block index along shard_dim
     is (outer group rank) * (inner group size) + (inner group rank). 0:
     one level, the group of shard_axes in mesh order. */
  int shard_inner_axes;
  /* The whole tensor's shape as the model file has it, where the program
     holds the same elements (row-major) in another shape (a fused
     projection held by its parts under tensor parallelism): checkpoints
     and --save-onnx use it. model_rank 0: the program's own shape. */
  int model_rank;
  int64_t model_dims[DTCRT_MAX_RANK];
} dtcrt_tensor_desc;

/* What the running step tells the runtime, and how the runtime asks it to
   check itself. */
typedef struct dtcrt_step_ctx {
  uint8_t *arena;
  int64_t arena_bytes;
  /* Largest end offset of an arena buffer the step wrote (measured). */
  int64_t high_water;
  /* Nonzero: after each kernel, check that no byte outside the buffers the
     plan says are live changed (dtcrt_guard_check). */
  int guard;
  /* The ONNX node of the kernel running, for error messages. */
  const char *current_op;
  /* The runtime's mesh (channels per axis group) for dtcrt_comm_*; null
     for a one-rank run. */
  void *mesh;
  /* Nonzero under train --trace: generated code calls dtcrt_trace_op
     before each kernel. */
  int trace;
  /* Asynchronous collectives in flight (dtcrt_comm_*_start). */
  int comm_pending;
} dtcrt_step_ctx;

/* Tracing (train --trace): kernel `node` (its ONNX node, or the op's name)
   of op `op` starts now; the kernel before it ends now. `comm` nonzero
   puts it on the communication track (collectives and transfers). */
void dtcrt_trace_op(dtcrt_step_ctx *ctx, const char *node, const char *op,
                    int comm);

/* The generated step: args and results in the order of the descriptors. */
typedef void (*dtcrt_step_fn)(void *const *args, void *const *results,
                              dtcrt_step_ctx *ctx);

typedef struct dtcrt_model_desc {
  const char *name;
  int num_args;
  const dtcrt_tensor_desc *args;
  int num_results;
  const dtcrt_tensor_desc *results;
  int64_t arena_bytes; /* the plan's peak */
  int64_t global_batch;
  int64_t micro_batch;
  dtcrt_step_fn step;
  /* Optional (NULL when the build has none): the forward-only loss, for
     --eval-data, in eval mode (dropout off, BatchNorm with its running
     statistics). Same arguments as `step`; changes no argument. It writes
     the results `eval_results` describes: the metrics "loss_sum" and
     "loss_count" of the global batch, the eval loss being their total sum
     over their total count (reduction='mean' over the eval set). With no
     eval_results (num_eval_results 0) it writes instead the results of
     `step` of role metric, at least "loss", and the eval loss is the mean
     of the batches' losses. */
  dtcrt_step_fn eval_step;
  int num_eval_results;
  const dtcrt_tensor_desc *eval_results;
  /* The mesh the program was compiled for (0 reads as 1): `mpirun -np`
     must equal their product. Ranks are laid out tp fastest, then dp, then
     pp (DESIGN.md section 1). global_batch is the whole mesh's; each
     data-parallel rank takes global_batch / mesh_dp samples of it per
     step, in micro_batch-sized micro-batches. */
  int mesh_pp, mesh_dp, mesh_tp;
  /* Pipelines: this stage's index (0 without pp) and the file beside the
     executable holding its initial values (NULL: weights.bin). */
  int stage;
  const char *weights_file;
  /* A program whose step keeps the carried state (parameters, constants,
     state, optimizer state) in device memory (the CUDA target) copies it
     into the host buffers `args` (in the order of the descriptors) when the
     runtime is about to read them: checkpoints, --save-onnx. NULL: the step
     works on the host buffers themselves. */
  void (*state_to_host)(void *const *args);
  /* Optional (NULL: `step` returns when the step is done). A program whose
     training step runs on a device (the CUDA target) may return from `step`
     once the step is queued; `finish_step` waits for it and writes its
     results. In between, the runtime may fill the next step's inputs (role
     "input") into the argument buffers and pass them to `stage_inputs`,
     which copies them (to the device, while the step runs): the next
     `step` then takes its inputs from there, not from `args`. */
  void (*finish_step)(void);
  void (*stage_inputs)(void *const *args);
} dtcrt_model_desc;

/* Mesh axes as mask bits: a collective's group is the ranks that differ
   only on the axes of its mask. */
#define DTCRT_AXIS_PP 1
#define DTCRT_AXIS_DP 2
#define DTCRT_AXIS_TP 4

/* Collectives of the step (ring algorithms; bytes counted per group).
   `dtype` is a descriptor dtype name, `kind` 0 sum, 1 max, 2 min, 3 mean.
   A split tensor is viewed as [outer, dim, inner] around its split
   dimension, `dim` being the block's (local) size. `in` and `out` may be
   one buffer for all_reduce only. A failure ends every rank with a message
   naming the rank, the collective and the op. */
void dtcrt_comm_all_reduce(dtcrt_step_ctx *ctx, int axes, const char *dtype,
                           int kind, const void *in, void *out, int64_t count);
/* in: [outer, n * dim, inner]; out: this rank's block of the reduction. */
void dtcrt_comm_reduce_scatter(dtcrt_step_ctx *ctx, int axes, const char *dtype,
                               int kind, const void *in, void *out,
                               int64_t outer, int64_t dim, int64_t inner);
/* in: this rank's block [outer, dim, inner]; out: [outer, n * dim, inner]. */
void dtcrt_comm_all_gather(dtcrt_step_ctx *ctx, int axes, const char *dtype,
                           const void *in, void *out, int64_t outer,
                           int64_t dim, int64_t inner);
/* No communication: out gets this rank's block of the whole tensor in. */
void dtcrt_comm_local_block(dtcrt_step_ctx *ctx, int axes, const char *dtype,
                            const void *in, void *out, int64_t outer,
                            int64_t dim, int64_t inner);

/* Asynchronous collectives: each *_start reads `in` now and runs the
   collective of the same name while later kernels run; dtcrt_comm_wait
   returns once `out` holds the result. `slot` names the collective in
   flight (one per start op of the program). OpenMPI moves data only inside
   MPI calls, so generated code calls dtcrt_comm_progress between kernels
   while any is in flight (ctx->comm_pending). */
void dtcrt_comm_all_reduce_start(dtcrt_step_ctx *ctx, int slot, int axes,
                                 const char *dtype, int kind, const void *in,
                                 void *out, int64_t count);
void dtcrt_comm_reduce_scatter_start(dtcrt_step_ctx *ctx, int slot, int axes,
                                     const char *dtype, int kind,
                                     const void *in, void *out, int64_t outer,
                                     int64_t dim, int64_t inner);
void dtcrt_comm_all_gather_start(dtcrt_step_ctx *ctx, int slot, int axes,
                                 const char *dtype, const void *in, void *out,
                                 int64_t outer, int64_t dim, int64_t inner);
void dtcrt_comm_wait(dtcrt_step_ctx *ctx, int slot);
void dtcrt_comm_progress(dtcrt_step_ctx *ctx);

/* For collectives run by another transport on their own communicators (the
   CUDA target's NCCL channel, dtcrt/cuda/Nccl.h), on the group of `axes`:
   this rank's group rank, the group's size and the seconds a peer may stay
   silent before it counts as dead (DTCRT_COMM_TIMEOUT_S). */
void dtcrt_comm_group(dtcrt_step_ctx *ctx, int axes, int *rank, int *size,
                      double *timeout_s);
/* The launcher's rank of group rank `rank` of the group of `axes` (for
   messages). */
int dtcrt_comm_world_rank(dtcrt_step_ctx *ctx, int axes, int rank);
/* Copies `bytes` of `data` from group rank 0 to the group's other ranks
   (a communicator's bootstrap id); not counted as the step's traffic. */
void dtcrt_comm_broadcast(dtcrt_step_ctx *ctx, int axes, void *data,
                          int64_t bytes);
/* Counts collective `name` (all_reduce, reduce_scatter, all_gather) of
   `count` elements of `dtype` (all_reduce: the buffer; the others: the
   whole, unsplit tensor) as the ring algorithm sends it, which is what the
   runtime's own collectives count and plan.json predicts (nccl-tests'
   bus-bandwidth convention). */
void dtcrt_comm_count(dtcrt_step_ctx *ctx, int axes, const char *name,
                      const char *dtype, int64_t count);
/* Ends every rank as a failed collective of the runtime does, naming the
   rank, the collective `name`, the op running and `why`. */
void dtcrt_comm_fail(dtcrt_step_ctx *ctx, int axes, const char *name,
                     const char *why);

/* Point-to-point transfers of a pipeline, to and from the rank `shift`
   steps along the single mesh axis of `axes` (cyclically). A send copies
   the bytes and returns at once; a receive waits for the matching send
   (the peer's sends arrive in program order). */
void dtcrt_comm_send(dtcrt_step_ctx *ctx, int axes, int shift, const void *in,
                     int64_t bytes);
void dtcrt_comm_recv(dtcrt_step_ctx *ctx, int axes, int shift, void *out,
                     int64_t bytes);

/* The pipeline schedule's timeline: generated code brackets each forward
   (kind 0), backward (1) and gradient accumulation (2, after its backward)
   of micro-batch `micro`, model chunk `chunk`, with begin = 1, then 0. The
   runtime records when each ran (--rank-report; --trace: kinds 0, 1). */
void dtcrt_pipeline_mark(dtcrt_step_ctx *ctx, int kind, int micro, int chunk,
                         int begin);

/* Runs a forward-only program once: --input NAME=FILE.npy for each data
   input, parameters from weights.bin beside the executable, every result
   written as --output-dir DIR/NAME.npy. Returns the process exit code. */
int dtcrt_forward_main(int argc, char **argv, const dtcrt_model_desc *model);

/* Runs the `train` command line on `model`; returns the process exit code. */
int dtcrt_train_main(int argc, char **argv, const dtcrt_model_desc *model);

/* A pipelined program: one step per stage, `stages[s]` run by the ranks
   whose pp coordinate is s (every stage's mesh fields are the same). */
int dtcrt_train_main_stages(int argc, char **argv,
                            const dtcrt_model_desc *const *stages,
                            int num_stages);

/* Called by generated code when a buffer [offset, offset + bytes) of the
   arena is first written. */
void dtcrt_arena_note(dtcrt_step_ctx *ctx, int64_t offset, int64_t bytes);

/* Guard mode: `live` holds n pairs (offset, bytes) of the arena buffers live
   across the kernel that just ran (its operands and results included);
   dtcrt_guard_fill poisons every other byte before it, dtcrt_guard_check
   verifies them after and ends the run naming `op` if one changed. */
void dtcrt_guard_fill(dtcrt_step_ctx *ctx, const int64_t *live, int n);
void dtcrt_guard_check(dtcrt_step_ctx *ctx, const int64_t *live, int n,
                       const char *op);

#ifdef __cplusplus
}
#endif

#endif /* DTCRT_DTCRT_H */
