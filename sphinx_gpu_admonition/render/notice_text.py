"""The ``{gpu}`` notice's texts, for every engine: its title, its claim about the
lecture, the Colab sentence and the "executed on" line.

Each function takes the engine's ``translate`` (the Sphinx extension passes its
catalog's, the mystmd plugin the same catalog read with :mod:`gettext`); without
one the texts are English.  The literal arguments of the ``translate(...)`` calls
are extracted into the message catalog (``python -m sphinx_gpu_admonition.ext.i18n``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..model.device import device_with_jax, is_gpu
from ..model.record import NotebookRecord
from .labels import Translate, english

#: Class of the notice's first paragraph: an engine makes it truthful once the page ran
#: (:meth:`Texts.written_for_gpu` instead of :meth:`Texts.intro`)
INTRO_CLASS = "gpu-notice-intro"


def default_title(translate: Translate = english) -> str:
    return translate("GPU")


def intro_text(kind: str, translate: Translate = english) -> str:
    """The notice's claim about the lecture (the machine it was built on)."""
    if kind == "required":
        return translate(
            "This lecture was built using a machine with access to a GPU and needs "
            "one to run in a reasonable amount of time."
        )
    return translate(
        "This lecture was built using a machine with access to a GPU, although "
        "it will also run without one."
    )


def written_for_gpu_text(kind: str, translate: Translate = english) -> str:
    """The first sentence instead of :func:`intro_text` for a copy that ran without a
    GPU (known once the page has run)."""
    if kind == "required":
        return translate("This lecture was written for a GPU and needs one to run in a "
                         "reasonable amount of time.")
    return translate("This lecture was written for a GPU, although it will also run "
                     "without one.")


def colab_sentence(with_steps: bool, translate: Translate = english) -> str:
    """The Colab sentence, ``{colab}`` where the link named "Google Colab" goes."""
    if not with_steps:
        # Translators: keep {colab}, it becomes a link named "Google Colab".
        return translate("{colab} has a free tier with GPUs.")
    # Translators: keep {colab}, it becomes a link named "Google Colab".
    return translate("{colab} has a free tier with GPUs that you can access as follows:")


def open_in_colab(translate: Translate = english) -> str:
    return translate("Open this notebook in Colab")


def device_sentence(record: NotebookRecord) -> str:
    """``"GPU: NVIDIA H200 (JAX 0.10.2)"`` or ``"CPU: AMD EPYC 7763, 4 cores"``."""
    return device_with_jax(record.environment)


def ran_on_gpu(record: NotebookRecord) -> bool:
    return is_gpu(record.environment.backend)


def claims_gpu_machine(record: NotebookRecord) -> bool:
    """Whether the notice may keep its claim that the lecture was built on a machine
    with a GPU: the page ran on one, or nothing at all was measured (no capture: the
    author's sentence stands). A page whose kernel ran but could not be measured
    (capture failed) falls back to :func:`written_for_gpu_text`, which claims nothing
    about the build's machine."""
    if record.capture == "missing":
        return True
    return record.measured and ran_on_gpu(record)


def executed_on_sentence(record: NotebookRecord, translate: Translate = english) -> str:
    if ran_on_gpu(record):
        return translate("This page was executed on %s.") % device_sentence(record)
    return translate("This page was executed on %s, not on a GPU.") % device_sentence(record)


class Texts(NamedTuple):
    """The notice's texts through one translator, as an engine uses them:
    ``Texts(translate).intro("required")``."""

    translate: Translate = english

    def title(self) -> str:
        return default_title(self.translate)

    def intro(self, kind: str) -> str:
        return intro_text(kind, self.translate)

    def written_for_gpu(self, kind: str) -> str:
        return written_for_gpu_text(kind, self.translate)

    def colab(self, with_steps: bool) -> str:
        return colab_sentence(with_steps, self.translate)

    def open_in_colab(self) -> str:
        return open_in_colab(self.translate)

    def executed_on(self, record: NotebookRecord) -> str:
        return executed_on_sentence(record, self.translate)
