/* rung's C ABI tensor: what a generated model's _run and the runtime's library
 * routines pass. A generated model header carries a copy of this block (so that
 * the header stands alone); RUNG_TENSOR_DEFINED keeps the two from clashing. */
#ifndef RUNG_TENSOR_DEFINED
#define RUNG_TENSOR_DEFINED
#include <stdint.h>
#define RUNG_MAX_RANK 8
typedef struct rung_tensor {
  void *data;    /* contiguous, row-major */
  int32_t dtype; /* ONNX TensorProto.DataType code */
  int32_t rank;
  int64_t shape[RUNG_MAX_RANK];
} rung_tensor;
#endif
