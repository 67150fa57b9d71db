"""Translations: the catalog files are complete and current, and ``language`` works."""

from __future__ import annotations

import gettext
import re

import pytest
from conftest import TESTS

from sphinx_gpu_admonition.ext import i18n
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.findings import findings as flagged
from sphinx_gpu_admonition.render.finding_text import ENGLISH, FindingText

bs4 = pytest.importorskip("bs4")

ZH_OPTIONAL = "本讲座使用配备 GPU 的机器构建，不过没有 GPU 也可以运行。"
ZH_REQUIRED = "本讲座使用配备 GPU 的机器构建，需要 GPU 才能在合理的时间内运行。"
ZH_COLAB = "提供可使用 GPU 的免费套餐，使用方法如下："
EN_OPTIONAL = "although it will also run without one."


# -- the catalog files ------------------------------------------------------------


def test_compiled_mo_is_reproducible():
    """The same bytes from another interpreter, with another hash seed, time zone and
    time (what would leak through set order or a creation date)."""
    import os
    import subprocess
    import sys

    (po,) = [p for p in i18n.po_files() if p.parts[-3] == "zh_CN"]
    script = ("import sys; from pathlib import Path; from sphinx_gpu_admonition.ext import i18n; "
              "sys.stdout.buffer.write(i18n.compile_po(Path(sys.argv[1])))")
    environment = dict(os.environ, PYTHONHASHSEED="12345", TZ="Pacific/Kiritimati",
                       SOURCE_DATE_EPOCH="0")
    elsewhere = subprocess.run([sys.executable, "-c", script, str(po)], capture_output=True,
                               env=environment, check=True, timeout=60).stdout
    assert elsewhere == i18n.compile_po(po)


# -- builds ---------------------------------------------------------------------------


def gpu_texts(build, page):
    page = bs4.BeautifulSoup(build.read(page), "html.parser")
    return [re.sub(r"\s+", " ", d.get_text(" ", strip=True)) for d in
            page.select("div.gpu-admonition")]


def test_chinese_build(build_root_module):
    build = build_root_module("admonition", confoverrides={"language": "zh_CN"})
    assert build.warning_lines == [], build.warnings
    default, required, options, custom = gpu_texts(build, "myst.html")
    assert default.startswith("GPU ")
    assert ZH_OPTIONAL in default and ZH_COLAB in default
    assert "Google Colab" in default
    # the root links each page's notebook (gpu_colab_url); its theme has no launch button
    assert "在 Colab 中打开此笔记本" in default
    assert "点击右上角" not in default
    assert ZH_REQUIRED in required
    assert EN_OPTIONAL not in default
    # A :title: and a custom body are the author's words: never translated.
    assert options.startswith("Needs a fast GPU ")
    assert custom.startswith("GPU This page uses JAX")
    # The rST page is translated too.
    assert ZH_OPTIONAL in gpu_texts(build, "rest.html")[0]
    page = bs4.BeautifulSoup(build.read("myst.html"), "html.parser")
    link = page.select_one("div.gpu-admonition a.reference.external")
    assert link.get_text() == "Google Colab"
    assert link["href"] == "https://colab.research.google.com/"


def test_language_does_not_leak_between_builds(build_root, build_root_module):
    # the module's Chinese build (test_chinese_build's), then an English one
    chinese = build_root_module("admonition", confoverrides={"language": "zh_CN"})
    english = build_root("admonition", confoverrides={"language": "en"})
    assert ZH_OPTIONAL in gpu_texts(chinese, "myst.html")[0]
    assert EN_OPTIONAL in gpu_texts(english, "myst.html")[0]


def test_untranslated_language_falls_back_to_english(build_root):
    build = build_root("admonition", confoverrides={"language": "fr"})
    assert EN_OPTIONAL in gpu_texts(build, "myst.html")[0]


def unspaced(text: str) -> str:
    """A page's text against a sentence: without its spaces and backticks (the page
    shows the code between backticks as code)."""
    return "".join(text.replace("`", "").split())


def test_chinese_status_page_and_page_line(build_root):
    """The status table's headers, the headline against a baseline and the executed
    page's line are translated too."""
    status = ("# 状态\n\n```{execution-status}\n```\n\n```{execution-environment}\n```\n\n"
              "运行：{runtime}`notebook`\n\n"
              "```{execution-status}\n:status-file: gpu.json\n:baseline-file: cpu.json\n```\n")
    incident = TESTS / "data"
    build = build_root("admonition", files={
        "status.md": status,
        "gpu.json": (incident / "incident-gpu-t4-status.json").read_text(encoding="utf-8"),
        "cpu.json": (incident / "incident-cpu-status.json").read_text(encoding="utf-8"),
    }, confoverrides={"language": "zh_CN", "gpu_admonition_runtime": True})
    page = bs4.BeautifulSoup(build.read("status.html"), "html.parser")
    headline = page.select_one(".gpu-status-headline").get_text(" ", strip=True)
    # CPU -> GPU: no machine factor applies across the device change, which the headline
    # names instead of "slower beyond the machine's own speed" (issue 33 item 8)
    assert re.fullmatch(r"本次构建用时 \S+ s，基线为 \S+ s（[\d.]+×）；设备已变更：.+ → .+。",
                        headline), headline
    headers = [th.get_text(" ", strip=True) for th in page.select("table thead th")]
    assert any(h.startswith("笔记本") for h in headers), headers
    assert any(h.startswith("状态") for h in headers), headers
    assert "正常" in page.select_one("table tbody").get_text()
    # the cells are named in the page's language, under its "Cell" header, and the
    # build's total time too (both were English)
    findings = [p.get_text(" ", strip=True) for p in page.select(".gpu-status-finding-where")]
    assert findings and all("单元格 " in text and "cell " not in text for text in findings)
    summaries = [p.get_text() for p in page.select(".gpu-status-summary")]
    assert all("in total" not in text for text in summaries), summaries
    # what follows "Why:" and "What to do:" is in the page's language too: the words
    # of the findings through the book's catalog, not the English of the logs and JSON
    analysis = analyse(read_status(incident / "incident-gpu-t4-status.json"), Thresholds(),
                       read_status(incident / "incident-cpu-status.json"))
    catalog = gettext.translation(i18n.CATALOG, str(i18n.LOCALE_DIR), languages=["zh_CN"])
    words = FindingText(catalog.gettext, catalog.ngettext)
    rows = page.select("li.gpu-status-finding")
    assert len(rows) == len(flagged(analysis)) > 0
    for row, finding in zip(rows, flagged(analysis), strict=True):
        reason = row.select_one(".gpu-status-finding-reason").get_text(" ", strip=True)
        action = row.select_one(".gpu-status-finding-action").get_text(" ", strip=True)
        # the sentences' backticked code is code on the page (its own element)
        assert unspaced(reason) == unspaced(f"原因：{words.finding_reason(finding)}"), reason
        assert unspaced(action) == unspaced(f"怎么做：{words.finding_action(finding)}"), action
        assert bool(row.select(".gpu-status-finding-action code")) is (
            "`" in words.finding_action(finding))
        assert ENGLISH.finding_reason(finding) not in reason
        assert ENGLISH.finding_action(finding) not in action
        assert "用时" in reason or "慢" in reason
    notebook = bs4.BeautifulSoup(build.read("notebook.html"), "html.parser")
    assert notebook.select_one(".gpu-executed-on").get_text().startswith("本页面运行于 CPU")
    # how long it takes, in the notice and in a sentence (time words: 秒, 分钟 ...)
    runtime = notebook.select_one("div.gpu-admonition p.gpu-runtime").get_text()
    assert re.fullmatch(r"运行时间：在 CPU（.+）上(几秒钟|约 \d+ (秒|分钟))。", runtime), runtime
    role = page.select_one("span.gpu-runtime").get_text()
    assert re.fullmatch(r"在 CPU（.+）上(几秒钟|约 \d+ (秒|分钟))", role), role
