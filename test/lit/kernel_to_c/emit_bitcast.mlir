// arith.bitcast between a float and an integer keeps the bits: a union reads
// the float's bytes as the integer (a C cast would convert the value). Half
// floats compute as float, so their bits are taken from (or put into) their
// storage type: the upper 16 bits for bf16, _Float16 for f16.
// RUN: opt %s -t c | filecheck %s

// CHECK:        float a = x[i];
// CHECK-NEXT:   int32_t r = ((union { float from; int32_t to; }){ .from = a }).to;
// CHECK:        float b = rung_bf16_to_f32(h[i]);
// CHECK-NEXT:   int16_t s = ((union { uint16_t from; int16_t to; }){ .from = rung_f32_to_bf16(b) }).to;
// CHECK:        int16_t c = g[i];
// CHECK-NEXT:   float t = (float)(((union { int16_t from; _Float16 to; }){ .from = c }).to);
func.func @bits(%x: memref<4xf32>, %h: memref<4xbf16>, %g: memref<4xi16>) -> (memref<4xi32>, memref<4xi16>, memref<4xf16>) {
  %y = kernel.alloc() : memref<4xi32>
  %v = kernel.alloc() : memref<4xi16>
  %w = kernel.alloc() : memref<4xf16>
  kernel.loop (%i) in (4) [parallel] {
    %a = kernel.load %x[%i] : memref<4xf32>
    %r = arith.bitcast %a : f32 to i32
    kernel.store %r, %y[%i] : memref<4xi32>
    %b = kernel.load %h[%i] : memref<4xbf16>
    %s = arith.bitcast %b : bf16 to i16
    kernel.store %s, %v[%i] : memref<4xi16>
    %c = kernel.load %g[%i] : memref<4xi16>
    %t = arith.bitcast %c : i16 to f16
    kernel.store %t, %w[%i] : memref<4xf16>
    kernel.yield
  }
  func.return %y, %v, %w : memref<4xi32>, memref<4xi16>, memref<4xf16>
}
