"""Passes that work on any dialect (rung's versions of generic cleanups such as `cse`)."""
