// C generation: a buffer is a pointer plus one int64_t per run-time dim; a
// kernel.loop is a for nest; iter_args are variables declared before the nest;
// `omp` asks for an OpenMP loop; constants are inline literals; f16 computes
// as float and rounds after each op.
// RUN: opt %s -t c | filecheck %s

// CHECK:      int model_run(const rung_tensor *inputs, rung_tensor *outputs, void *arena_memory) {
// CHECK:        if (inputs[0].dtype != 1 || inputs[0].rank != 2) return rung_error("input 0 ('x')", "has the wrong type or rank");
// CHECK-NEXT:   if (inputs[0].shape[1] != 8) return rung_error("input 0 ('x')", "dim 1 must be 8");
// CHECK:        float *const x = (float *)inputs[0].data;
// CHECK-NEXT:   const int64_t x_d0 = inputs[0].shape[0];
// CHECK:        const int64_t y_d0 = x_d0;
// CHECK-NEXT:   size_t y_bytes = 0;
// CHECK-NEXT:   if (!rung_buffer_bytes(&y_bytes, sizeof(float), 2, (const int64_t[]){y_d0, 8}))
// CHECK-NEXT:     RUNG_FAIL("{{.*}}: a buffer's run-time size is negative or too large to allocate");
// CHECK-NEXT:   float *const y = (float *)rung_heap_alloc(&heap, y_bytes);
// CHECK:        #pragma omp parallel for schedule(static)
// CHECK-NEXT:   for (int64_t i = 0; i < x_d0; i++) {
// CHECK-NEXT:     float acc = 0.0f;
// CHECK-NEXT:     #pragma omp simd reduction(+:acc)
// CHECK-NEXT:     for (int64_t k = 0; k < 8; k++) {
// CHECK-NEXT:       float a = x[i * 8 + k];
// CHECK-NEXT:       float t = acc + a;
// CHECK-NEXT:       acc = t;
// CHECK-NEXT:     }
// CHECK-NEXT:     s[i] = acc;
// CHECK:        outputs[0].dtype = 1;
// CHECK-NEXT:   outputs[0].rank = 1;
// CHECK-NEXT:   outputs[0].shape[0] = s_d0;
// CHECK-NEXT:   outputs[0].data = rung_copy_out(s, (size_t)(s_d0) * sizeof(float));
func.func @rowsum(%x: memref<?x8xf32>) -> memref<?xf32> {
  %n = kernel.dim %x[0] : memref<?x8xf32>
  %y = kernel.alloc(%n) : memref<?x8xf32>
  %s = kernel.alloc(%n) : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  kernel.loop (%i) in (%n) [parallel] attributes {omp} {
    %r = kernel.loop (%k) in (8) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %a = kernel.load %x[%i, %k] : memref<?x8xf32>
      %t = arith.addf %acc, %a : f32
      kernel.yield %t : f32
    }
    kernel.store %r, %s[%i] : memref<?xf32>
    kernel.yield
  }
  func.return %s : memref<?xf32>
}
