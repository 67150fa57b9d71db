"""``python -m sphinx``, with the time spent in sphinx-gpu-admonition's own code.

    python benchmarks/timed_sphinx.py OUT.json [sphinx-build arguments]

A whole-build ratio on a shared 2-core machine moves by about 5 % from one
build to the next, more than the whole extension costs in a cache-hit rebuild.
This measures the extension's part of the same real build instead: every event
listener, transform, post-transform and directive it registers runs inside a
clock, and OUT.json gets their seconds (by kind and name) and the time to import
and set it up, as wall time (``total``, ``by``) and as the process's CPU time
(``cpu_total``, ``cpu_by``: what other load on the machine moves less).  The
pauses of Python's garbage collector are not counted in the extension's time
but apart (``gc_in_extension``, and ``gc_total`` / ``gc_collections`` /
``gc_full_collections`` for the
whole build, with or without the extension): a full collection of a Sphinx
build takes about 150 ms, and where it starts depends on every allocation
before it, so one that happened to start inside the extension's code made its
time six times what it is (measured on the 20-notebook cache-hit rebuild:
193 ms with the collection, 44 ms without; the whole build's collections took
the same time with the extension and without: 650 and 640 ms).  Whether the
extension's objects make the collector work more is what ``gc_total`` of the
two builds says.  Without
the extension in ``extensions`` it runs the build unchanged (so that the
reference pays the same start-up) and writes zeros.

Only the benchmark uses this; it wraps Sphinx's registry and event listeners,
which no extension should do.
"""

from __future__ import annotations

import collections
import functools
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from docutils.parsers.rst import Directive
from docutils.transforms import Transform
from sphinx import registry
from sphinx.cmd.build import main as build_main

PACKAGE = "sphinx_gpu_admonition"
#: the part of the extension's time that does not depend on the book
SET_UP = "import and setup"
SECONDS: collections.Counter[str] = collections.Counter()
CPU_SECONDS: collections.Counter[str] = collections.Counter()
_depth = [0]  # the extension's code calling more of it is counted once
#: the garbage collector's pauses: the whole build's, those inside the extension's code
GC = {"total": 0.0, "collections": 0, "full": 0, "in_extension": 0.0, "started": 0.0}


def _collector_pause(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        GC["started"] = time.perf_counter()
        return
    pause = time.perf_counter() - GC["started"]
    GC["total"] += pause
    GC["collections"] += 1
    GC["full"] += info["generation"] == 2  # of every object: most of the pauses' time


def timed(label: str, function: Any) -> Any:
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _depth[0]:
            return function(*args, **kwargs)
        _depth[0] += 1
        paused = GC["total"]
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            collecting = GC["total"] - paused  # the collector's, not the extension's
            GC["in_extension"] += collecting
            SECONDS[label] += time.perf_counter() - start - collecting
            CPU_SECONDS[label] += time.process_time() - cpu - collecting
            _depth[0] -= 1
    return run


def is_ours(thing: Any) -> bool:
    return (getattr(thing, "__module__", None) or "").startswith(PACKAGE)


def handler_name(handler: Any) -> str:
    module = handler.__module__.removeprefix(PACKAGE + ".")
    return f"{module}.{getattr(handler, '__qualname__', handler)}"


def wrap_extension(app: Any) -> None:
    """Put a clock around every listener and docutils class of the extension."""
    for event, listeners in app.events.listeners.items():
        listeners[:] = [listener._replace(handler=timed(
                            f"event {event}: {handler_name(listener.handler)}", listener.handler))
                        if is_ours(listener.handler) else listener for listener in listeners]
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE):
            continue
        for value in list(vars(module).values()):
            if not isinstance(value, type) or value.__module__ != name:
                continue
            if issubclass(value, Transform):
                value.apply = timed(f"transform {value.__name__}", value.apply)
            elif issubclass(value, Directive):
                value.run = timed(f"directive {value.__name__}", value.run)


_load_extension = registry.SphinxComponentRegistry.load_extension


def load_extension(self: Any, app: Any, extname: str) -> None:
    if extname != PACKAGE or extname in app.extensions:
        return _load_extension(self, app, extname)
    paused = GC["total"]
    start, cpu = time.perf_counter(), time.process_time()
    _load_extension(self, app, extname)
    collecting = GC["total"] - paused
    GC["in_extension"] += collecting
    SECONDS[SET_UP] += time.perf_counter() - start - collecting
    CPU_SECONDS[SET_UP] += time.process_time() - cpu - collecting
    wrap_extension(app)
    return None


def main(argv: list[str]) -> int:
    out, arguments = Path(argv[0]), argv[1:]
    registry.SphinxComponentRegistry.load_extension = load_extension  # type: ignore[method-assign]
    gc.callbacks.append(_collector_pause)
    try:
        return build_main(arguments)
    finally:
        out.write_text(json.dumps({"total": sum(SECONDS.values()), "by": dict(SECONDS),
                                   "cpu_total": sum(CPU_SECONDS.values()),
                                   "cpu_by": dict(CPU_SECONDS),
                                   "gc_in_extension": GC["in_extension"],
                                   "gc_total": GC["total"],
                                   "gc_collections": GC["collections"],
                                   "gc_full_collections": GC["full"]}, indent=1),
                       encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
