// f16 buffers hold _Float16; scalars compute as float and round after each op.
// bf16 buffers hold uint16_t bits, converted on load and store.
// RUN: opt %s -t c | filecheck %s

// CHECK:      _Float16 *const x = (_Float16 *)inputs[0].data;
// CHECK:      uint16_t *const w = (uint16_t *)inputs[1].data;
// CHECK:        float a = (float)x[i];
// CHECK-NEXT:   float e = rung_round_f16(rung_expf(a));
// CHECK-NEXT:   y[i] = (_Float16)e;
// CHECK:        float b = rung_bf16_to_f32(w[i]);
// CHECK-NEXT:   float m = rung_round_bf16(b * b);
// CHECK-NEXT:   v[i] = rung_f32_to_bf16(m);
func.func @half(%x: memref<4xf16>, %w: memref<4xbf16>) -> (memref<4xf16>, memref<4xbf16>) {
  %y = kernel.alloc() : memref<4xf16>
  %v = kernel.alloc() : memref<4xbf16>
  kernel.loop (%i) in (4) [parallel] {
    %a = kernel.load %x[%i] : memref<4xf16>
    %e = math.exp %a : f16
    kernel.store %e, %y[%i] : memref<4xf16>
    %b = kernel.load %w[%i] : memref<4xbf16>
    %m = arith.mulf %b, %b : bf16
    kernel.store %m, %v[%i] : memref<4xbf16>
    kernel.yield
  }
  func.return %y, %v : memref<4xf16>, memref<4xbf16>
}
