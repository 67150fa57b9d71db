"""``model/formatting.py``: the error message is the line that says what went wrong."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("traceback, expected", [
    # nbclient's timeout message ends with separator lines
    ("A cell timed out while it was being executed, after 2 seconds.\n"
     "The message was: Cell execution timed out.\nHere is a preview of the cell contents:\n"
     "-------------------\n['import time', 'time.sleep(60)']\n-------------------\n",
     "A cell timed out while it was being executed, after 2 seconds."),
    # an exception class not named ...Error, with colours
    ("\x1b[0;31m------\x1b[0m\n\x1b[0;31mBoom\x1b[0m    Traceback (most recent call last)\n"
     "Cell In[2], line 1\n----> 1 raise Boom('x')\n\nBoom: x\n", "Boom: x"),
    ("ZeroDivisionError    Traceback (most recent call last)\n----> 1 1/0\n"
     "ZeroDivisionError: division by zero\n", "ZeroDivisionError: division by zero"),
    # a terminal hyperlink and a right-to-left override leave nothing behind
    ("KeyError: \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ \u202eevil\x07", "KeyError: link evil"),
    ("Kernel died", "Kernel died"),
    ("", ""),
])
def test_error_message_is_the_line_that_says_what_went_wrong(traceback: str,
                                                              expected: str) -> None:
    from sphinx_gpu_admonition.model.formatting import error_message

    assert error_message(traceback) == expected
