"""Optimizations of the kernel dialect: fusion, interchange, tiling, parallel loops, memory plan."""
