"""One bad value loses one value (issue 33, item 5): the kernel's environment is read
tolerantly by both engines' reader (``ProbeOutput.load_environment``), and the probe
bounds what it writes (``protocol.bounded``); a real kernel: tests/integration/test_probe_jax.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.model.probe_output import ProbeOutput, load_environment
from sphinx_gpu_admonition.model.record import Environment, NotebookRecord, StatusReport
from sphinx_gpu_admonition.probe import (
    protocol,
)

HOST = {"cpu": "AMD EPYC 7763", "cores": 4, "memory_gb": 15.6, "os": "Linux 6.8",
        "machine": "x86_64"}


def environment(**changed: Any) -> dict[str, Any]:
    return {"host": dict(HOST), "python": "3.12.7",
            "jax": {"backend": "cpu", "version": "0.10.2",
                    "devices": [{"platform": "cpu", "kind": "cpu", "count": 1}]},
            "gpus": [], "libraries": {"numpy": "2.4.6", "jax": "0.10.2"}, **changed}


def test_a_huge_device_kind_is_cut_and_the_rest_kept() -> None:
    data = environment()
    data["jax"]["devices"][0]["kind"] = "T" * 10_000_000
    loaded, warnings = load_environment(data)
    assert loaded.host.cpu == HOST["cpu"] and loaded.python == "3.12.7"
    assert loaded.jax.backend == "cpu" and loaded.libraries["numpy"] == "2.4.6"
    kind = loaded.jax.devices[0].kind
    assert len(kind) == protocol.TEXT_LENGTH and kind.endswith("…")
    assert warnings == ["the kernel's environment: jax.devices[0].kind: 10000000 characters, "
                        f"cut to {protocol.TEXT_LENGTH}; the rest is kept"]
    assert data["jax"]["devices"][0]["kind"] == "T" * 10_000_000  # the input is not changed


def test_malformed_values_are_dropped_alone_each_with_a_warning_naming_it() -> None:
    data = environment(python=3.12, gpus=[{"name": "Tesla T4"}, {"memory_mb": 3}])
    data["host"]["cores"] = "four"
    data["libraries"]["scipy"] = ["1.14"]
    loaded, warnings = load_environment(data)
    assert (loaded.host.cpu, loaded.host.cores, loaded.python) == (HOST["cpu"], None, None)
    assert [gpu.name for gpu in loaded.gpus] == ["Tesla T4"]
    assert loaded.libraries == {"numpy": "2.4.6", "jax": "0.10.2"}
    named = [warning.split(": ")[1] for warning in warnings]
    assert named == ["host.cores", "python", "gpus[1].name", "libraries['scipy']"]
    assert all(warning.endswith("; the rest is kept") for warning in warnings)


def test_a_bad_environment_does_not_make_a_machine_of_its_own() -> None:
    """``report`` grouped a notebook whose environment was dropped as a second machine."""
    bad = environment()
    bad["jax"]["devices"][0]["kind"] = "T" * 10_000_000
    records = []
    for name, data in (("good", environment()), ("bad", bad)):
        record = NotebookRecord(docname=name, status="ok", capture="ok")
        record.environment = load_environment(data)[0]
        records.append(record)
    assert len(StatusReport(notebooks=records).machines()) == 1


def test_the_reader_keeps_the_warnings_with_the_probes_other_lines() -> None:
    start = {"kind": "start", "pid": 1, "probe_version": protocol.PROBE_VERSION,
             "time": 0.0, "python": "3.12.7", "host": {**HOST, "memory_gb": "lots"},
             "gpus": []}
    output = ProbeOutput(iter([start]))
    loaded = output.load_environment()
    assert isinstance(loaded, Environment) and loaded.host.cores == 4
    assert len(output.warnings) == 1 and "host.memory_gb" in output.warnings[0]
    assert output.capture_state() == ("ok", None)  # a bad value is no broken capture


def test_not_an_object_is_no_environment() -> None:
    assert load_environment(None) == (Environment(), [])
    assert load_environment("x")[1] == ["the kernel's environment was dropped: not an object"]


def test_the_probe_bounds_what_it_writes_and_says_what() -> None:
    notes: list[str] = []
    facts = {"jax": {"devices": [{"platform": "gpu", "kind": "K" * 1000, "count": 2}],
                     "x64": float("nan"), "plugins": {"p": object()}},
             "libraries": {f"lib{n}": "1.0" for n in range(100)}}
    bounded = protocol.bounded(facts, notes)
    json.dumps(bounded, allow_nan=False)  # always a line
    assert len(bounded["jax"]["devices"][0]["kind"]) == protocol.TEXT_LENGTH
    assert bounded["jax"]["devices"][0]["count"] == 2
    assert bounded["jax"]["x64"] is None and bounded["jax"]["plugins"] == {"p": None}
    assert len(bounded["libraries"]) == protocol.ITEMS
    assert notes == [f"jax.devices[0].kind: 1000 characters, cut to {protocol.TEXT_LENGTH}",
                     "jax.x64: nan, dropped", "jax.plugins.p: not a text or number (object), "
                     "dropped", f"libraries: 100 items, cut to {protocol.ITEMS}"]


START = {"kind": "start", "pid": 10, "probe_version": protocol.PROBE_VERSION,
         "time": 0.0, "python": "3.12.0", "host": {}, "gpus": []}


def cell(count: int, seconds: Any, pid: int = 10) -> dict[str, Any]:
    return {"kind": "cell", "pid": pid, "execution_count": count, "seconds": seconds,
            "first_line": f"cell {count}"}


def test_negative_and_non_finite_times_are_dropped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "probe.jsonl"
    lines = [json.dumps(START), json.dumps(cell(1, -1591.06)), json.dumps(cell(2, 0.25)),
             '{"kind": "cell", "pid": 10, "execution_count": 3, "seconds": NaN}',
             json.dumps(cell(4, "1.5"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = probe_output.ProbeOutput(probe_output.probe_lines(path))
    assert [c.execution_count for c in output.cells] == [2]
    assert len(output.warnings) == 2  # cells 1 and 4; the NaN line is not JSON at all
    assert "cell 1" in output.warnings[0] and "-1591.06" in output.warnings[0]
    assert not output.errors  # the capture still worked
