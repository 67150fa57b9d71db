"""model/exceptions.py: a failed cell's message from its traceback, for every engine and
any exception class: IPython pads the class name of its heading to 75 columns and
writes no space at all once the name is 42 characters long; a name with terminal
escapes or invisible characters is written without them in a plain traceback."""

from __future__ import annotations

import sys

import pytest

from sphinx_gpu_admonition.model.exceptions import NBCLIENT_ERROR_LINE, exception_line

NAMES = [("E" * length) + "X" for length in range(0, 200)] + [
    "Boom", "E\x1b[31mX", "E##[error]X", "E\u202eX", "Ütf8Fehler", "A B"]


@pytest.fixture(scope="module")
def shell():
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    return interactive.InteractiveShell.instance()


def traceback_of(shell, name: str, message: str = "it went bang") -> str:
    """The traceback an IPython kernel sends for ``raise <name>(message)`` (its colours
    and padded heading), joined as both engines join it."""
    error = type(name, (Exception,), {})
    try:
        raise error(message)
    except Exception:
        return "\n".join(shell.InteractiveTB.structured_traceback(*sys.exc_info()))


@pytest.mark.parametrize("name", NAMES, ids=lambda name: f"{len(name)}:{name[:3]!r}")
def test_the_message_is_the_exceptions_line_whatever_its_class_name(shell, name):
    text = traceback_of(shell, name)
    for recorded in (name, None):  # with the probe's type, and from the heading alone
        error_type, message = exception_line(text, recorded)
        assert message.endswith(": it went bang"), (recorded, message)
        assert error_type is not None and "\x1b" not in error_type
        assert "Traceback" not in message


def test_nbclients_wrapper_is_no_message_of_the_notebooks(shell):
    text = (f"{NBCLIENT_ERROR_LINE}\n------------------\n1 / 0\n------------------\n\n"
            + traceback_of(shell, "ZeroDivisionError", "division by zero"))
    assert exception_line(text, "ZeroDivisionError") == (
        "ZeroDivisionError", "ZeroDivisionError: division by zero")
    # the kernel sent nothing naming the type: no message rather than nbclient's
    assert exception_line(NBCLIENT_ERROR_LINE, "Boom") == ("Boom", "")


def test_a_module_qualified_class_and_a_text_without_traceback():
    assert exception_line("Traceback...\nmylib.Boom: bad input", "Boom") == (
        "Boom", "mylib.Boom: bad input")
    assert exception_line("ValueError: x", None) == (None, "ValueError: x")
    assert exception_line(None, None) == (None, "")
