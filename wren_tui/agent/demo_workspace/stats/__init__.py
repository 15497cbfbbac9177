"""Summary statistics for lists of numbers."""

from .core import mean, median, spread, total

__all__ = ["mean", "median", "spread", "total"]
