"""The docs' pages that are built: the GPU case page shows the timed call cell first (that
the docs document every option and warning subtype: tests/unit/ext/test_config_docs.py and
test_warnings.py)."""

from pathlib import Path

from conftest import PROJECT

DOCS = PROJECT / "docs"


def test_the_gpu_case_page_shows_the_timed_call_cell_first(tmp_path: Path) -> None:
    """docs/gpu-case.md, built with this book's limit, on its real diagnosis data: the
    first flagged cell is a timed call cell (not the cell that defines the loop), with
    its code, compile and run time and the action; the reading guide quotes them."""
    import json
    import re
    import shutil

    import jsonschema
    from bs4 import BeautifulSoup
    from conftest import sphinx_build

    schema = json.loads((DOCS.parent / "sphinx_gpu_admonition" / "schema"
                         / "execution-status.schema.json").read_text(encoding="utf-8"))
    for root, option in (("diagnosis", "--diagnosis"), ("jax_loops", "--root jax_loops")):
        for name, synthetic in ((f"{root}-gpu-t4", True), (f"{root}-cpu", False)):
            document = json.loads((DOCS.parent / "tests" / "data" / f"{name}-status.json")
                                  .read_text(encoding="utf-8"))
            jsonschema.validate(document, schema)  # the committed files are valid files
            assert document["build"].get("synthetic_device", False) is synthetic, name
            assert f"make_gpu_fixture.py {option}" in document["build"]["note"], name
    config = (DOCS / "_config.yml").read_text(encoding="utf-8")
    limit = float(re.search(r"gpu_slow_cell_seconds: ([\d.]+)", config).group(1))
    data = DOCS.parent / "tests" / "data"
    shutil.copytree(data, tmp_path / "tests" / "data")
    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(DOCS / "gpu-case.md", src / "index.md")
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "sphinx_gpu_admonition"]\n'
        f"gpu_slow_cell_seconds = {limit}\nnb_execution_mode = 'off'\n", encoding="utf-8")
    build = sphinx_build(src, tmp_path / "_build", "html", freshenv=True)
    page = BeautifulSoup((build.outdir / "index.html").read_text(encoding="utf-8"), "lxml")
    first = page.select_one("li.gpu-status-finding")
    code = first.select_one(".gpu-status-finding-code").get_text()
    assert code == "x = qm_jax(0.1, n).block_until_ready()"
    assert "lecture" in first.select_one(".gpu-status-finding-where").get_text()
    timing = first.select_one(".gpu-status-finding-timing").get_text()
    assert timing.endswith(("(warm call)", "(first call)")) and "run " in timing
    assert "sequential loop" in first.select_one(".gpu-status-flag-names").get_text()
    assert "runs qm_jax (defined in cell 2)" in \
        first.select_one(".gpu-status-finding-reason").get_text()
    # the pins the lecture can paste, as code
    action = first.select_one(".gpu-status-finding-action")
    assert "run the loop on the CPU: jit its function for the CPU" in action.get_text()
    assert [code.get_text() for code in action.select("code")][:3] == [
        'jax.jit(f, device=jax.devices("cpu")[0])',
        'with jax.default_device(jax.devices("cpu")[0]):', "unroll=k"]
    # the reading guide's numbers are the file's: the first cell's time and split
    guide = (DOCS / "gpu-case.md").read_text(encoding="utf-8")
    time = first.select_one(".gpu-status-finding-time").get_text()
    assert f"took {time}" in guide and timing.split(" (")[0] in " ".join(guide.split())
    headline = page.select_one(".gpu-status-headline").get_text()
    assert re.search(r"took ([\d.]+ s) against \1 in the baseline", headline)
    assert headline.split(" in the baseline")[0].removeprefix("This build ") in guide
    # the second table's one finding: the Python loop of small calls, with its line,
    # function, count and action (the reading guide quotes them)
    loop = page.select("li.gpu-status-finding")[-1]
    assert "dispatch" in loop.select_one(".gpu-status-finding-where").get_text()
    assert loop.select_one(".gpu-status-finding-code").get_text() == "for _ in range(calls):"
    assert "loop of small calls" in loop.select_one(".gpu-status-flag-names").get_text()
    reason = loop.select_one(".gpu-status-finding-reason").get_text()
    assert "its for loop (line 3) calls step 200,000 times, about " in reason
    assert [code.get_text() for code in loop.select(".gpu-status-finding-reason code")][:2] \
        == ["for", "step"]
    assert "move the loop into one compiled program" in \
        loop.select_one(".gpu-status-finding-action").get_text()
    loop_time = loop.select_one(".gpu-status-finding-time").get_text()
    assert f"took {loop_time}" in guide
    # report on the page's files flags what the page flags, as the file's build judged
    # it (its stored gpu_slow_cell_seconds), as JSON and as GitHub annotations
    report_flags_what_the_page_flags(page, tmp_path / "tests" / "data", tmp_path)


def report_flags_what_the_page_flags(page, data: Path, scratch: Path) -> None:
    import contextlib
    import io
    import json
    import os

    from sphinx_gpu_admonition.cli import main as cli_main

    status = data / "diagnosis-gpu-t4-status.json"
    stored = json.loads(status.read_text(encoding="utf-8"))["build"]["thresholds"]
    assert stored["slow_cell_seconds"] == 5.0  # the docs book's limit, not the default
    # the first table's findings (the page's second table renders the jax_loops file)
    names = [name for name in (
        " ".join(item.select_one(".gpu-status-finding-where").get_text().split())
        for item in page.select("li.gpu-status-finding")) if "roots/diagnosis/" in name]
    assert names
    arguments = ["report", str(status), "--baseline", str(data / "diagnosis-cpu-status.json"),
                 "--exit-zero"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main([*arguments, "--json"]) == 0
    flagged = [f"{cell['docname']}, {cell['cell']}" for cell in
               json.loads(out.getvalue())["flagged_cells"]]
    assert len(flagged) == len(names) and all(
        cell.split(", ")[1] in name for cell, name in zip(flagged, names, strict=True))
    summary, outputs = scratch / "summary.md", scratch / "outputs.txt"
    errors = io.StringIO()
    environ = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    saved = {name: os.environ.get(name) for name in environ}
    os.environ.update(environ)
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            assert cli_main([*arguments, "--github"]) == 0
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    annotated = [line for line in errors.getvalue().splitlines()
                 if line.startswith("::warning") and "Slow cell" in line]
    assert len(annotated) == len(flagged)
    assert f"flagged={len(flagged)}" in outputs.read_text(encoding="utf-8")
