"""The mystmd plugin's transforms run in-process (``mystmd/plugin.py``): notices, roles and findings
in the book's language, the warnings it keeps, slow cells, bad baselines, the status
directive's options."""

from __future__ import annotations

import json
from typing import Any

from mystmd_builds import (
    PROJECT,
    code_block,
    page_tree,
    status_table,
    text_of,
    walk,
    write_kernel,
    write_settings,
)

from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.mystmd import capture, plugin


def test_plugin_main_without_arguments_prints_the_spec(capsys):
    plugin.main([])
    assert json.loads(capsys.readouterr().out)["name"] == "sphinx-gpu-admonition"


def test_the_notice_and_the_roles_speak_the_books_language(tmp_path, monkeypatch):
    """``language: zh_CN``: the package's catalog, as the Sphinx notice uses it."""
    from sphinx_gpu_admonition.mystmd import notice, runtime, settings

    write_settings(tmp_path, "      language: zh_CN\n")
    monkeypatch.chdir(tmp_path)
    [admonition] = plugin.directive("gpu", {"options": {}})
    assert "不过没有 GPU 也可以运行" in text_of(admonition)
    assert "Google Colab 提供可使用 GPU 的免费套餐" in text_of(admonition)
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 125.0, "first_line": "x = 1"}])
    [role] = runtime.role("runtime-time", {"body": "this page"})
    tree = page_tree(admonition, {"type": "paragraph", "children": [role]}, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    loaded = settings.load()[0]
    notice.make_truthful(tree, record, loaded)
    runtime.resolve(tree, lambda _target: record, lambda _target: [],
                    runtime.Texts(loaded.translate, loaded.ngettext), this_page_only=True)
    assert "本讲座为 GPU 编写" in text_of(tree) and "而非 GPU" in text_of(tree)
    assert text_of(tree["children"][2]) == "约 2 分钟"


def test_a_gpu_page_on_another_backend_warns_as_on_sphinx(tmp_path):
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}])
    from sphinx_gpu_admonition.mystmd import notice

    tree = page_tree(*notice.directive({"options": {}}), code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    warning = plugin.backend_warning(tree, record, "gpu")
    assert (warning.subtype, warning.message, warning.file) == (
        "backend", "page with a gpu directive executed on the 'cpu' backend, but "
        "expected_backend is 'gpu' (CPU: Test CPU, 2 cores)", record.source)
    assert plugin.backend_warning(tree, record, "cpu") is None
    assert plugin.backend_warning(page_tree(code_block("x = 1")), record, "gpu") is None


def test_warn_slow_cells_warns_per_flagged_cell_and_fails_its_junit_case_when_strict(tmp_path):
    """The warnings of the build's one analysis, made at the project stage (Sphinx's
    rule: render/analysis_warnings.py), each at its page and cell's line."""
    from xml.etree import ElementTree

    from sphinx_gpu_admonition.mystmd import project, settings, status
    from sphinx_gpu_admonition.render.junit import FailOn

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    page.write_text("```{code-cell} python\nslow()\n```\n\n```{code-cell} python\nx = 1\n```\n")
    write_kernel(folder, page, [{"seconds": 60.0, "first_line": "slow()"},
                                {"seconds": 0.5, "first_line": "x = 1"}])
    record, _ = capture.page_record(page_tree(code_block("slow()"), code_block("x = 1")),
                                    folder, tmp_path)
    # opt-in, as on Sphinx
    assert project.project_build(settings.DEFAULTS, folder, root=tmp_path).of_page("a") == []
    write_settings(tmp_path, "      warn_slow_cells: true\n")
    opted_in = settings.load(tmp_path)[0]
    build = project.project_build(opted_in, folder, root=tmp_path)
    [warning] = build.of_page("a")
    assert build.of_page("other") == []
    # the Sphinx warning's words; where it points is mystmd's own: the page and line
    assert warning.message.startswith("slow cell 1 (60.0 s): slow: took 60.0 s")
    assert (warning.subtype, warning.file, warning.line) == (
        "slow_cell", record.source, record.cells[0].line) and warning.line == 1
    report, analysis = status.build_report([record], thresholds=opted_in.thresholds)
    for fail_on, failures in ((FailOn(), "0"), (FailOn(slow_cells=True), "1")):
        assert status.write_reports(report, analysis, tmp_path, fail_on) == []
        path = tmp_path / status.JUNIT_FILE
        assert ElementTree.parse(path).getroot().get("failures") == failures


def test_the_plugin_writes_the_findings_in_the_books_language_and_keeps_its_warnings(
        tmp_path, monkeypatch):
    """The plugin's own path, in process: ``language: zh_CN`` from myst.yml, a page's
    record at the document stage, the status page at the project stage: the reasons and
    actions are translated; the warnings stay English, are held on their page until its
    project stage shows them to mystmd, and are in the status file."""
    from sphinx_gpu_admonition.model.build_warnings import build_warnings
    from sphinx_gpu_admonition.mystmd import build_options, status, warnings

    # in process, the plugin's parent is no myst build: every kernel file is this build's
    monkeypatch.setattr(build_options, "build_started", lambda pid=None: None)
    write_settings(tmp_path, "      language: zh_CN\n      slow_cell_seconds: 1\n"
                             "      warn_slow_cells: true\n")
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "_build" / "sphinx-gpu-admonition"
    monkeypatch.setenv(capture.ENV_CAPTURE, str(folder))
    page = tmp_path / "a.md"
    page.write_text("# A\n\n```{code-cell} python\nslow()\n```\n\n```{code-cell} python\n"
                    "x = 1\n```\n")
    write_kernel(folder, page, [{"seconds": 12.0, "first_line": "slow()"},
                                {"seconds": 0.5, "first_line": "x = 1"}])
    tree = page_tree(code_block("slow()"), code_block("x = 1"))
    plugin.transform("gpu-capture", tree)  # the document stage
    status_page = {"type": "root", "children": status.placeholder()}
    plugin.transform("gpu-status", status_page)  # the project stage, on the status page
    text = text_of(status_page)
    assert "用时 12.0 s（上限 1.00 s）" in text and "对该单元格进行性能分析" in text
    assert "took" not in text and "profile the cell" not in text
    # the page's warning: held at its document stage, shown at its project stage
    assert not [n for n in walk(tree) if n.get("type") == "crossReference"]
    plugin.transform("gpu-status", tree)
    (shown,) = [n for n in walk(tree) if n.get("type") == "crossReference"]
    assert shown["urlSource"].startswith(f"{warnings.NAME} [slow_cell]: slow cell 1 (12.0 s)")
    assert shown["position"]["start"]["line"] == 3 and shown["children"] == []
    kept = build_warnings(read_status(folder.parent / "execution-status.json"))
    assert [(item.subtype, item.file, item.line) for item in kept] == [("slow_cell", "a.md", 3)]


def test_a_bad_baseline_or_runtime_source_warns_once_and_the_build_goes_on(tmp_path,
                                                                           monkeypatch):
    """``status_baseline`` and ``runtime_sources`` files that are missing, not JSON or the
    build's own output: one warning each per build (Sphinx's words, mystmd's setting
    names), and the analysis goes on without them."""
    from sphinx_gpu_admonition.mystmd import project, runtime, settings

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "_build" / "sphinx-gpu-admonition"
    (tmp_path / "broken.json").write_text("{not json")
    write_settings(tmp_path, "      status_baseline: broken.json\n"
                             "      runtime_sources: [missing.json, broken.json]\n")
    options = settings.load(tmp_path)[0]
    build = project.project_build(options, folder, root=tmp_path)
    [problem] = build.warnings
    assert (problem.subtype, problem.message.split(": ", 1)[0]) == (
        "baseline", "status_baseline ignored, the page renders without comparison")
    assert "broken.json: not JSON" in problem.message
    assert build.analysis.baseline is None and build.report.build["baseline"] is None
    assert project.project_build(options, folder, root=tmp_path).warnings == []  # once
    builds, problems = runtime.other_builds(options, folder)
    assert builds == [] and [p.split(" ignored")[0] for p in problems] == [
        "runtime_sources: 'missing.json'", "runtime_sources: 'broken.json'"]
    assert runtime.other_builds(options, folder)[1] == []
    # the build's own status file is never its baseline
    write_settings(tmp_path, "      status_baseline: _build/execution-status.json\n")
    (tmp_path / "_build" / "execution-status.json").write_text("{}")
    [own] = project.project_build(settings.load(tmp_path)[0], folder, root=tmp_path).warnings
    assert "is this build's own output" in own.message


def test_the_notices_runtime_option_states_the_run_time_or_warns(tmp_path, monkeypatch):
    """``:runtime:`` (no value, on, off; ``admonition_runtime`` the book's default): the
    Sphinx notice's sentence once the page ran; a bad value and a page without data
    warn; the directive's warning is the page's, adopted at its document stage."""
    from sphinx_gpu_admonition.mystmd import notice, runtime, warnings

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "capture"
    [stated] = notice.directive({"options": {"runtime": ""}})
    assert notice.directive({"options": {"runtime": "off"}})[0] == notice.directive(
        {"options": {}})[0]
    write_kernel(folder, tmp_path / "a.md", [{"seconds": 125.0, "first_line": "x = 1"}])
    tree = page_tree(stated, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    assert runtime.resolve(tree, lambda _t: record, lambda _t: [], runtime.Texts(),
                           this_page_only=True) == []
    sentence = [n for n in walk(tree) if runtime.NOTICE_CLASS in str(n.get("class"))]
    assert [text_of(n) for n in sentence] == [
        "It runs in about 2 minutes on a CPU (Test CPU)."]
    # no data: left out, and a notice that asked for it warns
    empty = page_tree(*notice.directive({"options": {"runtime": "on"}}))
    [why] = runtime.resolve(empty, lambda _t: None, lambda _t: [], runtime.Texts(), True)
    assert why.startswith("the gpu notice cannot state the run time: not an executed page")
    assert not [n for n in walk(empty) if runtime.NOTICE_CLASS in str(n.get("class"))]
    # a bad value: held by the directive, adopted by the page's document stage
    nodes = notice.directive({"options": {"runtime": "maybe"},
                              "node": {"position": {"start": {"line": 7}}}})
    page = {"type": "root", "children": nodes}
    [adopted] = warnings.adopt(page, "a.md", folder)
    assert (adopted.subtype, adopted.file, adopted.line) == ("directive", "a.md", 7)
    assert adopted.message == ("gpu: invalid :runtime: 'maybe' (no value, on or off); using "
                               "admonition_runtime (False)")
    assert warnings.kept(folder) == [adopted] and warnings.adopt(page, "a.md", folder) == []
    warnings.show(page, [])
    [shown] = [n for n in walk(page) if n.get("type") == "crossReference"]
    assert shown["position"]["start"]["line"] == 7


def test_the_status_directives_options_shape_the_table_as_on_sphinx(tmp_path):
    """``{execution-status}``'s ``:sort:``, ``:min-seconds:``, ``:cells:`` and ``:columns:``
    on mystmd: the Sphinx directive's rule (render/status_rows.parse_options) kept in the
    placeholder and applied at the project stage; a bad value warns at the directive's
    line (adopted by the page's document stage) and its default applies."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.mystmd import status, warnings

    report = read_status(PROJECT / "tests" / "roots" / "parity" / "_static"
                         / "gpu-runner-status.json")  # lecture (slower) and timing
    report.by_docname()["lecture"].title = "Zeta"  # last by name, first by time
    analysis = analyse(report, Thresholds())

    def page(options: dict[str, Any]) -> dict[str, Any]:
        tree = {"type": "root", "children": plugin.directive("execution-status", {
            "options": options, "node": {"position": {"start": {"line": 5}}}})}
        assert status.fill_placeholders(tree, report, analysis)
        return tree

    default = page({})
    assert [row[0] for row in status_table(default)[1:-1]] == [
        "Zetalecture", "Run times of other buildstiming"]  # the slowest first
    assert [n for n in walk(default) if "gpu-status-cell-table" in str(n.get("class"))]
    # a limit between the two notebooks' run times (the runner file's, as measured)
    times = {nb.docname: nb.runtime_seconds for nb in report.notebooks}
    between = (times["lecture"] + times["timing"]) / 2
    shaped = page({"sort": "name", "columns": "time, cells", "cells": "no",
                   "min-seconds": f"{between:.3f}"})
    rows = status_table(shaped)
    assert rows[0] == ["Notebook", "Time", "Code cells"]
    assert [row[0] for row in rows[1:-1]] == ["Zetalecture"]  # timing is faster
    assert not [n for n in walk(shaped) if "gpu-status-cell-table" in str(n.get("class"))]
    by_name = page({"sort": "name"})
    assert [row[0] for row in status_table(by_name)[1:-1]] == [
        "Run times of other buildstiming", "Zetalecture"]
    # a bad value: the default, and the Sphinx directive's warning at the line
    bad = page({"sort": "fastest", "min-seconds": "soon"})
    assert status_table(bad)[0] == status_table(default)[0]
    adopted = warnings.adopt(bad, "status.md", tmp_path)
    assert [(item.subtype, item.file, item.line) for item in adopted] == [
        ("directive", "status.md", 5)] * 2
    assert adopted[0].message.startswith("execution-status: invalid :sort: 'fastest'")
    assert adopted[1].message.startswith("execution-status: invalid :min-seconds: 'soon'")
