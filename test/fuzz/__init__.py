"""rung's fuzz harness: see README.md; run it with `python test/fuzz/run.py`."""
