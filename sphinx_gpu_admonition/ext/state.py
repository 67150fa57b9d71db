"""All the state the Sphinx adapter keeps, in two places with two lifetimes.

* :class:`BuildState`: one object on the application, for this build of the main
  process (never pickled; a ``-j`` worker inherits a copy when it forks).  Every
  field says who writes it and when it is reset, so the lifetimes are readable in
  one place instead of in eleven attributes set by seven modules.
* :func:`env_data`: per-document data on the build environment (pickled with it,
  merged for ``-j``); each owner clears and merges its own attribute in its
  ``EnvironmentCollector``.

Also the application behind an environment (:func:`app_of`), which post-transforms
need and Sphinx 9 no longer hands them.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # types only: importing this module costs no Sphinx import
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

T = TypeVar("T")

_STATE_ATTRIBUTE = "_gpu_admonition_state"


@dataclasses.dataclass
class BuildState:
    """What the extension knows of the build in progress (main process)."""

    # -- reading (ext.outcome, ext.support): set at env-before-read-docs ---------------
    #: the process that reads serially (None: unknown, every reader backs its records up)
    main_pid: int | None = None
    #: the documents this build set out to read
    to_read: set[str] = dataclasses.field(default_factory=set)
    #: the notebook documents whose records this build stored
    read: set[str] = dataclasses.field(default_factory=set)
    #: a document that had a record was re-read or removed (env-purge-doc)
    purged_records: bool = False

    # -- the options (ext.config) ------------------------------------------------------
    #: the validated ``gpu_*`` options (a ``GpuConfig``), set at config-inited
    config: Any = None

    # -- warnings (ext.warnings): for the status file ------------------------------------
    #: the extension's warnings shown outside the reading of a document, in order
    warnings: list[Any] = dataclasses.field(default_factory=list)
    #: between env-before-read-docs and env-updated (a reader's warnings are its
    #: document's, kept on the environment)
    reading: bool = False
    #: how many of :attr:`warnings` came before the documents' (set at env-updated)
    reading_warnings_at: int | None = None

    # -- capture (ext.capture) ---------------------------------------------------------
    #: the kernel environment variables as they were before builder-inited changed
    #: them, restored at build-finished; None while capture is off
    saved_environ: dict[str, str | None] | None = None

    # -- calibration (ext.calibration) -------------------------------------------------
    #: the build's calibration, made once when the reports first ask for it
    calibration: dict[str, Any] | None = None
    #: the sampler thread while documents are read (a forked worker starts its own)
    sampler: Any = None

    # -- the build's one analysis (ext.status_page) ------------------------------------
    #: made once the records are final (env-updated), forgotten when they change
    analysis: Any = None
    #: the ``gpu_status_baseline`` as read once (a ``model.judging.LoadedBaseline``;
    #: ``False``: not read yet)
    baseline: Any = False

    # -- run times for readers (ext.runtime) -------------------------------------------
    #: the ``gpu_runtime_sources`` builds, read once
    runtime_sources: list[Any] | None = None
    #: documents re-read since the last env-get-outdated
    runtime_reread: set[str] = dataclasses.field(default_factory=set)

    # -- timing claims (ext.claims) ----------------------------------------------------
    #: the book's claims checked once the records are final (env-updated), with the
    #: builds they were checked against (a ``BookClaims``); forgotten at env-get-outdated
    claims: Any = None


def build_state(app: Sphinx) -> BuildState:
    """This application's :class:`BuildState`, created the first time."""
    state = app.__dict__.get(_STATE_ATTRIBUTE)
    if state is None:
        state = BuildState()
        setattr(app, _STATE_ATTRIBUTE, state)
    return state


def env_data(env: BuildEnvironment, attribute: str, factory: Callable[[], T]) -> T:
    """``env.<attribute>``, created with ``factory()`` the first time.

    Plain containers or the model's records only, so the environment pickles and
    ``-j N`` merges work.
    """
    value: Any = getattr(env, attribute, None)
    if value is None:
        value = factory()
        setattr(env, attribute, value)
    return value


# -- the application behind an environment (for post-transforms) ------------------
_APPS: weakref.WeakKeyDictionary[BuildEnvironment, Sphinx] = weakref.WeakKeyDictionary()


def remember_app(app: Sphinx) -> None:
    """Called at builder-inited, before any post-transform can ask :func:`app_of`."""
    _APPS[app.env] = app


def app_of(env: BuildEnvironment) -> Sphinx:
    """The application building ``env`` (Sphinx 9 deprecates ``SphinxTransform.app``)."""
    return _APPS[env]
