"""The `kernel-sanitized` level: the kernel level's C, run under AddressSanitizer and UBSan.

Lowered exactly like `kernel`, but its evaluator links the generated C with the
test harness in a `-fsanitize=address,undefined` build and runs it as a process
of its own (`rung.runtime.native.run_in_harness`), twice, with the scratch arena
filled differently each time. A sanitizer finding (out-of-bounds access,
undefined behaviour, a leak) or outputs that differ between the runs fail the
run with `SanitizerError`, whose first line says what was found and where.
A model with sequences, optionals or strings among its inputs or outputs,
which the harness cannot pass, runs as a sanitized library in a Python process
of its own instead (`run_sanitized_library`; no leak check there).
`rung conformance --level kernel-sanitized` is the long sanitizer run over
every node case.
"""

from rung.runtime.levels import register_level

register_level(
    "kernel-sanitized",
    from_level="kernel",
    lowering=None,
    evaluator="rung.runtime.native:evaluate_sanitized",
    description="the kernel level's C built with -fsanitize=address,undefined and run in "
    "the test harness (slow: one build and process per model)",
)
