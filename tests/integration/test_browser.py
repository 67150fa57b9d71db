"""The status page in headless Chromium (Debian's, driven by Playwright).

The ``status`` book (``status_book`` in conftest, built with sphinx-book-theme)
is served over http.server on 127.0.0.1.  Checks: a click on a header sorts and
updates aria-sort, Enter and Space on a header button sort, the filter hides
rows, opening a notebook's details renders its cells from the JSON data file
beside the page (sortable), a badge's link opens its row, no console errors
from our script, and hostile names and first lines stay text (no dialog).  A
synthetic 1,000-notebook page is sorted too; its time is printed, never asserted.
"""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path

import pytest
from conftest import PROJECT, TESTS, StatusBook, serve

pytestmark = pytest.mark.browser

playwright_sync = pytest.importorskip("playwright.sync_api")

@pytest.fixture(scope="module")
def server(status_book: StatusBook):
    with serve(status_book.html.outdir) as address:
        yield address


class Page:
    """An opened page that records console errors, page errors and dialogs."""

    def __init__(self, browser, url: str, viewport: dict | None = None):
        self.page = browser.new_page(viewport=viewport or {"width": 1280, "height": 800})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"{m.location}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(
            f"pageerror: {e.message} {getattr(e, 'stack', '') or ''}"))
        self.page.on("dialog", self._dialog)
        self.page.goto(url, wait_until="load")

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def docnames(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#gpu-status-1 tbody.gpu-status-notebook:not([hidden]) .gpu-status-docname",
            "nodes => nodes.map(n => n.textContent)")

    def values(self, key: str) -> list[str]:
        """Column ``key`` of every row, in the order shown: a value's sort key, or
        for the notebook (the row header) its title."""
        return self.page.evaluate(
            """key => {
                const table = document.querySelector('#gpu-status-1 table');
                const heads = [...table.tHead.rows[0].cells];
                const column = heads.findIndex(th => th.dataset.sortKey === key);
                return [...table.tBodies].filter(b => b.classList.contains('gpu-status-notebook'))
                    .map(b => column === 0 ? b.rows[0].cells[0].firstChild.textContent
                                           : b.rows[0].cells[column].dataset.value);
            }""", key)

    def aria(self, key: str) -> str | None:
        return self.page.get_attribute(
            f'#gpu-status-1 thead th[data-sort-key="{key}"]', "aria-sort")

    def header(self, key: str):
        return self.page.locator(f'#gpu-status-1 thead th[data-sort-key="{key}"] button')

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def status_page(browser, server):
    page = Page(browser, f"{server}/status.html")
    yield page
    page.close()


def our_errors(page: Page) -> list[str]:
    """Console and page errors caused by this extension's script.

    The sphinx-book-theme of the Sphinx 9 test environment (0.0.x) expects jQuery,
    which Sphinx no longer ships, and logs its own errors; those are not ours.
    """
    return [e for e in page.errors if "gpu-status" in e]


def test_click_sorts_and_updates_aria_sort(status_page: Page):
    before = status_page.docnames()
    assert status_page.aria("time") == "descending"
    status_page.header("name").click()
    assert status_page.aria("name") == "ascending"
    assert status_page.aria("time") is None
    titles = status_page.values("name")
    assert len(set(titles)) == 7 and titles == sorted(titles, key=str.casefold)
    assert status_page.docnames() != before
    status_page.header("name").click()
    assert status_page.aria("name") == "descending"
    assert status_page.values("name") == sorted(titles, key=str.casefold, reverse=True)
    assert our_errors(status_page) == []


def test_keyboard_sorts(status_page: Page):
    status_page.header("name").click()  # away from the default order
    button = status_page.header("time")
    button.focus()
    status_page.page.keyboard.press("Enter")
    assert status_page.aria("time") == "descending"
    times = [float(v) for v in status_page.values("time") if v]
    assert times == sorted(times, reverse=True)
    status_page.page.keyboard.press("Space")
    assert status_page.aria("time") == "ascending"
    times = [float(v) for v in status_page.values("time") if v]
    assert times == sorted(times)
    # notebooks without a time (gone) stay last in both directions
    assert status_page.values("time")[-1] == ""


def _with_rule(status_book: StatusBook, rule: str | None = None) -> list[str]:
    """The notebooks with a cell flagged by ``rule`` (None: by any rule) in this build
    (a jitted cell's share depends on how fast the machine compiles, and on a busy
    machine a failing cell's traceback can take longer than the slow limit: read it,
    never assume it)."""
    import json

    analysis = json.loads(status_book.html.read("execution-status.json"))["analysis"]
    return sorted(docname for docname, entry in analysis.items()
                  if any(rule is None or flag["rule"] == rule
                         for cell in entry["flagged_cells"] for flag in cell["flags"]))


def test_filter_hides_rows(status_page: Page, status_book: StatusBook):
    box = status_page.page.get_by_label("Filter notebooks")
    assert box.is_visible()
    box.fill("slow notebook")
    assert status_page.docnames() == ["slow"]
    count = status_page.page.text_content("#gpu-status-1 [data-gpu-status-count]")
    assert count.startswith("1 of 7")
    # flag names, devices and the baseline's device are found too
    box.fill("large share")
    assert "slow" in _with_rule(status_book, "share")
    assert sorted(status_page.docnames()) == _with_rule(status_book, "share")
    box.fill("imports")  # jaxnb's import cell: its note, not "large share"
    assert sorted(status_page.docnames()) == ["jaxnb"]
    box.fill("tesla")
    assert sorted(status_page.docnames()) == ["fast", "slow"]
    box.fill("")
    status_page.page.get_by_label("only notebooks with flagged cells").check()
    assert {"jaxnb", "slow"} <= set(_with_rule(status_book))
    assert sorted(status_page.docnames()) == _with_rule(status_book)
    status_page.page.get_by_label("only notebooks with flagged cells").uncheck()
    box.fill("ERROR")
    assert sorted(status_page.docnames()) == sorted(["failing", 'hostile<b>&"x'])
    box.fill("")
    assert len(status_page.docnames()) == 7


def cell_rows(row) -> list[list[str]]:
    """The rows of a notebook's cell table: [cell, time, share, compile, first line, ...]."""
    return row.locator("table.gpu-status-cell-table tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.innerText))")


def test_details_render_the_cells_on_demand(status_page: Page):
    row = status_page.page.locator("#gpu-status-slow")
    assert row.locator("table.gpu-status-cell-table").count() == 0  # not in the page
    row.locator("details > summary").click()
    table = row.locator("table.gpu-status-cell-table")
    table.wait_for()
    cells = cell_rows(row)
    assert [c[0] for c in cells[:3]] == ["cell 1", "cell 2", "cell 3"]  # notebook order
    assert row.locator("tr.gpu-status-flagged code").inner_text() == "time.sleep(0.5)"
    assert row.locator("tr.gpu-status-flagged th a").get_attribute("href") == "slow.html#cell-3"
    # sorted by time, slowest first: the sleep
    table.locator("thead th").nth(1).locator("button").click()
    assert cell_rows(row)[0][4] == "time.sleep(0.5)"
    assert table.locator("thead th").nth(1).get_attribute("aria-sort") == "descending"
    assert our_errors(status_page) == []


def test_hostile_names_are_text(status_page: Page):
    row = status_page.page.locator("tbody.gpu-status-notebook", has_text="Hostile")
    assert "<script>alert(1)</script>" in row.locator("th").first.inner_text()
    row.locator("details > summary").click()
    assert "<b>bold</b>" in row.locator(".gpu-status-error-message").inner_text()
    # first lines with "</script>" come from the JSON data as text
    row.locator("table.gpu-status-cell-table").wait_for()
    assert [c[4] for c in cell_rows(row)] == [
        's = "<script>alert(1)</script><b>bold</b>"',
        'raise RuntimeError("<script>alert(1)</script><b>bold</b>")']
    assert status_page.page.locator("#gpu-status-1 b, #gpu-status-1 script").count() == 0
    assert status_page.dialogs == []
    assert our_errors(status_page) == []


def test_badge_link_opens_the_row(browser, server):
    page = Page(browser, f"{server}/slow.html")
    try:
        badge = page.page.locator("#cell-3 .gpu-cell-badge a")
        assert badge.is_visible()
        badge.click()
        page.page.wait_for_url("**/status.html#gpu-status-slow-cell-2")
        row = page.page.locator("#gpu-status-slow")
        assert "gpu-status-target" in row.get_attribute("class")
        row.locator("table.gpu-status-cell-table tr.gpu-status-flagged").wait_for()
        assert row.locator("details").get_attribute("open") is not None
        # the cell's own line: highlighted, in view and clear of the theme's sticky header
        cell = page.page.locator("#gpu-status-slow-cell-2")
        assert "gpu-status-target" in cell.get_attribute("class")
        header = page.page.evaluate(
            "() => { const h = document.querySelector('header, .bd-header');"
            " return h && getComputedStyle(h).position === 'sticky'"
            " ? h.getBoundingClientRect().bottom : 0; }")
        box = cell.bounding_box()
        assert header <= box["y"] and box["y"] + box["height"] <= 800
    finally:
        page.close()


def _benchmark_module():
    path = PROJECT / "benchmarks" / "bench_status_page.py"
    spec = importlib.util.spec_from_file_location("bench_status_page", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sorting_a_thousand_notebooks(browser, tmp_path):
    bench = _benchmark_module()
    html_bytes, _, _ = bench.write_site(tmp_path, bench.synthetic_records(1000, 50))
    with serve(tmp_path) as base:
        _a_thousand_notebooks(browser, base, tmp_path, html_bytes)


def _a_thousand_notebooks(browser, base: str, folder: Path, html_bytes: int) -> None:
    start = time.perf_counter()
    page = Page(browser, f"{base}/status.html")
    loaded = time.perf_counter() - start
    try:
        elapsed = page.page.evaluate("""() => {
            const button = document.querySelector('th[data-sort-key="name"] button');
            const t0 = performance.now();
            button.click();
            const t1 = performance.now();
            document.querySelector('th[data-sort-key="time"] button').click();
            const t2 = performance.now();
            return [t1 - t0, t2 - t1];
        }""")
        # a table this long is laid out a screen at a time (fixed column widths,
        # content-visibility): scrolling through it changes no column's width, and
        # the page is about as tall as the rows make it (each row's least height)
        widths_js = """() => [...document.querySelectorAll('#gpu-status-1 thead th')]
                               .map(th => Math.round(th.getBoundingClientRect().width))"""
        assert page.page.locator("#gpu-status-1 table.gpu-status-many").count() == 1
        top_widths = page.page.evaluate(widths_js)
        height = page.page.evaluate("() => document.documentElement.scrollHeight")
        page.page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        page.page.wait_for_timeout(100)
        assert page.page.evaluate(widths_js) == top_widths
        assert min(top_widths) > 40
        laid_out = page.page.evaluate("() => document.documentElement.scrollHeight")
        assert 0.8 < height / laid_out < 1.25
        # a link to a row far down shows that row and its details
        last = page.page.evaluate(
            "() => [...document.querySelectorAll('tbody.gpu-status-notebook')].at(-3).id")
        page.page.evaluate(f"() => {{ window.location.hash = '{last}'; }}")
        page.page.locator(f"#{last} details[open]").wait_for()
        box = page.page.locator(f"#{last} > tr").first.bounding_box()
        assert box is not None and 0 <= box["y"] < 800
        # its cells come from the last of the data files (50 notebooks a file), the
        # only one read
        files = sorted(folder.glob("status.gpu-cells*.json"))
        assert len(files) == 20
        row = page.page.locator(f"#{last}")
        row.locator("table.gpu-status-cell-table").wait_for()
        assert row.locator("table.gpu-status-cell-table tbody tr").count() == 50
        fetched = page.page.evaluate(
            "() => performance.getEntriesByType('resource').map(r => r.name)")
        cell_files = [url for url in fetched if ".gpu-cells" in url]
        assert len(cell_files) == 1 and "status.gpu-cells-" in cell_files[0]
        page.page.evaluate("() => window.scrollTo(0, 0)")
        page.page.get_by_label("Filter notebooks").fill("lecture 99")
        shown = len(page.docnames())
        print(f"\n1,000 notebooks x 50 cells: {html_bytes / 1e6:.1f} MB, load "
              f"{loaded:.2f} s, sort by name {elapsed[0]:.0f} ms, by time {elapsed[1]:.0f} ms")
        assert shown == 11  # lecture 99 and 990-999
        assert page.aria("time") == "descending"
        assert [e for e in page.errors if "favicon.ico" not in e] == []
    finally:
        page.close()


# -- the first screen (issue 9): the answer without scrolling ------------------------
def _inside(box: dict | None, width: int, height: int) -> bool:
    return (box is not None and box["width"] > 0 and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height)


def assert_nothing_scrolls_sideways(page: Page) -> None:
    """Neither the page nor the status table's scroll box is wider than its view."""
    widths = page.page.evaluate(
        "() => { const s = document.querySelector('#gpu-status-1 .gpu-status-scroll');"
        " return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
        " s.scrollWidth, s.clientWidth]; }")
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths


def test_first_screen_answers_at_1280(browser, server):
    """At 1280x800 in sphinx-book-theme, the first screen shows the flagged cell's
    notebook, cell, time, device, reason and action, and nothing scrolls sideways."""
    page = Page(browser, f"{server}/status.html")
    try:
        first = page.page.locator("#gpu-status-1 li.gpu-status-finding").first
        where = first.locator(".gpu-status-finding-where a")
        assert re.fullmatch(r".+, cell \d+", where.inner_text())
        parts = {
            "notebook and cell": where,
            "time": first.locator(".gpu-status-finding-time"),
            "device": first.locator(".gpu-status-finding-device"),
            "flags": first.locator(".gpu-status-flag-names"),
            "reason": first.locator(".gpu-status-finding-reason"),
            "action": first.locator(".gpu-status-finding-action"),
        }
        for name, locator in parts.items():
            assert _inside(locator.bounding_box(), 1280, 800), name
        assert "CPU" in parts["device"].inner_text()
        assert "What to do:" in parts["action"].inner_text()
        # no horizontal scrolling: neither the page nor the table
        assert_nothing_scrolls_sideways(page)
        assert our_errors(page) == []
    finally:
        page.close()


def test_row_details_and_cells_fit_1280(browser, server):
    """At 1280x800 the first screen names the slowest notebook; an opened row's cell
    table keeps "cell 1", its time and share on one line each, and the row's facts
    and the cells scroll nothing sideways."""
    page = Page(browser, f"{server}/status.html")
    try:
        slowest = page.page.locator("#gpu-status-1 .gpu-status-slowest")
        assert re.fullmatch(r"Slowest: .+, .+ \(\d+% of the build\)\.", slowest.inner_text())
        assert _inside(slowest.bounding_box(), 1280, 800)
        row = page.page.locator("#gpu-status-jaxnb")
        row.locator("details > summary").click()
        row.locator("table.gpu-status-cell-table").wait_for()
        # the lines each of a cell's name, time and share takes: the distinct tops of
        # its text's boxes
        heights = row.locator("table.gpu-status-cell-table tbody tr").evaluate_all(
            """rows => rows.map(r => [...r.cells].slice(0, 3).map(c => {
                const range = document.createRange();
                range.selectNodeContents(c);
                return range.getClientRects().length > 0 ?
                    new Set([...range.getClientRects()].map(x => Math.round(x.top))).size : 0;
            }))""")
        assert heights and all(count == 1 for cells in heights for count in cells), heights
        assert_nothing_scrolls_sideways(page)
        assert our_errors(page) == []
    finally:
        page.close()


def test_phone_shows_every_notebooks_time_and_flags(browser, server):
    page = Page(browser, f"{server}/status.html", viewport={"width": 390, "height": 844})
    try:
        rows = page.page.locator("#gpu-status-1 tbody.gpu-status-notebook")
        assert rows.count() == 7
        headers = page.page.locator("#gpu-status-1 thead th").evaluate_all(
            "headers => headers.map(th => [th.dataset.sortKey, th.textContent])")
        columns = [key for key, _label in headers]
        for index in range(rows.count()):
            row = rows.nth(index)
            for key in ("time", "flags"):
                value = row.locator("> tr").first.locator("> td").nth(columns.index(key) - 1)
                value.scroll_into_view_if_needed()
                box = value.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (
                    index, key, box)
                assert value.inner_text().strip()
                # its column's name written before it (the header row is hidden)
                before = value.evaluate("td => getComputedStyle(td, '::before').content")
                assert headers[columns.index(key)][1] in before, (key, before)
        assert page.page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        page.close()


def test_time_bars_are_drawn(status_page: Page):
    """Each time bar fills its share of the slowest notebook's time (its one element,
    drawn by CSS from the shares in its style), the slowest notebook's all of it."""
    bars = status_page.page.eval_on_selector_all("#gpu-status-1 .gpu-bar", """bars =>
        bars.map(bar => {
            const fill = getComputedStyle(bar, '::before');
            return [bar.clientWidth, parseFloat(fill.width), fill.backgroundImage,
                    parseFloat(bar.style.getPropertyValue('--gpu-bar-width'))];
        })""")
    assert len(bars) == 6  # every notebook that ran
    for width, filled, image, share in bars:
        assert width > 20 and abs(filled - width * share / 100) <= 1, (width, filled, share)
        assert image.count("linear-gradient") == 2, image
    assert max(share for *_, share in bars) == 100.0
    assert min(share for *_, share in bars) < 100.0


@pytest.mark.parametrize("width", [390, 1280])
def test_each_findings_code_and_time_split_fit_the_screen(browser, server, width):
    """Every finding's code line (monospace) and its compile/run split stay inside a
    phone's and a laptop's width: a long line wraps, nothing scrolls sideways."""
    page = Page(browser, f"{server}/status.html", viewport={"width": width, "height": 844})
    try:
        findings = page.page.locator("#gpu-status-1 li.gpu-status-finding")
        codes = findings.locator(".gpu-status-finding-code code")
        assert codes.count() == findings.count() > 0  # every flagged cell has code
        assert page.page.locator("#gpu-status-1 .gpu-status-finding-timing").count() > 0
        for locator in (codes, page.page.locator("#gpu-status-1 .gpu-status-finding-timing")):
            for index in range(locator.count()):
                element = locator.nth(index)
                element.scroll_into_view_if_needed()
                box = element.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        font = codes.first.evaluate("e => getComputedStyle(e).fontFamily")
        assert "mono" in font.lower(), font
        assert page.page.evaluate("() => document.documentElement.scrollWidth") <= width
    finally:
        page.close()


# -- accessibility: axe-core (vendored, tests/vendor/axe-core) ------------------------
AXE = TESTS / "vendor" / "axe-core" / "axe.min.js"
#: the extension's markup: the status page, the badges, the {gpu} notice
OURS = (".gpu-status", ".gpu-cell-badge", ".gpu-admonition", ".gpu-execution-environment")


def _axe_violations(page: Page) -> list[str]:
    """WCAG 2 A/AA violations of axe-core in the extension's markup (the theme's are
    not ours to fix)."""
    page.page.add_script_tag(path=str(AXE))
    result = page.page.evaluate(
        """ours => axe.run(document, {runOnly: {type: 'tag',
                values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
            .then(r => r.violations.flatMap(v => v.nodes
                .filter(n => n.target.some(t => {
                    const node = document.querySelector(t);
                    return node && ours.some(s => node.closest(s));
                }))
                .map(n => v.id + ': ' + n.target.join(' ') + ' ' + n.failureSummary)))""",
        list(OURS))
    return result


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_axe_finds_nothing_in_our_markup(browser, server, mode):
    for name in ("status.html", "slow.html", "notice.html"):
        page = Page(browser, f"{server}/{name}")
        try:
            page.page.evaluate("mode => { document.documentElement.dataset.theme = mode;"
                               " document.documentElement.dataset.mode = mode; }", mode)
            page.page.evaluate("() => document.querySelectorAll('.gpu-status details')"
                               ".forEach(d => { d.open = true; })")
            if name == "status.html":  # the cell tables of the opened details
                page.page.locator("table.gpu-status-cell-table").first.wait_for()
            else:
                assert page.page.locator(", ".join(OURS)).count()
            assert _axe_violations(page) == [], name
        finally:
            page.close()
