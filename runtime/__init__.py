"""Running rung's IR: reference interpreters, the C compiler driver and InferenceSession."""
