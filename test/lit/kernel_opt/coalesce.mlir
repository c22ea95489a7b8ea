// kernel-coalesce: adjacent dims of a nest that every access indexes as an
// adjacent pair, in order, over a buffer dim as long as the inner bound, become
// one dim over views that merge those buffer dims; merging repeats while some
// pair can merge. Dims used otherwise (arithmetic, another order, a buffer
// longer than the bound, a broadcast), mixed kinds, iter_args and run-time
// shapes stay as they are.
// RUN: opt %s -p kernel-coalesce | filecheck %s

// A per-channel scale over 7x7 maps: (h, w) merge; c stays, as %s reads it alone.
// CHECK-LABEL: func.func @per_channel
// CHECK-NEXT:    %y = kernel.alloc() : memref<64x7x7xf32>
// CHECK-NEXT:    %[[Y:.*]] = kernel.view %y() : memref<64x7x7xf32> -> memref<64x49xf32>
// CHECK-NEXT:    %[[X:.*]] = kernel.view %x() : memref<64x7x7xf32> -> memref<64x49xf32>
// CHECK-NEXT:    kernel.loop (%c, %[[HW:.*]]) in (64, 49) [parallel, parallel] {
// CHECK-NEXT:      %v = kernel.load %[[X]][%c, %[[HW]]] : memref<64x49xf32>
// CHECK-NEXT:      %m = kernel.load %s[%c] : memref<64xf32>
// CHECK-NEXT:      %p = arith.mulf %v, %m : f32
// CHECK-NEXT:      kernel.store %p, %[[Y]][%c, %[[HW]]] : memref<64x49xf32>
func.func @per_channel(%x: memref<64x7x7xf32>, %s: memref<64xf32>) -> memref<64x7x7xf32> {
  %y = kernel.alloc() : memref<64x7x7xf32>
  kernel.loop (%c, %h, %w) in (64, 7, 7) [parallel, parallel, parallel] {
    %v = kernel.load %x[%c, %h, %w] : memref<64x7x7xf32>
    %m = kernel.load %s[%c] : memref<64xf32>
    %p = arith.mulf %v, %m : f32
    kernel.store %p, %y[%c, %h, %w] : memref<64x7x7xf32>
    kernel.yield
  }
  func.return %y : memref<64x7x7xf32>
}

// A copy into the first channels of a longer buffer (a Concat): one loop, the
// target's view longer than the nest.
// CHECK-LABEL: func.func @concat_part
// CHECK:         %[[Y:.*]] = kernel.view %y() : memref<40x14x14xf32> -> memref<7840xf32>
// CHECK:         %[[X:.*]] = kernel.view %x() : memref<32x14x14xf32> -> memref<6272xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (6272) [parallel] {
// CHECK-NEXT:      %v = kernel.load %[[X]][%[[I]]] : memref<6272xf32>
// CHECK-NEXT:      kernel.store %v, %[[Y]][%[[I]]] : memref<7840xf32>
func.func @concat_part(%x: memref<32x14x14xf32>, %y: memref<40x14x14xf32>) {
  kernel.loop (%c, %h, %w) in (32, 14, 14) [parallel, parallel, parallel] {
    %v = kernel.load %x[%c, %h, %w] : memref<32x14x14xf32>
    kernel.store %v, %y[%c, %h, %w] : memref<40x14x14xf32>
    kernel.yield
  }
  func.return
}

// A nest shorter than the buffer's last dim (a Slice): (h, w) cannot merge, as
// rows of 7 are not rows of 5; (c, h) can.
// CHECK-LABEL: func.func @slice_rows
// CHECK:         kernel.loop (%c, %w) in (56, 5) [parallel, parallel] {
// CHECK-NEXT:      %v = kernel.load %{{.*}}[%c, %w] : memref<56x7xf32>
// CHECK-NEXT:      kernel.store %v, %{{.*}}[%c, %w] : memref<56x5xf32>
func.func @slice_rows(%x: memref<8x7x7xf32>, %y: memref<8x7x5xf32>) {
  kernel.loop (%c, %h, %w) in (8, 7, 5) [parallel, parallel, parallel] {
    %v = kernel.load %x[%c, %h, %w] : memref<8x7x7xf32>
    kernel.store %v, %y[%c, %h, %w] : memref<8x7x5xf32>
    kernel.yield
  }
  func.return
}

// A sum over both dims of a map: two reduction dims merge (the order of the
// additions is the same).
// CHECK-LABEL: func.func @sum_in_memory
// CHECK:         kernel.loop (%c, %{{.*}}) in (4, 49) [parallel, reduction] {
func.func @sum_in_memory(%x: memref<4x7x7xf32>, %y: memref<4xf32>) {
  kernel.loop (%c, %h, %w) in (4, 7, 7) [parallel, reduction, reduction] {
    %v = kernel.load %x[%c, %h, %w] : memref<4x7x7xf32>
    %a = kernel.load %y[%c] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    kernel.store %s, %y[%c] : memref<4xf32>
    kernel.yield
  }
  func.return
}

// Nests that stay as they are.
// CHECK-LABEL: func.func @negative
// A transpose: the dims index the buffers in two orders.
// CHECK:         kernel.loop (%i, %j) in (8, 8) [parallel, parallel] {
// Arithmetic on an index (a stride-2 read).
// CHECK:         kernel.loop (%k, %l) in (4, 4) [parallel, parallel] {
// A broadcast along the last dim: %b reads the rows only.
// CHECK:         kernel.loop (%m, %n) in (8, 8) [parallel, parallel] {
// A parallel dim beside a reduction dim.
// CHECK:         kernel.loop (%p, %q) in (8, 8) [parallel, reduction] {
// A run-time size.
// CHECK:         kernel.loop (%r, %s) in (%d, 8) [parallel, parallel] {
// iter_args.
// CHECK:         kernel.loop (%t, %u) in (8, 8) [reduction, reduction] iter_args
func.func @negative(%a: memref<8x8xf32>, %b: memref<8xf32>, %c: memref<8x8xf32>, %dyn: memref<?x8xf32>, %d: index) -> f32 {
  kernel.loop (%i, %j) in (8, 8) [parallel, parallel] {
    %v = kernel.load %a[%j, %i] : memref<8x8xf32>
    kernel.store %v, %c[%i, %j] : memref<8x8xf32>
    kernel.yield
  }
  kernel.loop (%k, %l) in (4, 4) [parallel, parallel] {
    %two = arith.constant 2 : index
    %k2 = arith.muli %k, %two : index
    %v = kernel.load %a[%k2, %l] : memref<8x8xf32>
    kernel.store %v, %c[%k, %l] : memref<8x8xf32>
    kernel.yield
  }
  kernel.loop (%m, %n) in (8, 8) [parallel, parallel] {
    %v = kernel.load %b[%m] : memref<8xf32>
    kernel.store %v, %c[%m, %n] : memref<8x8xf32>
    kernel.yield
  }
  kernel.loop (%p, %q) in (8, 8) [parallel, reduction] {
    %v = kernel.load %a[%p, %q] : memref<8x8xf32>
    kernel.store %v, %c[%p, %q] : memref<8x8xf32>
    kernel.yield
  }
  kernel.loop (%r, %s) in (%d, 8) [parallel, parallel] {
    %v = kernel.load %dyn[%r, %s] : memref<?x8xf32>
    kernel.store %v, %dyn[%r, %s] : memref<?x8xf32>
    kernel.yield
  }
  %zero = arith.constant 0.0 : f32
  %sum = kernel.loop (%t, %u) in (8, 8) [reduction, reduction] iter_args(%acc = %zero : f32) -> f32 {
    %v = kernel.load %a[%t, %u] : memref<8x8xf32>
    %n2 = arith.addf %acc, %v : f32
    kernel.yield %n2 : f32
  }
  func.return %sum : f32
}

// A nest inside a nest (a padded copy's border rows, per channel): the view goes
// before the outer nest, whose body keeps only loads, stores and nests, so that
// kernel-parallelize can still share it among threads.
// CHECK-LABEL: func.func @inner_nest
// CHECK-NEXT:    %[[V:.*]] = kernel.view %y() : memref<4x3x8xf32> -> memref<4x24xf32>
// CHECK-NEXT:    kernel.loop (%c) in (4) [parallel] {
// CHECK-NEXT:      kernel.loop (%{{.*}}) in (24) [parallel] {
// CHECK:             kernel.store %{{.*}}, %[[V]][%c, %{{.*}}] : memref<4x24xf32>
func.func @inner_nest(%y: memref<4x3x8xf32>) {
  kernel.loop (%c) in (4) [parallel] {
    kernel.loop (%h, %w) in (3, 8) [parallel, parallel] {
      %z = arith.constant 0.0 : f32
      kernel.store %z, %y[%c, %h, %w] : memref<4x3x8xf32>
      kernel.yield
    }
    kernel.yield
  }
  func.return
}

// A buffer defined inside an outer nest: no view can go before that nest, so the
// inner one stays as it is.
// CHECK-LABEL: func.func @buffer_inside
// CHECK:           kernel.loop (%h, %w) in (3, 8) [parallel, parallel] {
func.func @buffer_inside(%y: memref<4x3x8xf32>) {
  kernel.loop (%c) in (4) [parallel] {
    %row = kernel.subview %y[%c] : memref<4x3x8xf32> -> memref<3x8xf32>
    kernel.loop (%h, %w) in (3, 8) [parallel, parallel] {
      %z = arith.constant 0.0 : f32
      kernel.store %z, %row[%h, %w] : memref<3x8xf32>
      kernel.yield
    }
    kernel.yield
  }
  func.return
}
