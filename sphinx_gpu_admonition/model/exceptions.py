"""A failed cell's exception read from its traceback text, for every engine.

The text is MyST-NB's (nbclient's ``CellExecutionError``: its own line, the cell's
source, then the kernel's traceback) or mystmd's (the cell's error output). Both end
with the kernel's exception line (``Boom: it went bang``); IPython starts them with
a heading that pads the class name to 75 columns, with no space at all once the name
is 42 characters or longer (``<name>Traceback (most recent call last)``).
"""

from __future__ import annotations

import re

from .formatting import MESSAGE_LENGTH, error_message, plain_text
from .probe_output import recorded_text

#: nbclient's own exception line, which MyST-NB's traceback of a failed cell ends with
#: before the cell's source and the kernel's traceback
NBCLIENT_ERROR_LINE = ("nbclient.exceptions.CellExecutionError: "
                       "An error occurred while executing the following cell:")
#: IPython's traceback heading, padded or not: "Boom       Traceback (most recent call last)"
_HEADING = re.compile(r"(?m)^[ \t]*(\S.*?)[ \t]*Traceback \(most recent call last\)")


def _spelled(name: str) -> str:
    """The class name as the plain traceback shows it: without terminal escapes or
    invisible characters, one line."""
    return recorded_text(plain_text(name))


def exception_line(traceback: str | None, error_type: str | None) -> tuple[str | None, str]:
    """(exception type, the line that says what went wrong) of a failed cell, for any
    exception class: ``("Boom", "Boom: it went bang")``.

    ``error_type`` is the type the probe recorded (None without capture data: then the
    heading of IPython's traceback names it). The kernel's traceback ends with that
    type's line (``Boom: ...``, ``mymodule.Boom: ...``); nbclient's own line is no
    message of the notebook's. The type is None when the text does not name one.
    """
    text = plain_text(traceback or "")
    wrapped = NBCLIENT_ERROR_LINE in text
    text = text.replace(NBCLIENT_ERROR_LINE, "")
    names = [_spelled(error_type)] if error_type else []
    names += [name.strip() for name in reversed(_HEADING.findall(text))]
    for name in names:
        if not name:
            continue
        # the recorded type is one line; the kernel wrote the name as it is
        spelled = r"\s+".join(re.escape(part) for part in name.split())
        line = re.compile(rf"(?m)^[ \t]*(?:[\w.]+\.)?{spelled}(?::[^\r\n]*)?[ \t]*$")
        found = line.findall(text)
        if found:
            return name, recorded_text(found[-1])[:MESSAGE_LENGTH]
    recorded = _spelled(error_type) or None if error_type else None
    if wrapped:  # the kernel sent no traceback (or none naming the type)
        return recorded, ""
    return recorded, recorded_text(error_message(text))
