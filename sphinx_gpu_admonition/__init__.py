"""sphinx-gpu-admonition: GPU notices, in-kernel execution capture and status pages.

``setup`` only wires the feature modules together; each module has its own
``setup_*`` function and owns its events, nodes and assets.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

#: Bump when the shape of data stored in the Sphinx environment changes.
#: 6: recompile reasons; 5: compiled loops, device memory; 4: records with new fields
#: (runs, signal, ...); 3: the pages with a status table of a file; 2: the records themselves
ENV_VERSION = 6


def setup(app: Any) -> dict[str, Any]:
    """Wire the Sphinx adapter's features into a build: every ``setup_*`` is called
    here, once, in this order (each connects its own events; the order of this list
    is the order of listeners at equal priority: docs/architecture.md has the table)."""
    from .ext.admonition import setup_admonition
    from .ext.calibration import setup_calibration
    from .ext.capture import setup_capture
    from .ext.cell_badges import setup_cell_badges
    from .ext.changes import setup_changes
    from .ext.claims import setup_claims
    from .ext.config import setup_config
    from .ext.environment_table import setup_environment_table
    from .ext.i18n import setup_i18n
    from .ext.outcome import setup_outcome
    from .ext.page_info import setup_page_info
    from .ext.reports import setup_reports
    from .ext.runtime import setup_runtime
    from .ext.status_page import setup_status_page
    from .ext.support import setup_support
    from .ext.timing_roles import setup_timing_roles
    from .ext.warnings import setup_warnings

    for setup_feature in (
        setup_warnings,          # the build's warnings, kept for the status file
        setup_config,            # config-inited: validate the gpu_* options
        setup_i18n,              # the message catalog
        setup_admonition,        # {gpu}
        setup_capture,           # the probe in every kernel, records from its lines
        setup_outcome,           # what the build read; records of a build that stopped
        setup_page_info,         # the "executed on" box
        setup_support,           # static files, templates
        setup_changes,           # which records changed in this build
        setup_status_page,       # {execution-status}
        setup_cell_badges,       # badges on notebook pages
        setup_environment_table, # {execution-environment}
        setup_calibration,       # the machine's speed while notebooks run
        setup_reports,           # build-finished: JSON, JUnit, console, GitHub
        setup_runtime,           # {runtime} roles
        setup_timing_roles,      # {timing}, {timing-ratio}, {timing-claim}
        setup_claims,            # the pages' texts, the claims checked once a build
    ):
        setup_feature(app)
    return {
        "version": __version__,
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
