// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py -p toy-addi-to-subi | filecheck %s
// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py -p 'toy-scale-constants{factor=5}' | filecheck %s --check-prefix=SCALE
// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py -p toy-scale-constants | filecheck %s --check-prefix=DEFAULT

// A pass from a plugin file runs like any other, options included: the
// plugin's pattern pass turns additions into subtractions, and its option
// pass scales constants by `factor` (default 2).

func.func @f(%i: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %s = arith.addi %i, %c3 : i32
  func.return %s : i32
}

// CHECK-LABEL: func.func @f
// CHECK:         %[[S:.*]] = arith.subi %i, %c3 : i32
// CHECK-NEXT:    func.return %[[S]] : i32

// SCALE:   arith.constant 15 : i32
// DEFAULT: arith.constant 6 : i32
