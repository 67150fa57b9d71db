"""``probe/probe_file.py``: the probe's file moves to a high descriptor and reopens when closed
or replaced."""

from __future__ import annotations

from pathlib import Path

from sphinx_gpu_admonition.probe import probe_file


# -- the probe's file, in this process ---------------------------------------------------
def test_the_file_moves_high_and_reopens_when_closed_or_replaced(tmp_path: Path) -> None:
    import os

    path = tmp_path / "probe.jsonl"
    output = probe_file.ProbeFile(str(path))
    fd = output._fd
    assert fd > 100 and not os.get_inheritable(fd)
    assert output.write(b"one\n")
    os.close(fd)
    assert output.write(b"two\n")
    other = tmp_path / "user.csv"
    with open(other, "w") as user:
        os.dup2(user.fileno(), output._fd)
        assert output.write(b"three\n")
    assert path.read_text() == "one\ntwo\nthree\n" and other.read_text() == ""
    os.close(output._fd)
    os.rename(path, tmp_path / "away")
    os.mkdir(path)
    assert not output.write(b"lost\n")
    assert (output.lost_lines, output.lost_reason.split(":")[0]) == (1, "IsADirectoryError")
