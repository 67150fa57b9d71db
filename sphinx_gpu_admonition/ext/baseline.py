"""Moved to :mod:`.build_analysis` (the baseline is part of the build's analysis).

Kept only so that modules still importing ``.baseline`` work while they move; new
code imports from :mod:`.build_analysis`.
"""

from __future__ import annotations

from .build_analysis import baseline_path, get_baseline, thresholds

__all__ = ["baseline_path", "get_baseline", "thresholds"]
