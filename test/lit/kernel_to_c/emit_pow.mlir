// A float power by a constant 1 to 4 (GPT-2's GELU cubes its input) is products,
// as onnxruntime computes a square or a cube, and by 0.25, 0.5, 0.75 or 1.5 (LRN's
// 0.75) square roots that keep pow's -0 and -inf, so the loop vectorizes; other
// exponents, and exponents known only at run time, call pow.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         float cube = (x3 * x3 * x3);
// CHECK:         float square = (x4 * x4);
// CHECK:         float fourth = ((x5 * x5) * (x5 * x5));
// CHECK:         float half = (x6 == -INFINITY ? INFINITY : 0.0f + sqrtf(x6));
// CHECK:         float quarter = (x8 == -INFINITY ? INFINITY : 0.0f + sqrtf(sqrtf(x8)));
// CHECK:         float lrn = (x9 == -INFINITY ? INFINITY : sqrtf(x9) * sqrtf(sqrtf(x9)));
// CHECK:         float three_halves = (x10 == -INFINITY ? INFINITY : x10 * sqrtf(x10));
// CHECK:         double wide = (x11 == -INFINITY ? INFINITY : sqrt(x11) * sqrt(sqrt(x11)));
// CHECK:         float other = powf(x12, {{.*}});
// CHECK:         float free_ = powf(x7, e);
func.func @powers(%x: memref<8xf32>, %y: memref<8xf32>, %xd: memref<8xf64>) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf64>, memref<8xf32>) {
  %a = kernel.alloc() : memref<8xf32>
  %b = kernel.alloc() : memref<8xf32>
  %c = kernel.alloc() : memref<8xf32>
  %d = kernel.alloc() : memref<8xf32>
  %f = kernel.alloc() : memref<8xf32>
  %g = kernel.alloc() : memref<8xf32>
  %h = kernel.alloc() : memref<8xf32>
  %k = kernel.alloc() : memref<8xf32>
  %l = kernel.alloc() : memref<8xf64>
  %m = kernel.alloc() : memref<8xf32>
  %three = kernel.constant dense<3.0> : tensor<1xf32>
  %two = arith.constant 2.0 : f32
  %four = arith.constant 4.0 : f32
  %onehalf = arith.constant 0.5 : f32
  %onequarter = arith.constant 0.25 : f32
  %threequarters = arith.constant 0.75 : f32
  %threehalves = arith.constant 1.5 : f32
  %dthreequarters = arith.constant 0.75 : f64
  %twohalf = arith.constant 2.5 : f32
  %c0 = arith.constant 0 : index
  kernel.loop (%i) in (8) [parallel] {
    %x3 = kernel.load %x[%i] : memref<8xf32>
    %n = kernel.load %three[%c0] : memref<1xf32>
    %cube = math.powf %x3, %n : f32
    kernel.store %cube, %a[%i] : memref<8xf32>
    %x4 = kernel.load %x[%i] : memref<8xf32>
    %square = math.powf %x4, %two : f32
    kernel.store %square, %b[%i] : memref<8xf32>
    %x5 = kernel.load %x[%i] : memref<8xf32>
    %fourth = math.powf %x5, %four : f32
    kernel.store %fourth, %c[%i] : memref<8xf32>
    %x6 = kernel.load %x[%i] : memref<8xf32>
    %half = math.powf %x6, %onehalf : f32
    kernel.store %half, %d[%i] : memref<8xf32>
    %x8 = kernel.load %x[%i] : memref<8xf32>
    %quarter = math.powf %x8, %onequarter : f32
    kernel.store %quarter, %g[%i] : memref<8xf32>
    %x9 = kernel.load %x[%i] : memref<8xf32>
    %lrn = math.powf %x9, %threequarters : f32
    kernel.store %lrn, %h[%i] : memref<8xf32>
    %x10 = kernel.load %x[%i] : memref<8xf32>
    %three_halves = math.powf %x10, %threehalves : f32
    kernel.store %three_halves, %k[%i] : memref<8xf32>
    %x11 = kernel.load %xd[%i] : memref<8xf64>
    %wide = math.powf %x11, %dthreequarters : f64
    kernel.store %wide, %l[%i] : memref<8xf64>
    %x12 = kernel.load %x[%i] : memref<8xf32>
    %other = math.powf %x12, %twohalf : f32
    kernel.store %other, %m[%i] : memref<8xf32>
    %x7 = kernel.load %x[%i] : memref<8xf32>
    %e = kernel.load %y[%i] : memref<8xf32>
    %free = math.powf %x7, %e : f32
    kernel.store %free, %f[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %a, %b, %c, %d, %f, %g, %h, %k, %l, %m : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf64>, memref<8xf32>
}
