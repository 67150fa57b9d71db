"""``mystmd/settings.py``: the Sphinx options read from myst.yml, wrong settings warn and their
defaults apply, a page's budget from its front matter."""

from __future__ import annotations

from mystmd_builds import (
    write_settings,
)


def test_settings_are_the_sphinx_options_read_from_myst_yml(tmp_path):
    from sphinx_gpu_admonition.mystmd import settings

    assert settings.load(tmp_path) == (settings.DEFAULTS, [])  # no myst.yml: the defaults
    write_settings(tmp_path, "      expected_backend: cpu\n      slow_cell_seconds: 30\n"
                             "      colab_url: https://colab.example/{path}.ipynb\n")
    loaded, warnings = settings.load(tmp_path)
    assert warnings == []
    assert loaded.expected_backend == "cpu" and loaded.thresholds.slow_cell_seconds == 30
    assert loaded.colab_url == "https://colab.example/{path}.ipynb"


def test_wrong_settings_warn_and_their_defaults_apply(tmp_path):
    from sphinx_gpu_admonition.mystmd import settings

    write_settings(tmp_path, "      slow_cell_seconds: -1\n      gpu_expected_backend: cpu\n"
                             "      status_console: true\n      colour: red\n      language: xx\n")
    loaded, warnings = settings.load(tmp_path)
    assert loaded.thresholds.slow_cell_seconds == settings.DEFAULTS.thresholds.slow_cell_seconds
    assert loaded.expected_backend == "gpu" and loaded.language is None
    where = "myst.yml project: options: gpu_admonition: "
    assert warnings == [
        where + "'gpu_expected_backend' is written without the 'gpu_' prefix here "
                "('expected_backend'); ignored",
        where + "'status_console' does nothing on mystmd; ignored",
        where + "unknown setting 'colour'; ignored (known: expected_backend, colab_url, "
                "slow_cell_seconds, slow_cell_share, slow_cell_min_seconds, compile_share, "
                "recompile_threshold, warn_slow_cells, explain_recompilations, "
                "publish_interpreter_path, status_baseline, regression_ratio, "
                "warn_regressions, runtime_sources, admonition_runtime, "
                "notebook_budget_seconds, cell_badges, claim_much_factor, "
                "claim_similar_factor, claim_margin, language)",
        where + "invalid value -1 for slow_cell_seconds: must be a finite number >= 0; using "
                f"the default {settings.DEFAULTS.thresholds.slow_cell_seconds!r}",
        where + "no translation for language 'xx' (there are: en, zh_CN); the texts are "
                "English"]
    write_settings(tmp_path, "      - a list\n")
    assert settings.load(tmp_path)[1] == [where + "not a mapping (list), default "
                                          "settings apply"]


def test_a_pages_budget_comes_from_its_front_matter_options(tmp_path):
    """``options: gpu_budget_seconds`` (mystmd's free mapping of a page's front matter; a
    key of its own counts too), ``none`` switches the book's off, a bad value warns at
    its line and the book's budget applies."""
    from sphinx_gpu_admonition.model.record import NotebookRecord
    from sphinx_gpu_admonition.mystmd import pages, settings

    write_settings(tmp_path, "      notebook_budget_seconds: 60\n")
    options = settings.load(tmp_path)[0]
    texts = {"own": "---\noptions:\n  gpu_budget_seconds: 300\n---\n# Own\n",
             "key": "---\ngpu_budget_seconds: '30'\n---\n\n# Key\n",
             "off": "---\noptions:\n  gpu_budget_seconds: none\n---\n",
             "bad": "---\ntitle: Bad budget\noptions:\n  gpu_budget_seconds: soon\n---\n",
             "book": "# The book's budget\n"}
    records = []
    for name, text in texts.items():
        (tmp_path / f"{name}.md").write_text(text)
        records.append(NotebookRecord(docname=name, status="ok", source=f"{name}.md"))
    [(record, message, line)] = pages.apply_front_matter(records, options, tmp_path)
    assert {r.docname: r.budget_seconds for r in records} == {
        "own": 300.0, "key": 30.0, "off": None, "bad": 60.0, "book": 60.0}
    assert (record.docname, line) == ("bad", 4)
    assert message.startswith("invalid gpu_budget_seconds 'soon': ") and message.endswith(
        "using notebook_budget_seconds (60.0)")
    assert [r.title for r in records] == ["Own", "Key", "", "Bad budget", "The book's budget"]
