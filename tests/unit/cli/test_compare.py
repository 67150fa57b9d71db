"""The ``compare`` command (``cli/compare.py``): device changes cell by cell, the regression ratio,
the machine factor (a uniformly slower machine is no regression; a change of backend is never
excused)."""

from __future__ import annotations

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from unit.cli.test_report import incident_report


def test_compare_renderers_show_the_device_change_cell_by_cell():
    from sphinx_gpu_admonition.cli.compare import render_compare_markdown, render_compare_text

    data = cli.summarise_compare(incident_report("cpu"), incident_report("gpu-t4"),
                                 cli.CompareOptions("cpu.json", "gpu.json"))
    assert data["summary"]["text"].startswith("GPU build is ")
    assert " slower than CPU build overall" in data["summary"]["text"]
    assert [row["cell"] for row in data["cells"]] == ["cell 2", "cell 1"]  # largest change
    (notebook,) = data["notebooks"]
    assert (notebook["a_device"], notebook["b_device"]) == ("CPU: unknown CPU", "GPU: Tesla T4")
    text = render_compare_text(data, cli.Style(True))
    assert text[0] == "\x1b[1mCompare\x1b[0m"  # colour when asked
    machines = text[text.index("\x1b[1mMachines\x1b[0m") + 1]
    assert "A " in machines and "B " in machines  # both builds' machines, named
    markdown = render_compare_markdown(data)
    assert markdown[0] == "### " + cli.md_text(data["summary"]["text"])
    assert "<details><summary>Machines</summary>" in markdown


# -- the machine factor (noise-aware comparison) -----------------------------------------------
def _timed_report(seconds: dict[str, float], calibration: float | None = None,
                  backend: str | None = None) -> StatusReport:
    from sphinx_gpu_admonition.model.record import Environment, JaxInfo

    build = {} if calibration is None else {"calibration": {"seconds": calibration,
                                                            "workload": 1}}
    return StatusReport([NotebookRecord(
        docname=name, status="ok", provenance="executed", runtime_seconds=time,
        capture="ok", environment=Environment(jax=JaxInfo(backend=backend)))
        for name, time in seconds.items()], build)


def _compare(a: StatusReport, b: StatusReport, **options) -> dict:
    return cli.summarise_compare(a, b, cli.CompareOptions(
        "a.json", "b.json", fail_above=options.get("fail_above"), min_seconds=1.0, top=0))


def test_fail_above_is_the_regression_ratio_of_the_analysis():
    """Exactly RATIO times slower is a regression, for the gate as for the status page
    (``slower_notebooks``, the analysis); just below is neither."""
    a = _timed_report({"x": 2.0})
    exactly = _compare(a, _timed_report({"x": 3.0}), fail_above=1.5)
    assert exactly["slower_notebooks"] == ["x"]
    assert [row["docname"] for row in exactly["notebooks"] if row["regression"]] == ["x"]
    below = _compare(a, _timed_report({"x": 2.998046875}), fail_above=1.5)
    assert below["slower_notebooks"] == [] and below["regressions"] == []


def test_a_uniformly_slower_machine_is_not_a_regression():
    a = _timed_report({"x": 10.0, "y": 20.0, "z": 5.0}, calibration=0.02)
    b = _timed_report({"x": 19.0, "y": 41.0, "z": 9.5}, calibration=0.04)
    data = _compare(a, b, fail_above=1.5)
    # the notebooks' own median, the calibration beside it as the check
    assert data["machine"]["source"] == "notebooks"
    assert data["machine"]["text"] == (
        "The machine of the new build was 1.9x slower overall (the median of 3 notebooks' "
        "ratios, 1.90x to 2.05x; the calibration agrees); 0 notebooks slower beyond that")
    assert data["slower_notebooks"] == [] and data["regressions"] == []
    # the same times on a machine the calibration finds as fast: the sentence says so
    same_speed = _compare(a, _timed_report({"x": 19.0, "y": 41.0, "z": 9.5}, 0.02),
                          fail_above=1.5)
    assert "the calibration said about as fast" in same_speed["machine"]["text"]
    # twice as slow or more than the calibration says: the notebooks as a whole got
    # slower (a dependency that slows them all), and they are regressions
    slower = _compare(a, _timed_report({"x": 25.0, "y": 52.0, "z": 12.0}, 0.02),
                      fail_above=1.5)
    assert slower["slower_notebooks"] == ["x", "y", "z"]
    assert slower["machine"]["source"] == "calibration"
    assert "so the notebooks as a whole got slower" in slower["machine"]["text"]


def test_a_notebook_slower_beyond_the_machine_is_a_regression():
    a = _timed_report({"x": 10.0, "y": 20.0, "z": 5.0}, calibration=0.02)
    b = _timed_report({"x": 20.0, "y": 40.0, "z": 30.0}, calibration=0.04)
    data = _compare(a, b, fail_above=1.5)
    assert data["slower_notebooks"] == ["z"]
    assert data["machine"]["text"].endswith("; 1 notebook slower beyond that (1.5x or more): z.")
    assert [row["docname"] for row in data["notebooks"] if row["regression"]] == ["z"]


def test_compare_names_the_notebooks_slower_beyond_the_machine_and_what_they_are():
    """Issue 26, item 6: which notebooks, and that ``compare`` calls them regressions
    only with ``--fail-above`` (a build's own comparison: they are its regressions)."""
    from sphinx_gpu_admonition.cli.compare import render_compare_text
    from sphinx_gpu_admonition.render.markdown import render_compare_markdown

    a = _timed_report({"w": 10.0, "x": 10.0, "y": 10.0, "z": 10.0}, calibration=0.02)
    b = _timed_report({"w": 10.0, "x": 10.0, "y": 30.0, "z": 40.0}, calibration=0.02)
    data = _compare(a, b)
    text = data["machine"]["text"]
    assert text.startswith("The machine of the new build was about as fast as the baseline's "
                           "(the median of 4 notebooks' ratios, 1.00x to 4.00x; the "
                           "calibration agrees); 2 notebooks slower beyond that (1.5x or more): "
                           "y, z. Not regressions: compare judges regressions only with "
                           "--fail-above")
    assert data["regressions"] == []
    assert any(text in line for line in render_compare_text(data, cli.Style(False)))
    assert f"**{cli.md_text(text)}**" in render_compare_markdown(data)
    # with --fail-above they are judged: the regressions block lists them
    judged = _compare(a, b, fail_above=2.0)
    assert judged["machine"]["text"].endswith("; 2 notebooks slower beyond that (2x or more): "
                                              "y, z.")
    assert [line.split(":")[0] for line in judged["regressions"]] == ["z", "y"]
    # a build's own comparison with its baseline (the job summary)
    build = cli.summarise_compare(a, b, cli.CompareOptions(
        "the baseline", "this build", regression_ratio=1.5, build_baseline=True))
    assert build["machine"]["text"].endswith(": y, z: regressions of this build "
                                             "(gpu_regression_ratio).")
    # many: the first five by name
    many = {f"n{i}": 10.0 for i in range(8)}
    data = _compare(_timed_report(many, 0.02), _timed_report(
        {name: 40.0 for name in many}, 0.02))
    assert ": n0, n1, n2, n3, n4 and 3 more. Not regressions" in data["machine"]["text"]


def _celled_report(seconds: list[float]) -> StatusReport:
    from sphinx_gpu_admonition.model.record import CellRecord

    return StatusReport([NotebookRecord(
        docname="nb", status="ok", provenance="executed", runtime_seconds=sum(seconds),
        capture="ok", cells=[CellRecord(index=n, execution_count=n, seconds=value,
                                        first_line=f"cell_{n}()")
                             for n, value in enumerate(seconds, 1)])])


def test_compare_says_no_cell_changed_instead_of_listing_zero_changes():
    """Issue 26, item 6: a change under 1 ms or under 1 % is no change."""
    from sphinx_gpu_admonition.cli.compare import render_compare_text
    from sphinx_gpu_admonition.render.markdown import render_compare_markdown

    a = _celled_report([0.5, 2.0, 100.0])
    same = _compare(a, a)
    assert same["cells"] == [] and same["cells_total"] == 0 and same["cells_unchanged"] == 3
    text = render_compare_text(same, cli.Style(False))
    heading = text.index("Cells")
    assert text[heading + 1] == ("  No cell changed (each of 3 cells within 1 ms or 1% of its "
                                 "time in A).")
    assert "+0.00" not in "\n".join(text[heading:text.index("Machines")])
    markdown = render_compare_markdown(same)
    assert "No cell changed (each of 3 cells within 1 ms or 1% of its time in A)." in markdown
    # 0.5 ms more (under 1 ms), 15 ms more on 2 s (under 1 %), 0.5 s more on 100 s (under
    # 1 %): none changed; 5 ms more on 0.2 s (over both) did
    noise = _compare(_celled_report([0.2, 0.5, 2.0, 100.0]),
                     _celled_report([0.205, 0.5005, 2.015, 100.5]))
    assert [row["cell"] for row in noise["cells"]] == ["cell 1"]
    assert noise["cells_unchanged"] == 3
    assert "1 of 1; 3 unchanged not shown" in "\n".join(
        render_compare_text(noise, cli.Style(False)))


def test_without_calibration_the_median_notebook_is_the_machine():
    a = _timed_report({"w": 10.0, "x": 10.0, "y": 10.0, "z": 10.0})
    b = _timed_report({"w": 18.0, "x": 20.0, "y": 22.0, "z": 60.0})
    data = _compare(a, b)
    assert data["machine"]["source"] == "notebooks"
    assert data["slower_notebooks"] == ["z"]
    # with fewer than three notebooks in both, one slow notebook cannot excuse itself
    few = _compare(_timed_report({"z": 10.0, "w": 10.0}), _timed_report({"z": 60.0, "w": 10.0}))
    assert few["machine"]["factor"] is None
    assert few["slower_notebooks"] == ["z"]
    assert "unknown" in few["machine"]["text"]


def test_the_machine_factor_never_excuses_a_change_of_backend():
    a = _timed_report({"x": 10.0, "y": 10.0, "z": 10.0}, calibration=0.02, backend="gpu")
    b = _timed_report({"x": 40.0, "y": 40.0, "z": 40.0}, calibration=0.04, backend="cpu")
    data = _compare(a, b)
    # a GPU to CPU change is hardware: judged without a factor, as the device change's
    assert data["slower_notebooks"] == [] and data["slower_on_other_device"] == ["x", "y", "z"]
    assert data["machine"]["text"].startswith("The device changed for 3 notebooks")
