"""Python's garbage collector kept out of the extension's bursts of allocations.

CPython collects its youngest objects after every 700 new containers (dicts,
lists, objects; 2,000 from Python 3.13), moves those still alive to an older
generation, and runs a full collection (of every object of the build: about 50 ms
in a small Sphinx build, more in a big one) once the objects moved to the oldest
generation since the last one reach a quarter of those already there.  Building a page's record
allocates thousands of containers that live only until the record is done (the
sidecar's JSON, the page's cells, the loaded model); those alive when a young
collection happens are moved up and counted towards the next full collection as
if they lived long, although their reference counts free them a moment later: in
a small cache-hit rebuild on Python 3.11 that was one or two full collections more
than the same build without the extension made (on 3.13, with its rarer young
collections, the same small books made one with or without it).

With the collector paused while such a burst runs, its short-lived containers are
freed by their reference counts before any collection sees them, and only what
the burst keeps (the record) is counted.  Nothing is lost: the collector runs
again when the burst ends (it stays off if it was off) and collects whatever the
burst left in reference cycles.  Mercurial's ``util.nogc`` does the same for its
parsers.  ``docs/performance.md`` has the measurements.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The garbage collector off inside the block, as it was after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
