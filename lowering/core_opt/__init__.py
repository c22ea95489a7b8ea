"""Optimizations at the core level: passes that take core IR to better core IR."""

from .channel_scale import FoldChannelScalesPass
from .conv_taps import PruneConvTapsPass
from .fold import FoldConstantsPass
from .hoist import HoistLoopInvariantsPass

__all__ = [
    "FoldChannelScalesPass",
    "FoldConstantsPass",
    "HoistLoopInvariantsPass",
    "PruneConvTapsPass",
]
