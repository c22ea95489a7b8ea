// f32 exp, tanh, erf and log call the runtime's vectorizable rung_math.h versions;
// f64 ones and the other math functions stay on libm.
// RUN: opt %s -t c | filecheck %s

// CHECK:        float a = x[i];
// CHECK-NEXT:   float e = rung_expf(a);
// CHECK-NEXT:   float t = rung_tanhf(e);
// CHECK-NEXT:   float r = rung_erff(t);
// CHECK-NEXT:   float l = rung_logf(r);
// CHECK-NEXT:   float s = sinf(l);
// CHECK-NEXT:   y[i] = s;
// CHECK:        double b = w[i];
// CHECK-NEXT:   double f = exp(b);
// CHECK-NEXT:   double h = tanh(f);
// CHECK-NEXT:   double g = erf(h);
// CHECK-NEXT:   double k = log(g);
// CHECK-NEXT:   v[i] = k;
func.func @math(%x: memref<4xf32>, %w: memref<4xf64>) -> (memref<4xf32>, memref<4xf64>) {
  %y = kernel.alloc() : memref<4xf32>
  %v = kernel.alloc() : memref<4xf64>
  kernel.loop (%i) in (4) [parallel] {
    %a = kernel.load %x[%i] : memref<4xf32>
    %e = math.exp %a : f32
    %t = math.tanh %e : f32
    %r = math.erf %t : f32
    %l = math.log %r : f32
    %s = math.sin %l : f32
    kernel.store %s, %y[%i] : memref<4xf32>
    %b = kernel.load %w[%i] : memref<4xf64>
    %f = math.exp %b : f64
    %h = math.tanh %f : f64
    %g = math.erf %h : f64
    %k = math.log %g : f64
    kernel.store %k, %v[%i] : memref<4xf64>
    kernel.yield
  }
  func.return %y, %v : memref<4xf32>, memref<4xf64>
}
