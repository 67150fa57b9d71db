"""The previous build to compare with (``gpu_status_baseline``), read once per process."""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from ..model.analysis import Thresholds
from ..model.files import read_status
from ..model.record import StatusReport
from ..model.schema import SchemaError
from .config import get_config
from .state import build_state
from .warnings import warn

logger = logging.getLogger(__name__)



def baseline_path(app: Sphinx) -> Path | None:
    configured = get_config(app.config).status_baseline
    if not configured:
        return None
    return (Path(app.srcdir) / configured).resolve()


def _is_own_output(app: Sphinx, path: Path) -> bool:
    outdir = Path(app.outdir).resolve()
    status_json = get_config(app.config).status_json
    return path == outdir or (status_json is not None and path == outdir / status_json)


def get_baseline(app: Sphinx) -> StatusReport | None:
    """The baseline report, or None (a missing or bad file warns once and is ignored)."""
    cached = build_state(app).baseline
    if cached is not False:
        return cached
    report = None
    path = baseline_path(app)
    if path is not None and _is_own_output(app, path):
        # each build rewrites that file, so every page would change on every build
        warn(logger, f"gpu_status_baseline ignored: {path} is this build's own output; "
                     "copy a build's execution-status.json elsewhere (for example into "
                     "_static/) to compare against it", "baseline")
    elif path is not None:
        try:
            report = read_status(path)
        except (SchemaError, OSError) as error:
            warn(logger, f"gpu_status_baseline ignored, the page renders without "
                         f"comparison: {error}", "baseline")
    build_state(app).baseline = report
    return report



def thresholds(app: Sphinx) -> Thresholds:
    return Thresholds.from_config(get_config(app.config))
