"""The mystmd adapter's capture (``mystmd/capture.py``) on recorded kernel files: a page finds its
kernel by its code, cache hits keep the record and the page facts, nested cells, kernels no
page took, errors, parallel pages on one GPU."""

from __future__ import annotations

import json

from mystmd_builds import (
    code_block,
    page_tree,
    text_of,
    write_kernel,
)

from sphinx_gpu_admonition.mystmd import capture, cells


def test_a_page_finds_its_kernel_by_its_code_and_a_cache_hit_keeps_the_record(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the repository: sources are named relative to it
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    folder, page = tmp_path / "capture", tmp_path / "lectures" / "intro.md"
    page.parent.mkdir()
    page.write_text("# Intro\n\n```{code-cell} python\nimport jax\nx = 1\n```\n\n"
                    "```{code-cell} python\ny = 2\n```\n")
    tree = page_tree(code_block("import jax\nx = 1"), code_block("y = 2"))
    other = write_kernel(folder, tmp_path / "other.md", [{"seconds": 1.0, "first_line": "z"}])
    mine = write_kernel(folder, page, [{"seconds": 0.5, "first_line": "import jax"},
                                       {"seconds": 0.25, "first_line": "y = 2"}])
    record, warnings = capture.page_record(tree, folder, tmp_path)
    assert warnings == []
    assert (record.docname, record.provenance, record.status) == ("lectures/intro", "executed",
                                                                  "ok")
    assert [(c.index, c.seconds, c.line) for c in record.cells] == [(1, 0.5, 3), (2, 0.25, 8)]
    assert record.cell_name(record.cells[1]).location == "lectures/intro.md:8"
    assert not mine.exists() and other.exists()  # read once; the other page's is left
    assert (folder / capture.SIDECARS_FOLDER
            / f"{cells.cache_key(cells.executable_nodes(tree))}.json").is_file()

    hit, _ = capture.page_record(tree, folder, tmp_path)  # no kernel ran: a cache hit
    assert hit.provenance == "cache"
    assert [c.seconds for c in hit.cells] == [0.5, 0.25]
    assert [r.docname for r in capture.build_records(folder, tmp_path)] == ["lectures/intro"]


def test_a_cache_hit_takes_the_page_facts_kept_with_its_sidecar(tmp_path, monkeypatch):
    """As on Sphinx (tests/integration/test_cache_capture.py): a cache hit of the same page parses
    nothing and builds the same record; moved cells (Markdown added above them, which
    mystmd's cache key leaves out) derive the facts again once, and keep them."""
    from sphinx_gpu_admonition.model import enrich

    parses: list[int] = []
    original = enrich.read_code
    monkeypatch.setattr(enrich, "read_code", lambda *args: parses.append(1) or original(*args))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    folder, page = tmp_path / "capture", tmp_path / "intro.md"
    text = "# Intro\n\n```{code-cell} python\nimport jax\nx = 1\n```\n"
    page.write_text(text)
    tree = page_tree(code_block("import jax\nx = 1"))
    write_kernel(folder, page, [{"seconds": 0.5, "first_line": "import jax"}])
    executed, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1]
    hit, warnings = capture.page_record(tree, folder, tmp_path)
    assert parses == [1] and warnings == []
    assert hit.cells == executed.cells and hit.provenance == "cache"
    page.write_text(text.replace("# Intro\n", "# Intro\n\nMore\nwords.\n"))
    moved, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1, 1] and moved.cells[0].line == executed.cells[0].line + 3
    again, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1, 1] and again.cells == moved.cells


def test_cells_nested_in_a_gated_solution_are_found_in_mystmds_order(tmp_path):
    """mystmd nests the cells of {solution-start} ... {solution-end} in the solution
    node and executes them with the page, inline expressions too (which the probe does
    not see: IPython runs no cell for them), skipping skip-execution blocks."""
    solution = {"type": "solution", "children": [code_block("b = 2"), code_block("c = 3")]}
    tree = page_tree(code_block("a = 1"),
                     {"type": "block", "children": [
                         {"type": "paragraph", "children": [
                             {"type": "inlineExpression", "value": "a + 1"}]}, solution]},
                     code_block("never = 1", ["skip-execution"]), code_block(""),
                     code_block("d = 4"))
    nodes = cells.executable_nodes(tree)
    assert [(n.kind, n.content) for n in nodes] == [
        ("block", "a = 1"), ("inlineExpression", "a + 1"), ("block", "b = 2"),
        ("block", "c = 3"), ("block", ""), ("block", "d = 4")]
    page = tmp_path / "a.md"
    page.write_text("".join(f"```{{code-cell}} python\n{code}\n```\n\n" for code in
                            ("a = 1", "b = 2", "c = 3", "never = 1", "", "d = 4")))
    found = cells.page_cells(tree, page)
    assert [(c.position, c.source, c.line) for c in found] == [
        (0, "a = 1", 1), (1, "b = 2", 5), (2, "c = 3", 9), (None, "", 17), (3, "d = 4", 21)]
    folder = tmp_path / "capture"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": line}
                                for line in ("a = 1", "b = 2", "c = 3", "d = 4")])
    record, warnings = capture.page_record(tree, folder, tmp_path)
    assert warnings == [] and [c.first_line for c in record.cells] == [
        "a = 1", "b = 2", "c = 3", "d = 4"]
    assert [n.label for n in record.cell_names()] == ["cell 1", "cell 2", "cell 3", "cell 4"]


def test_the_kernels_no_page_took_are_reported_and_every_file_removed(tmp_path):
    folder = tmp_path / "capture"
    (tmp_path / "mine.md").write_text("# A page whose tree the plugin never matched\n")
    mine = write_kernel(folder, tmp_path / "mine.md", [{"seconds": 0.5, "first_line": "x"}])
    old = write_kernel(folder, tmp_path / "old.md", [{"seconds": 0.5, "first_line": "y"}])
    data = [json.loads(line) for line in old.read_text().splitlines()]
    data[1]["time"] = 1_000.0  # an earlier build's kernel
    old.write_text("".join(json.dumps(line) + "\n" for line in data))
    crash = mine.with_name(mine.name + ".crash")
    crash.write_text("")
    records, warnings = capture.leftover_kernels(folder, tmp_path, since=1_700_000_000.0)
    assert [(r.docname, r.capture) for r in records] == [("mine", "failed")]
    assert warnings == [f"mine: capture failed: {records[0].capture_message} (the page ran; "
                        "its record has no cells)"]
    assert "no page of the build matched the 1 code cells its kernel ran" in warnings[0]
    assert not list((folder / capture.KERNELS_FOLDER).iterdir())
    assert [r.docname for r in capture.build_records(folder, tmp_path)] == ["mine"]


def test_changed_code_is_not_matched_with_an_old_kernel(tmp_path):
    folder = tmp_path / "capture"
    write_kernel(folder, tmp_path / "a.md", [{"seconds": 0.5, "first_line": "x = 1"}])
    record, _ = capture.page_record(page_tree(code_block("x = 2")), folder, tmp_path)
    assert record is None  # no data for this code: nothing is claimed


def test_an_unexpected_error_fails_the_page_and_a_tagged_one_does_not(tmp_path):
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    cells = [{"seconds": 0.1, "first_line": "1 / 0", "error": "ZeroDivisionError"}]
    write_kernel(folder, page, cells)
    failed, _ = capture.page_record(page_tree(code_block("1 / 0")), folder, tmp_path)
    assert failed.status == "error" and failed.error.type == "ZeroDivisionError"
    assert failed.error.cell_index == 1
    write_kernel(folder, page, cells)
    tagged, _ = capture.page_record(page_tree(code_block("1 / 0", ["raises-exception"])),
                                    folder, tmp_path)
    assert tagged.status == "ok" and tagged.cells[0].error_expected


def test_a_notice_of_a_page_that_ran_on_a_gpu_keeps_its_claim(tmp_path):
    from sphinx_gpu_admonition.mystmd import notice

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}], backend="gpu")
    [admonition] = notice.directive({"options": {}})
    tree = page_tree(admonition, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    notice.make_truthful(tree, record)
    text = text_of(tree["children"][1])
    assert "built using a machine with access to a GPU" in text
    assert text.endswith("This page was executed on GPU: Test device (JAX 0.10.2).")


def test_parallel_pages_on_one_gpu_with_preallocation_warn(tmp_path):
    from sphinx_gpu_admonition.mystmd import build_options

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}], backend="gpu")
    record, _ = capture.page_record(page_tree(code_block("x = 1")), folder, tmp_path)
    message = build_options.preallocation_warning(record, 3, {})
    assert "3 pages at once" in message and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in message
    assert build_options.preallocation_warning(record, 1, {}) is None
    off = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert build_options.preallocation_warning(record, 3, off) is None
    record.environment.jax.backend = "cpu"
    assert build_options.preallocation_warning(record, 3, {}) is None
