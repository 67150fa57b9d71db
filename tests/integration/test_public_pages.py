"""A public lecture page in headless Chromium: the notice, its Colab link, the info box.

The migrated QuantEcon-style book (``quantecon_book`` in conftest: sphinx-book-theme,
built on this machine's CPU) is served on 127.0.0.1; when quantecon-book-theme is
installed (it needs Python >= 3.12 and Sphinx < 9), the same book is built with it
from the same jupyter-cache.  At 1280 and 390 px, light and dark: the notice says
that this copy ran without a GPU, its Colab link is visible and meets WCAG AA
contrast (>= 4.5:1) on the notice's own background, and the "executed on" box
opens onto its environment table.  With ``GPU_ADMONITION_SCREENSHOTS=<folder>``
the screenshots are kept there.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from pathlib import Path

import pytest
from conftest import QuantEconBook, serve

pytestmark = pytest.mark.browser

playwright_sync = pytest.importorskip("playwright.sync_api")

THEMES = ["sphinx_book_theme"] + (
    ["quantecon_book_theme"] if importlib.util.find_spec("quantecon_book_theme") else [])

# The WCAG contrast of an element's text colour on the colour painted behind it
# (semi-transparent backgrounds of its ancestors composed over the first opaque one).
CONTRAST_JS = """(element) => {
  const parse = (c) => {
    const p = c.match(/[\\d.]+/g).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const layers = [];
  for (let e = element; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let rgb = [255, 255, 255];
  for (const [r, g, b, a] of layers.reverse()) {
    rgb = [r * a + rgb[0] * (1 - a), g * a + rgb[1] * (1 - a), b * a + rgb[2] * (1 - a)];
  }
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const fg = lum(parse(getComputedStyle(element).color));
  const bg = lum(rgb);
  return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
}"""


@pytest.fixture(scope="module")
def sites(quantecon_book: QuantEconBook, tmp_path_factory: pytest.TempPathFactory):
    """theme -> address of the served book."""
    import quantecon_book as helpers

    outdirs = {"sphinx_book_theme": quantecon_book.html.outdir}
    for theme in THEMES[1:]:
        # QuantEcon's sites name the repository of their notebooks: the "play" icon
        settings = helpers.sphinx_settings(quantecon_book.book, quantecon_book.cache)
        options = {**settings["html_theme_options"],
                   "nb_repository_url": "https://github.com/QuantEcon/lecture-tiny.notebooks"}
        build = helpers.build(quantecon_book.book, tmp_path_factory.mktemp(theme),
                              quantecon_book.cache, gpu_expected_backend="cpu",
                              html_theme=theme, html_theme_options=options)
        assert build.warning_lines == [], build.warnings
        outdirs[theme] = build.outdir
    with contextlib.ExitStack() as servers:
        yield {theme: servers.enter_context(serve(outdir)) for theme, outdir in outdirs.items()}


def _dark(page, theme: str) -> None:
    """Switch the page to its dark mode the way the theme's own toggle does."""
    if theme == "quantecon_book_theme":
        page.evaluate("document.body.classList.add('dark-theme')")
    else:
        page.evaluate("document.documentElement.dataset.theme = 'dark';"
                      "document.documentElement.dataset.mode = 'dark'")


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_notice_link_and_info_box(browser, sites, tmp_path, theme, width, mode):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(error.message))
    page.goto(f"{sites[theme]}/jax_intro.html", wait_until="load")
    # colours are read at once: no theme transition may be half-way
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    if mode == "dark":
        _dark(page, theme)
    notice = page.locator("div.gpu-admonition")
    assert notice.count() == 1 and notice.is_visible()
    intro = notice.locator("p.gpu-notice-intro")
    assert intro.inner_text().startswith("This lecture was written for a GPU")
    assert "not on a GPU" in notice.locator("p.gpu-executed-on").inner_text()

    step = {"sphinx_book_theme": '"launch" icon (a rocket)',
            "quantecon_book_theme": '"play" icon'}[theme]
    assert step in notice.locator("ol").inner_text().replace("“", '"').replace("”", '"')
    link = notice.locator("a.gpu-colab-link")
    assert link.is_visible()
    assert link.get_attribute("href").endswith("/lecture-tiny.notebooks/blob/main/jax_intro.ipynb")
    for anchor in notice.locator("a").all():
        ratio = anchor.evaluate(CONTRAST_JS)
        assert ratio >= 4.5, f"{anchor.inner_text()!r}: contrast {ratio:.2f}:1 in {mode}"
    for part in (notice.locator(".admonition-title"), intro,
                 notice.locator("p.gpu-executed-on"), notice.locator("ol li").first):
        ratio = part.evaluate(CONTRAST_JS)
        assert ratio >= 4.5, f"{part.inner_text()!r}: contrast {ratio:.2f}:1 in {mode}"

    box = page.locator("details.gpu-execution-info")
    assert box.count() == 1
    table = box.locator("table.gpu-environment-table")
    assert not table.is_visible()
    box.locator("summary").click()
    assert table.is_visible()
    assert "JAX backend" in table.inner_text()
    assert box.locator("summary").evaluate(CONTRAST_JS) >= 4.5
    # quantecon-book-theme loads its icon script (feather) from a CDN, unreachable here
    assert [e for e in errors if "feather is not defined" not in e] == []

    shot = tmp_path / f"{theme}-{width}-{mode}.png"
    notice.scroll_into_view_if_needed()
    page.screenshot(path=str(shot), full_page=True)
    keep = os.environ.get("GPU_ADMONITION_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / shot.name).write_bytes(shot.read_bytes())
    page.close()


# The contrast of an element's text colour on a colour custom property of it
# (resolved by a probe element painted with it).
PAIR_CONTRAST_JS = """(element, property) => {
  const probe = document.createElement("span");
  probe.style.color = `var(${property})`;
  element.appendChild(probe);
  const painted = getComputedStyle(probe).color;
  probe.remove();
  const parse = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const text = lum(parse(getComputedStyle(element).color));
  const behind = lum(parse(painted));
  return (Math.max(text, behind) + 0.05) / (Math.min(text, behind) + 0.05);
}"""


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_status_page_follows_the_theme_mode(browser, sites, theme, mode):
    """The surfaces the status page paints (the headline's box, the scroll shadows'
    cover) follow the theme's mode: the page's text stays readable on them.
    quantecon-book-theme's dark mode keeps PyData's variables light, so a table
    that trusted them painted light boxes under light text."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{sites[theme]}/status.html", wait_until="load")
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    if mode == "dark":
        _dark(page, theme)
    table = page.locator("div.gpu-status").first
    assert table.count() == 1
    for part in (table.locator(".gpu-status-summary"), table.locator("thead th").first):
        ratio = part.evaluate(CONTRAST_JS)
        assert ratio >= 4.5, f"{part.inner_text()!r}: contrast {ratio:.2f}:1 in {mode}"
    summary = table.locator(".gpu-status-summary")
    for surface in ("--gpu-status-surface", "--gpu-status-background"):
        ratio = summary.evaluate(PAIR_CONTRAST_JS, surface)
        assert ratio >= 4.5, f"text on {surface}: contrast {ratio:.2f}:1 in {theme} {mode}"
    page.close()
