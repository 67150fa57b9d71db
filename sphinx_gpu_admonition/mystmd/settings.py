"""The plugin's settings, from the book's ``myst.yml``::

    project:
      options:
        gpu_admonition:
          expected_backend: cpu
          slow_cell_seconds: 30
          language: zh_CN

mystmd 1.8.3 passes an executable plugin no options (a ``project: plugins:``
entry keeps only ``type`` and ``path``), and an unknown key in ``myst.yml`` warns
("extra key ignored"), which fails ``myst build --strict``; ``project: options:``
is mystmd's own free mapping, so the plugin reads its settings there, from the
``myst.yml`` of the folder ``myst`` runs in (the plugin's working directory).

The names and validators are the Sphinx options' own (:mod:`..model.settings`,
without the ``gpu_`` prefix), for those that mean something on mystmd
(:data:`USED`); ``language`` is the plugin's (Sphinx has its own). A bad value
warns and its default applies; an option that does nothing on mystmd warns too.
"""

from __future__ import annotations

import copy
import dataclasses
import gettext
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model.analysis import Thresholds
from ..model.files import repository_path
from ..model.judging import Rules
from ..model.settings import PREFIX, GpuConfig, options, validate
from ..model.timing_record import ClaimRules
from ..render.labels import NGettext, Translate, english, english_plural

CONFIG_FILE = "myst.yml"
KEY = "gpu_admonition"
LANGUAGE = "language"
#: the package's message catalogs (the Sphinx extension's too)
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
CATALOG = "sphinx_gpu_admonition"
#: the Sphinx options that mean something on mystmd
USED = ("expected_backend", "colab_url", "slow_cell_seconds", "slow_cell_share",
        "slow_cell_min_seconds", "compile_share", "recompile_threshold", "warn_slow_cells",
        "explain_recompilations", "publish_interpreter_path",
        "status_baseline", "regression_ratio", "warn_regressions", "runtime_sources",
        "admonition_runtime", "notebook_budget_seconds", "cell_badges",
        "claim_much_factor", "claim_similar_factor", "claim_margin")


@dataclasses.dataclass(frozen=True)
class Settings:
    config: GpuConfig = GpuConfig()
    #: the texts' language (None: English)
    language: str | None = None
    translate: Translate = english
    ngettext: NGettext = english_plural

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds.from_config(self.config)

    @property
    def rules(self) -> Rules:
        """The rule settings the status file keeps."""
        return Rules(warn_slow_cells=self.config.warn_slow_cells,
                     warn_regressions=self.config.warn_regressions,
                     expected_backend=self.config.expected_backend)

    def baseline_path(self, folder: Path | None = None) -> Path | None:
        """``status_baseline``, relative to the book's folder (where ``myst`` runs)."""
        configured = self.config.status_baseline
        return (folder or Path.cwd()).joinpath(configured).resolve() if configured else None

    def runtime_sources(self, folder: Path | None = None) -> list[tuple[str, Path]]:
        """(configured value, absolute path) of each ``runtime_sources`` entry."""
        return [(configured, (folder or Path.cwd()).joinpath(configured).resolve())
                for configured in self.config.runtime_sources]

    @property
    def claim_rules(self) -> ClaimRules:
        return ClaimRules.from_config(self.config)

    @property
    def expected_backend(self) -> str | None:
        return self.config.expected_backend

    @property
    def colab_url(self) -> str | None:
        return self.config.colab_url


DEFAULTS = Settings()


def languages() -> list[str]:
    """The languages the package has a catalog for (English needs none)."""
    return sorted(path.parents[1].name
                  for path in LOCALE_DIR.glob(f"*/LC_MESSAGES/{CATALOG}.mo"))


def translator(language: str) -> gettext.NullTranslations:
    return gettext.translation(CATALOG, str(LOCALE_DIR), languages=[language], fallback=True)


#: what :func:`parsed_file` read, by path and the file's state (its version)
_PARSED: dict[tuple[str, str], tuple[tuple[int, int, int], Any]] = {}


def parsed_file(path: Path, parse: Callable[[Path], Any], kind: str) -> Any:
    """``parse(path)``, read again only when the file changed (its inode, size or
    modification time): the ``.mjs`` plugin's server answers a build's every transform,
    each of which reads ``myst.yml`` and the pages' front matter (a book of P pages: P²
    front matters a build); a process of one call reads each once anyway. The result is
    a copy (a caller may change it)."""
    try:
        info = path.stat()
        version = (info.st_ino, info.st_size, info.st_mtime_ns)
    except OSError:
        return parse(path)
    key = (kind, str(path.absolute()))
    kept = _PARSED.get(key)
    if kept is None or kept[0] != version:
        kept = _PARSED[key] = (version, parse(path))
    return copy.deepcopy(kept[1])


def _read(path: Path) -> tuple[Any, str | None]:
    return parsed_file(path, _parse, "settings")


def _parse(path: Path) -> tuple[Any, str | None]:
    import yaml  # PyYAML comes with MyST-NB and jupyter_server (which --execute needs)

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        return None, f"{path.name}: not read ({type(error).__name__}), default settings apply"
    project = data.get("project") if isinstance(data, dict) else None
    found = project.get("options") if isinstance(project, dict) else None
    return (found.get(KEY) if isinstance(found, dict) else None), None


def load(folder: Path | None = None) -> tuple[Settings, list[str]]:
    """The settings of the book in ``folder`` (the working directory) and the
    warnings about them; without ``myst.yml`` or the key, the defaults."""
    path = (folder or Path.cwd()) / CONFIG_FILE
    if not path.is_file():
        return DEFAULTS, []
    raw, problem = _read(path)
    if problem:
        return DEFAULTS, [problem]
    if raw is None:
        return DEFAULTS, []
    where = f"{CONFIG_FILE} project: options: {KEY}"
    if not isinstance(raw, dict):
        return DEFAULTS, [f"{where}: not a mapping ({type(raw).__name__}), default settings "
                          "apply"]
    warnings: list[str] = []
    known = options()
    for name in raw:
        if name == LANGUAGE or name in USED:
            continue
        if str(name).removeprefix(PREFIX) in USED:
            warnings.append(f"{where}: {name!r} is written without the {PREFIX!r} prefix "
                            f"here ({str(name).removeprefix(PREFIX)!r}); ignored")
        elif name in known:
            warnings.append(f"{where}: {name!r} does nothing on mystmd; ignored")
        else:
            warnings.append(f"{where}: unknown setting {name!r}; ignored (known: "
                            f"{', '.join((*USED, LANGUAGE))})")
    # the Sphinx options' own validators: each bad value warns, its default applies
    config = validate({name: raw[name] for name in USED if name in raw},
                      lambda message: warnings.append(
                          f"{where}: {message.replace(f'for {PREFIX}', 'for ', 1)}"))
    language = raw.get(LANGUAGE)
    if language is None or str(language).lower() in ("en", "en_us", "en-us"):
        return Settings(config), warnings
    code = str(language).replace("-", "_")
    if code not in languages():
        warnings.append(f"{where}: no translation for language {language!r} (there are: "
                        f"{', '.join(['en', *languages()])}); the texts are English")
        return Settings(config), warnings
    catalog = translator(code)
    return Settings(config, code, catalog.gettext, catalog.ngettext), warnings


def config_file() -> str:
    """The book's ``myst.yml`` as warnings name it (relative to the repository)."""
    return repository_path(Path.cwd() / CONFIG_FILE)


def once(message: str, folder: Path) -> bool:
    """Whether ``message`` is new in this build: each plugin call (one per page and
    stage) reads the settings again, so a settings warning would repeat for every page.
    The build is the parent ``myst`` process (its pid names the marker): the executable
    plugin's calls are each a process of its own, the ``.mjs`` plugin's one server's,
    children of ``myst`` either way."""
    import hashlib

    marker = folder / "warned" / (f"{os.getppid()}-"
                                  + hashlib.sha1(message.encode()).hexdigest()[:16])
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch(exist_ok=False)
    except FileExistsError:
        return False
    except OSError:
        return True
    return True
