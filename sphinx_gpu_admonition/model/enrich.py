"""What a page says about its executed cells, for every engine: one record builder.

An engine's adapter reads the probe's cells into a :class:`~.record.NotebookRecord`,
maps its own tree (MyST-NB's doctree, mystmd's mdast) to a list of :class:`PageCell`
and calls :func:`enrich`, which sets everything derived from the page: each cell's
position, anchor index and line, the ``slow-ok`` tag, import-only and shell cells,
the loops a cell runs through the user's functions, device twins, the functions the
notebook defines, the errors a cell may raise, the failing cell with its message,
and the named timings (``time:NAME`` tags, the timers the cells printed:
:mod:`.timings`). A rule added here is on every engine at once.

It works in two steps. :func:`page_facts` derives everything the page says, from the
page alone, into :class:`PageFacts` (plain model data): the expensive part, the parse
of the notebook's code included. The engines keep it with the page's sidecar
(:mod:`.derivations`, keyed by a digest of the page's cells, the local modules read and
this code), so that a rebuild of an unchanged page derives nothing again. Then
:func:`enrich` sets the facts on the record by their names and applies the rules that
need the execution too (which cells' errors were expected, the failing cell); it sees
no page cell but for the named timings, which are the execution's times (cheap: no
parse), so whatever else it takes from the page is kept by construction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .analysis import is_imports_only, is_shell_or_magic
from .derivations import Kept, kept_or_derived
from .exceptions import exception_line
from .record import (
    ERROR,
    KERNEL_DIED,
    OK,
    SLOW_OK_TAG,
    TIMEOUT,
    CellRecord,
    DispatchLoop,
    ErrorInfo,
    JitCall,
    LoopCall,
    NotebookRecord,
    WorkLine,
    cell_positions,
)
from .schema import Loadable, model_class
from .timings import page_timings

if TYPE_CHECKING:
    from .code import NotebookCode

#: the cell tag (MyST-NB's and mystmd's) of a cell that may raise
RAISES_EXCEPTION_TAG = "raises-exception"


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
    #: (:func:`.cell_lines.code_start_line`; None: not known)
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


@model_class
class CellFacts(Loadable):
    """What the page says about one of its code cells (a :class:`PageCell`), derived
    once per version of the page (:func:`page_facts`). A field named as a field of
    :class:`~.record.CellRecord` (but ``position``) is set on the executed cell at the
    same position; the others are what the record's own rules need (:func:`enrich`)."""

    #: its place among the cells that ran (:attr:`PageCell.position`), never copied:
    #: the executed cell has its own, by which the facts are found
    position: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    index: int | None = None
    line: int | None = None
    code_line: int | None = None
    slow_ok: bool = False
    imports_only: bool = False
    shell: bool = False
    device_twins: list[str] = dataclasses.field(default_factory=list)
    runs: list[LoopCall] = dataclasses.field(default_factory=list)
    dispatch_loops: list[DispatchLoop] = dataclasses.field(default_factory=list)
    jit_calls: list[JitCall] = dataclasses.field(default_factory=list)
    work: WorkLine | None = None
    #: tagged ``raises-exception`` (:attr:`PageCell.raises`)
    raises: bool = False
    #: the cell has code (an empty one does not run)
    has_code: bool = False
    traceback: str | None = None


@model_class
class PageFacts(Loadable):
    """Everything :func:`enrich` takes from the page: each code cell's facts in page
    order, and the notebook's (a field named as a field of
    :class:`~.record.NotebookRecord` is set on the record)."""

    code_cells: list[CellFacts] = dataclasses.field(default_factory=list)
    #: the functions the notebook's code defines (None: no cell ran)
    user_functions: list[str] | None = None
    #: what could not be derived (a hint less; the record stands)
    warnings: list[str] = dataclasses.field(default_factory=list)


def _copied(facts: type, model: type, left_out: frozenset[str] = frozenset()) -> tuple[str, ...]:
    names = {field.name for field in dataclasses.fields(model)}
    return tuple(field.name for field in dataclasses.fields(facts)
                 if field.name in names and field.name not in left_out)


#: the facts set on an executed cell and on the record, by their names
_CELL_FIELDS = _copied(CellFacts, CellRecord, frozenset({"position"}))
_RECORD_FIELDS = _copied(PageFacts, NotebookRecord)
#: the facts of an executed cell that the page does not show
_NO_FACTS = CellFacts()


def page_facts(cells: Sequence[PageCell],
               module_source: Callable[[str], str | None] | None = None) -> PageFacts:
    """What the page ``cells`` say, with ``module_source`` as for :func:`enrich`."""
    facts = PageFacts(code_cells=[CellFacts(
        position=cell.position, index=cell.index, line=cell.line, code_line=cell.code_line,
        slow_ok=SLOW_OK_TAG in cell.tags, imports_only=is_imports_only(cell.source),
        shell=is_shell_or_magic(cell.source), raises=cell.raises,
        has_code=bool(cell.source.strip()), traceback=cell.traceback) for cell in cells])
    _link(facts, cells, module_source)
    return facts


def enrich(record: NotebookRecord, cells: Sequence[PageCell],
           module_source: Callable[[str], str | None] | None = None, *,
           errors_allowed: bool = False, traceback: str | None = None,
           kept: Kept | None = None) -> list[str]:
    """Set on ``record`` (its cells as the kernel ran them) what the page ``cells``
    say; returns warnings (a hint that could not be derived: the record stands).

    ``module_source`` gives the text of a local module by name, for the loops of the
    functions a notebook imports from one; ``errors_allowed``: every cell may raise
    (MyST-NB's ``nb_execution_allow_errors``); ``traceback``: the engine's text of the
    execution's failure (else the failing cell's error output on the page is read).
    The status of a record whose engine gave none (``ok``) becomes ``error`` when a
    cell raised unexpectedly. ``kept``: the page's facts saved with the sidecar
    (:mod:`.derivations`), taken when the page, its local modules and this code are
    those they were derived from, else derived again and kept there.
    """
    if not record.cells and record.status not in (ERROR, TIMEOUT, KERNEL_DIED):
        return []  # nothing ran that the page could describe, and nothing failed
    facts = kept_or_derived(PageFacts, cells,
                            lambda source: page_facts(cells, source), module_source, kept)
    by_position = {cell.position: cell for cell in facts.code_cells
                   if cell.position is not None}
    # the positions the probe's reader gave (a cell it could not record shifts none), or
    # for a record without them (an older sidecar) its cells' order
    positions = ([cell.position for cell in record.cells]
                 if all(cell.position is not None for cell in record.cells)
                 else cell_positions(record.cells))
    for cell, position in zip(record.cells, positions, strict=True):
        _mark(cell, position, by_position.get(position, _NO_FACTS), errors_allowed)
    if record.cells:
        for name in _RECORD_FIELDS:
            setattr(record, name, _copy(getattr(facts, name)))
    _set_failure(record, facts.code_cells, by_position, traceback)
    record.timings = page_timings(_in_page_order(cells), record)
    return list(facts.warnings) if record.cells else []


def _in_page_order(cells: Sequence[PageCell]) -> list[PageCell]:
    """The cells as :func:`.timings.page_timings` places them: by their place among all
    the page's cells, Markdown ones included (the engine's index), which the sentences
    of a notebook's Markdown cells are placed by too (a text page places both by
    line)."""
    return [cell._replace(position=cell.index) for cell in cells]


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _mark(cell: CellRecord, position: int, facts: CellFacts, errors_allowed: bool) -> None:
    cell.position = position
    for name in _CELL_FIELDS:
        setattr(cell, name, _copy(getattr(facts, name)))
    cell.error_expected = cell.error is not None and (errors_allowed or facts.raises)


def read_code(cells: Sequence[tuple[int, str]],
              module_source: Callable[[str], str | None] | None) -> NotebookCode:
    """:func:`.code.read_code`, imported when a page's facts are derived: a cache hit
    whose facts are kept (a mystmd plugin call per page) never loads the code reader."""
    from .code import read_code as read

    return read(cells, module_source)


def _link(facts: PageFacts, cells: Sequence[PageCell],
          module_source: Callable[[str], str | None] | None) -> None:
    """What each cell's code runs (:func:`.code.read_code`: the JAX loops through the
    functions it calls, its Python loops around JAX, its jitted functions, its device
    twins, the statement doing its work) and the notebook's functions, from the code of
    the cells that ran, in their order."""
    ran = sorted(((cell.position, cell.source) for cell in cells if cell.position is not None),
                 key=lambda item: item[0])
    if not ran:  # nothing ran: nothing to link
        return
    try:
        code = read_code(ran, module_source)
    except Exception as error:  # a hint less; the record (its times, failure) is kept
        facts.warnings.append(f"could not follow the notebook's calls to its loops: "
                              f"{type(error).__name__}: {error}")
        return
    facts.user_functions = list(code.user_functions)
    for cell in facts.code_cells:
        found = code.cells.get(cell.position) if cell.position is not None else None
        if found is not None:
            cell.runs, cell.dispatch_loops, cell.jit_calls = (
                list(found.runs), list(found.dispatch_loops), list(found.jit_calls))
            cell.work, cell.device_twins = found.work, list(found.device_twins)


def failing_cell(record: NotebookRecord) -> CellRecord | None:
    """The cell that stopped the notebook: the first that raised unexpectedly (a cell
    tagged ``raises-exception`` before it raised on purpose)."""
    return next((cell for cell in record.cells if cell.error and not cell.error_expected), None)


def _set_failure(record: NotebookRecord, cells: Sequence[CellFacts],
                 by_position: dict[int, CellFacts], traceback: str | None) -> None:
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


def _next_cell(record: NotebookRecord, cells: Sequence[CellFacts],
               failing: CellRecord | None) -> int | None:
    """The index of the page's first code cell with code after the last cell that
    finished: the cell the kernel was running when it died or timed out."""
    done = {cell.index for cell in record.cells if cell.index is not None
            and cell is not failing}
    last = max(done, default=-1)
    return next((cell.index for cell in cells if cell.index is not None
                 and cell.index > last and cell.index not in done and cell.has_code),
                None)
