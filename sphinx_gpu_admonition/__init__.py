"""sphinx-gpu-admonition: GPU notices, in-kernel execution capture and status pages.

``setup`` only wires the feature modules together; each module has its own
``setup_*`` function and owns its events, nodes and assets.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

#: Bump when the shape of data stored in the Sphinx environment changes.
ENV_VERSION = 3  # 3: the pages with a status table of a file; 2: the records themselves


def setup(app: Any) -> dict[str, Any]:
    from .ext.admonition import setup_admonition
    from .ext.capture import setup_capture
    from .ext.config import setup_config
    from .ext.environment_table import setup_environment_table
    from .ext.i18n import setup_i18n
    from .ext.outcome import setup_outcome
    from .ext.page_info import setup_page_info
    from .ext.reports import setup_reports
    from .ext.runtime import setup_runtime
    from .ext.status_page import setup_status_page

    setup_config(app)
    setup_i18n(app)
    setup_admonition(app)
    setup_capture(app)
    setup_outcome(app)
    setup_page_info(app)
    setup_status_page(app)
    setup_environment_table(app)
    setup_reports(app)
    setup_runtime(app)
    return {
        "version": __version__,
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
