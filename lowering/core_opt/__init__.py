"""Optimizations at the core level: passes that take core IR to better core IR."""

from .fold import FoldConstantsPass

__all__ = ["FoldConstantsPass"]
