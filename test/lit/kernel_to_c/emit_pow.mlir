// A float power by a constant 1 to 4 (GPT-2's GELU cubes its input) is products,
// as onnxruntime computes a square or a cube, so the loop vectorizes; other
// exponents, and exponents known only at run time, call pow.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         float cube = (x3 * x3 * x3);
// CHECK:         float square = (x4 * x4);
// CHECK:         float fourth = ((x5 * x5) * (x5 * x5));
// CHECK:         float half = powf(x6, {{.*}});
// CHECK:         float free_ = powf(x7, e);
func.func @powers(%x: memref<8xf32>, %y: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  %a = kernel.alloc() : memref<8xf32>
  %b = kernel.alloc() : memref<8xf32>
  %c = kernel.alloc() : memref<8xf32>
  %d = kernel.alloc() : memref<8xf32>
  %f = kernel.alloc() : memref<8xf32>
  %three = kernel.constant dense<3.0> : tensor<1xf32>
  %two = arith.constant 2.0 : f32
  %four = arith.constant 4.0 : f32
  %onehalf = arith.constant 0.5 : f32
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
    %x7 = kernel.load %x[%i] : memref<8xf32>
    %e = kernel.load %y[%i] : memref<8xf32>
    %free = math.powf %x7, %e : f32
    kernel.store %free, %f[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %a, %b, %c, %d, %f : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>
}
