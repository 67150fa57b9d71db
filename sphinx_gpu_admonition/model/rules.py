"""The vocabulary of findings: the rule names, which rules are hints or notes, and the
:class:`Flag` a rule gives a cell (or the build) with the facts it found.

A flag holds no sentence: the views write the reason and the action from the rule and
its facts (:mod:`..render.finding_text`), through the engine's translator, so the
status page of a translated book says them in its language and the JSON and the
command line in English.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple


class Rule(str, enum.Enum):
    """A flagging rule's name, as the JSON, the JUnit file and the page's classes say it."""

    # why a cell is slow
    SLOW = "slow"
    SHARE = "share"
    REGRESSION = "regression"
    # hints at the cause
    COMPILE = "compile"
    RECOMPILE = "recompile"
    COMPILED_AGAIN = "compiled_again"
    SEQUENTIAL_LOOP = "sequential_loop"
    #: a Python loop of many small JAX dispatches (jitted calls, operations one by one)
    DISPATCH_LOOP = "dispatch_loop"
    #: a Python loop that copies a device value to the host on every iteration
    HOST_SYNC = "host_sync"
    FLOAT64 = "float64"
    #: the whole build's: a CI build compiling without a persistent cache
    COMPILATION_CACHE = "compilation_cache"
    # notes: shown with the cell, never warned about
    SLOW_OK = "slow_ok"
    IMPORTS = "imports"
    #: a Python loop that would be a ``dispatch_loop`` or ``host_sync`` hint on a GPU,
    #: in a build that ran on a CPU (where a dispatch launches no device kernel)
    PYTHON_LOOP = "python_loop"

    # a plain string wherever it is written (f-strings, str(), JSON), on every Python
    __str__ = str.__str__
    __format__ = str.__format__


HINT_RULES = (Rule.COMPILE, Rule.RECOMPILE, Rule.COMPILED_AGAIN, Rule.SEQUENTIAL_LOOP,
              Rule.DISPATCH_LOOP, Rule.HOST_SYNC, Rule.FLOAT64, Rule.COMPILATION_CACHE)
#: the rules a lecture lives with (:func:`.analysis.lecture_cell_rules`): a slow cell
#: tagged ``slow-ok`` (slow on purpose) and an import cell past the slow limit are
#: shown, but never warned about, so they never fail a ``-W`` build; so is a Python
#: loop around JAX on a CPU build (what it would cost on a GPU)
NOTE_RULES = (Rule.SLOW_OK, Rule.IMPORTS, Rule.PYTHON_LOOP)
#: the rules about compiling again, whose action says how to learn JAX's reason
RECOMPILATION_RULES = (Rule.RECOMPILE, Rule.COMPILED_AGAIN)
#: the findings show the action of the most specific rule a cell has: a hint names a
#: cause, so its action comes before "profile the cell"; a loop that syncs every
#: iteration before one that only dispatches (keeping the values on the device in a
#: ``lax.while_loop`` answers both)
ACTION_ORDER = (Rule.SEQUENTIAL_LOOP, Rule.HOST_SYNC, Rule.DISPATCH_LOOP, Rule.RECOMPILE,
                Rule.COMPILED_AGAIN, Rule.COMPILE, Rule.FLOAT64, Rule.COMPILATION_CACHE,
                Rule.REGRESSION, Rule.PYTHON_LOOP, Rule.SLOW, Rule.SHARE, Rule.IMPORTS)


class Flag(NamedTuple):
    """Why a cell (or the build) is flagged: the rule and what it found.

    ``facts`` is plain data (numbers, names, and lists or mappings of them) that the
    rule's sentences need, each rule's keys documented in
    :mod:`..render.finding_text` beside its words.
    """

    rule: Rule
    facts: dict[str, Any]

    @property
    def is_hint(self) -> bool:
        return self.rule in HINT_RULES

    @property
    def is_note(self) -> bool:
        """Shown with the cell, never warned about (:data:`NOTE_RULES`)."""
        return self.rule in NOTE_RULES


def action_rule(flags: tuple[Flag, ...] | list[Flag]) -> Flag | None:
    """The flag whose action the findings show: that of the most specific rule among
    ``flags`` (:data:`ACTION_ORDER`); None when none has an action (a ``slow-ok`` cell)."""
    by_rule = {flag.rule: flag for flag in flags}
    return next((by_rule[rule] for rule in ACTION_ORDER if rule in by_rule), None)
