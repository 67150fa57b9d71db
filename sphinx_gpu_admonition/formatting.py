"""How durations and times read: the same on the page, in the status table, in
flag reasons, in the build summary and on the command line."""

from __future__ import annotations


def format_seconds(seconds: float | None, missing: str = "–") -> str:
    """``0.47 ms``, ``2.31 s``, ``82.4 s``, ``12 min 3 s``; ``missing`` for None."""
    if seconds is None:
        return missing
    if seconds < 0.01:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 600:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:.0f} s"


def format_date(iso: str | None) -> str:
    """An ISO 8601 time to the minute (``2026-11-29 21:36``); the page is not a log."""
    return iso[:16].replace("T", " ") if iso else ""
