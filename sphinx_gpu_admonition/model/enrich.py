"""What a page says about its executed cells, for every engine: one record builder.

An engine's adapter reads the probe's cells into a :class:`~.record.NotebookRecord`,
maps its own tree (MyST-NB's doctree, mystmd's mdast) to a list of :class:`PageCell`
and calls :func:`enrich`, which sets everything derived from the page: each cell's
position, anchor index and line, the ``slow-ok`` tag, import-only and shell cells,
the loops a cell runs through the user's functions, device twins, the functions the
notebook defines, the errors a cell may raise, the failing cell with its message,
and the named timings (``time:NAME`` tags, the timers the cells printed:
:mod:`.timings`). A rule added here is on every engine at once.

Every derived value is a field of the record (none is kept aside), so that a record
restored for a cache hit can be enriched again from this build's page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .analysis import is_imports_only, is_shell_or_magic
from .code import read_code
from .exceptions import exception_line
from .record import (
    ERROR,
    KERNEL_DIED,
    OK,
    SLOW_OK_TAG,
    TIMEOUT,
    CellRecord,
    ErrorInfo,
    NotebookRecord,
    cell_positions,
)
from .timings import page_timings

#: the cell tag (MyST-NB's and mystmd's) of a cell that may raise
RAISES_EXCEPTION_TAG = "raises-exception"


def code_start_line(source: Sequence[str], fence: int, code: str) -> int | None:
    """The line (from 1) of the first line of ``code`` in a text notebook's lines
    ``source``, whose cell opens at line ``fence`` (```` ```{code-cell} ````): the
    first line after the fence and its options (``:tags: [...]`` lines, a ``---``
    block) that is the code's first line, before the cell's closing fence; None where
    it is not there (or the code starts with an empty line)."""
    first = code.split("\n", 1)[0].rstrip()
    if not first or not 0 < fence <= len(source):
        return None
    opening = source[fence - 1].strip()
    marker = opening[:len(opening) - len(opening.lstrip(opening[:1]))]  # ``` or ~~~~
    for number in range(fence + 1, len(source) + 1):
        line = source[number - 1].rstrip()
        if line == first:
            return number
        if marker and line.strip().startswith(marker) and not line.strip().strip(marker[0]):
            return None  # the cell closed without it
    return None


class PageCell(NamedTuple):
    """One code cell of the page, as the engine's tree shows it."""

    #: its place among the code cells the engine executes, from 0, in the order it
    #: executes them (the kernel's ``In [position + 1]``); None: the engine did not
    #: execute it (skipped, empty, after the cell that stopped the page)
    position: int | None
    #: the engine's own index of the cell (MyST-NB's cell index, mystmd's block
    #: number): the anchor of the cell on its page, never its name
    index: int | None
    source: str
    tags: tuple[str, ...] = ()
    #: the line of the cell's fence in a text notebook (None for an ``.ipynb``)
    line: int | None = None
    #: the line of its code's first line there, after its options
    #: (:func:`code_start_line`; None: not known)
    code_line: int | None = None
    #: the text of the cell's stream and ``text/plain`` outputs, joined (what the cell
    #: printed: a timer's own report, for rules that read it)
    outputs: str = ""
    #: the traceback of the cell's error output, where the page holds one
    traceback: str | None = None

    @property
    def raises(self) -> bool:
        """Tagged ``raises-exception``: its error is expected."""
        return RAISES_EXCEPTION_TAG in self.tags


def enrich(record: NotebookRecord, cells: Sequence[PageCell],
           module_source: Callable[[str], str | None] | None = None, *,
           errors_allowed: bool = False, traceback: str | None = None) -> list[str]:
    """Set on ``record`` (its cells as the kernel ran them) what the page ``cells``
    say; returns warnings (a hint that could not be derived: the record stands).

    ``module_source`` gives the text of a local module by name, for the loops of the
    functions a notebook imports from one; ``errors_allowed``: every cell may raise
    (MyST-NB's ``nb_execution_allow_errors``); ``traceback``: the engine's text of the
    execution's failure (else the failing cell's error output on the page is read).
    The status of a record whose engine gave none (``ok``) becomes ``error`` when a
    cell raised unexpectedly.
    """
    by_position = {cell.position: cell for cell in cells if cell.position is not None}
    # the positions the probe's reader gave (a cell it could not record shifts none), or
    # for a record without them (an older sidecar) its cells' order
    positions = ([cell.position for cell in record.cells]
                 if all(cell.position is not None for cell in record.cells)
                 else cell_positions(record.cells))
    for cell, position in zip(record.cells, positions, strict=True):
        _mark(cell, position, by_position.get(position), errors_allowed)
    warnings = _link(record, cells, module_source)
    _set_failure(record, cells, by_position, traceback)
    record.timings = page_timings(_in_page_order(cells), record)[0]
    return warnings


def _in_page_order(cells: Sequence[PageCell]) -> list[PageCell]:
    """The cells as :func:`.timings.page_timings` places them: by their place among all
    the page's cells, Markdown ones included (the engine's index), which the sentences
    of a notebook's Markdown cells are placed by too (a text page places both by
    line)."""
    return [cell._replace(position=cell.index) for cell in cells]


def _mark(cell: CellRecord, position: int, page: PageCell | None,
          errors_allowed: bool) -> None:
    cell.position = position
    source = page.source if page is not None else ""
    cell.index = page.index if page is not None else None
    cell.line = page.line if page is not None else None
    cell.code_line = page.code_line if page is not None else None
    cell.slow_ok = page is not None and SLOW_OK_TAG in page.tags
    cell.imports_only = is_imports_only(source)
    cell.shell = is_shell_or_magic(source)
    cell.error_expected = cell.error is not None and (
        errors_allowed or (page is not None and page.raises))


def _link(record: NotebookRecord, cells: Sequence[PageCell],
          module_source: Callable[[str], str | None] | None) -> list[str]:
    """What each cell's code runs (:func:`.code.read_code`: the JAX loops through the
    functions it calls, its Python loops around JAX, its jitted functions, its device
    twins, the statement doing its work) and the notebook's functions, from the code of
    the cells that ran, in their order."""
    ran = sorted(((cell.position, cell.source) for cell in cells if cell.position is not None),
                 key=lambda item: item[0])
    if not ran or not record.cells:  # nothing ran in this build's record: nothing to link
        return []
    try:
        code = read_code(ran, module_source)
    except Exception as error:  # a hint less; the record (its times, failure) is kept
        return [f"could not follow the notebook's calls to its loops: "
                f"{type(error).__name__}: {error}"]
    code.fill(record)
    return []


def failing_cell(record: NotebookRecord) -> CellRecord | None:
    """The cell that stopped the notebook: the first that raised unexpectedly (a cell
    tagged ``raises-exception`` before it raised on purpose)."""
    return next((cell for cell in record.cells if cell.error and not cell.error_expected), None)


def _set_failure(record: NotebookRecord, cells: Sequence[PageCell],
                 by_position: dict[int, PageCell], traceback: str | None) -> None:
    failing = failing_cell(record)
    if record.status == OK and failing is not None:
        record.status = ERROR  # an engine that reports no failure of its own (mystmd)
    if record.status == ERROR and record.error is None:
        record.error = ErrorInfo(type=(failing.error if failing else None) or "Error")
    error = record.error
    if error is None or record.status not in (ERROR, TIMEOUT, KERNEL_DIED):
        return
    if record.status == ERROR:  # the cell's own exception, not the engine's wrapper
        page = by_position.get(failing.position) if failing and failing.position is not None \
            else None
        own_type, error.message = exception_line(
            traceback if traceback is not None else page.traceback if page else None,
            failing.error if failing else None)
        error.type = own_type or error.type
    if failing is not None and (failing.index is not None or record.status == ERROR):
        error.cell_index, error.execution_count = failing.index, failing.execution_count
        return
    # a kernel that died (or stopped) in a cell the page shows, not a cell that raised
    error.cell_index = _next_cell(record, cells, failing)
    if failing is not None:
        failing.index = error.cell_index
        error.execution_count = failing.execution_count


def _next_cell(record: NotebookRecord, cells: Sequence[PageCell],
               failing: CellRecord | None) -> int | None:
    """The index of the page's first code cell with code after the last cell that
    finished: the cell the kernel was running when it died or timed out."""
    done = {cell.index for cell in record.cells if cell.index is not None
            and cell is not failing}
    last = max(done, default=-1)
    return next((cell.index for cell in cells if cell.index is not None
                 and cell.index > last and cell.index not in done and cell.source.strip()),
                None)
