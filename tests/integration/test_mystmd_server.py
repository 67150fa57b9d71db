"""The mystmd plugin's JavaScript file (``gpu_admonition.mjs``) and the Python server
it keeps for a build's calls (``plugin.py --serve``).

The server's protocol is tested in this process and as a process of its own; the
``.mjs`` is imported by node as mystmd imports it (no mystmd), with interpreters that
fail on purpose (a shell script in place of Python); then real ``myst build`` runs of
a small book: one server for every call, a server that dies fails the build,
and the build ends.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT

from sphinx_gpu_admonition._version import __version__
from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli
from sphinx_gpu_admonition.mystmd import build_options, capture, plugin, plugin_file

ENV = {**os.environ, "PYTHONPATH": str(PROJECT)}
NODE = shutil.which("node")


def serve(*requests: Any) -> list[dict[str, Any]]:
    """The replies of an in-process server to ``requests`` (a str is sent as it is)."""
    lines = [(r if isinstance(r, str) else json.dumps(r)).encode() + b"\n" for r in requests]
    replies = io.StringIO()
    assert plugin.serve(iter(lines), replies) == 0
    return [json.loads(line) for line in replies.getvalue().splitlines()]


# -- the server's protocol ----------------------------------------------------------------
def test_the_server_says_its_version_and_specification_first():
    [hello] = serve()
    assert hello["hello"] == plugin.SERVER_PROTOCOL
    assert (hello["version"], hello["spec"]) == (__version__, plugin.spec_digest())
    assert hello["pid"] == os.getpid()


def test_a_request_gets_what_the_one_shot_call_answers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = {"name": "gpu", "options": {"required": True}}
    [_hello, directive, role] = serve(
        {"id": 1, "kind": "directive", "name": "gpu", "data": data},
        {"id": "b", "kind": "role", "name": "runtime-time",
         "data": {"name": "runtime-time", "body": "lectures/x.md"}})
    one_shot = subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition.mystmd.plugin", "--directive", "gpu"],
        input=json.dumps(data), capture_output=True, text=True, check=True, env=ENV,
        cwd=tmp_path)
    assert directive == {"id": 1, "result": json.loads(one_shot.stdout), "stderr": ""}
    assert role["id"] == "b" and role["result"][0]["type"] == "span"


def test_a_bad_request_is_an_error_reply_and_the_server_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    replies = serve("not json", {"id": 2, "kind": "directive", "name": "nope", "data": {}},
                    {"id": 3, "kind": "dance", "name": "gpu"},
                    {"id": 4, "kind": "role", "name": "nope", "data": {}},
                    {"id": 5, "kind": "directive", "name": "execution-status", "data": {}})
    assert [reply.get("id") for reply in replies[1:]] == [None, 2, 3, 4, 5]
    assert "error" in replies[1]
    assert replies[2]["error"] == "unknown directive 'nope'"
    assert replies[3]["error"].startswith("not a request")
    assert replies[4]["error"] == "unknown role 'nope'"
    assert "result" in replies[5] and "error" not in replies[5]


def test_a_calls_output_never_reaches_the_replies(monkeypatch):
    def noisy(name: str, data: Any) -> list[Any]:
        print("printed by a call")
        print("and to stderr", file=sys.stderr)
        return []

    monkeypatch.setattr(plugin, "directive", noisy)
    [_hello, reply] = serve({"id": 1, "kind": "directive", "name": "gpu", "data": {}})
    assert reply == {"id": 1, "result": [], "stderr": "printed by a call\nand to stderr\n"}


def test_an_exception_is_an_error_reply_with_its_traceback(monkeypatch):
    def broken(name: str, data: Any) -> Any:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(plugin, "transform", broken)
    [_hello, reply] = serve({"id": 1, "kind": "transform", "name": "gpu-capture",
                             "data": {"type": "root", "children": []}})
    assert reply["error"] == "RuntimeError: broken on purpose"
    assert "Traceback" in reply["stderr"] and "strict" not in reply


def _unknown_runtime_page() -> dict[str, Any]:
    [node] = plugin.call("role", "runtime-time", {"name": "runtime-time", "body": "gone"})
    return {"type": "root", "children": [{"type": "paragraph", "children": [node]}]}


def test_a_strict_builds_warnings_are_a_strict_error_reply(tmp_path, monkeypatch):
    """What the one-shot transform exits non-zero for (``--strict``): the reply says
    ``strict`` and carries the warning's line (the .mjs throws, the build fails)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(capture.ENV_CAPTURE, str(tmp_path / "capture"))
    monkeypatch.setattr(build_options, "parent_arguments",
                        lambda pid=None: ["myst", "build", "--strict"])
    [_hello, reply] = serve({"id": 1, "kind": "transform", "name": "gpu-status",
                             "data": _unknown_runtime_page()})
    assert reply["strict"] is True and "no run time of 'gone' is known" in reply["error"]
    assert "sphinx-gpu-admonition [runtime]" in reply["stderr"]
    monkeypatch.setattr(build_options, "parent_arguments", lambda pid=None: ["myst", "build"])
    [_hello, reply] = serve({"id": 2, "kind": "transform", "name": "gpu-status",
                             "data": _unknown_runtime_page()})
    assert "error" not in reply and reply["result"]["type"] == "root"


def test_settings_warnings_are_said_once_per_build_by_a_server_too(tmp_path, monkeypatch):
    """State between calls lives in the capture folder, keyed by the build (the parent
    process): the calls of one server are one build's, as one-shot calls were."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(capture.ENV_CAPTURE, str(tmp_path / "capture"))
    (tmp_path / "myst.yml").write_text("version: 1\nproject:\n  options:\n    gpu_admonition:\n"
                                       "      colour: blue\n", encoding="utf-8")
    page = {"type": "root", "children": []}
    replies = serve(*({"id": n, "kind": "transform", "name": "gpu-capture", "data": page}
                      for n in range(3)))
    said = [reply["stderr"].count("unknown setting 'colour'") for reply in replies[1:]]
    assert said == [1, 0, 0]


def test_a_servers_calls_read_a_file_again_when_it_changed_only(tmp_path):
    """myst.yml and the pages' front matter, read by every transform: kept by the file's
    state in a server, so a change (``myst start`` rebuilding) is read, and each call
    gets a copy of its own."""
    from sphinx_gpu_admonition.mystmd import pages, settings

    page = tmp_path / "page.md"
    page.write_text("---\ntitle: One\noptions: {gpu_budget_seconds: 3}\n---\n# One\n")
    first = pages.front_matter(page)
    first["title"] = "changed by a caller"
    assert pages.front_matter(page)["title"] == "One"
    page.write_text("---\ntitle: Two\n---\n# Two\n")
    assert pages.front_matter(page) == {"title": "Two"}
    config = tmp_path / "myst.yml"
    config.write_text("project:\n  options:\n    gpu_admonition:\n      cell_badges: true\n")
    assert settings.load(tmp_path)[0].config.cell_badges is True
    config.write_text("project:\n  options:\n    gpu_admonition:\n      cell_badges: false\n"
                      "      # a longer file\n")
    assert settings.load(tmp_path)[0].config.cell_badges is False


def test_the_server_process_answers_until_its_input_ends(tmp_path):
    requests = "".join(json.dumps({"id": n, "kind": "directive", "name": "gpu",
                                   "data": {"name": "gpu", "options": {}}}) + "\n"
                       for n in range(3))
    done = subprocess.run([sys.executable, "-m", "sphinx_gpu_admonition.mystmd.plugin",
                           "--serve"], input=requests, capture_output=True, text=True,
                          timeout=60, env=ENV, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply.get("id") for reply in replies] == [None, 0, 1, 2]
    assert replies[0]["pid"] != os.getpid()


# -- the .mjs file: written, recognised ---------------------------------------------------
def test_init_writes_the_mjs_with_this_interpreter_and_the_spec_in_it(tmp_path):
    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    written = tmp_path / plugin_file.MJS_FILE
    config = plugin_file.mjs_config(written.read_text(encoding="utf-8"))
    assert config == {"python": sys.executable, "version": __version__,
                      "specDigest": plugin.spec_digest(), "spec": plugin.PLUGIN_SPEC}
    assert not (tmp_path / plugin_file.PLUGIN_FILE).exists()
    assert plugin_file.plugin_file_state(written) == plugin_file.CURRENT


def test_an_mjs_of_another_interpreter_or_release_is_replaced_one_edited_refused(tmp_path):
    path = tmp_path / plugin_file.MJS_FILE
    path.write_text(plugin_file.mjs_text("/elsewhere/bin/python"), encoding="utf-8")
    assert plugin_file.plugin_file_state(path) == plugin_file.EARLIER
    older = plugin_file._mjs_from({"python": sys.executable, "version": "0.1",
                                   "specDigest": "0", "spec": {}})
    path.write_text(older, encoding="utf-8")
    assert plugin_file.plugin_file_state(path) == plugin_file.EARLIER
    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    assert path.read_text(encoding="utf-8") == plugin_file.mjs_text()
    path.write_text(plugin_file.mjs_text() + "// mine\n", encoding="utf-8")
    with pytest.raises(plugin_file.PluginFileRefused):
        plugin_file.plugin_file_state(path)
    assert mystmd_cli.main(["init", str(tmp_path)]) == 2


def test_an_mjs_of_an_earlier_template_is_replaced(tmp_path, monkeypatch):
    earlier = "// an earlier release's template\nconst CONFIG = {};\nexport default {};\n"
    monkeypatch.setattr(plugin_file, "EARLIER_MJS_TEMPLATES", (earlier,))
    path = tmp_path / plugin_file.MJS_FILE
    path.write_text(plugin_file._mjs_from({"python": "/old/python"}, earlier), "utf-8")
    assert plugin_file.plugin_file_state(path) == plugin_file.EARLIER
    path.write_text(earlier.replace("{};", "{}; // edited"), "utf-8")
    with pytest.raises(plugin_file.PluginFileRefused):
        plugin_file.plugin_file_state(path)


# -- the .mjs in node, as mystmd imports it -------------------------------------------------
def script_python(folder: Path, body: str) -> Path:
    """A shell script in place of Python: ``body``, then this interpreter."""
    path = folder / "python"
    path.write_text(f"#!/bin/sh\n{body}\nexec {sys.executable} \"$@\"\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


#: imports the .mjs (argv[1]), runs a directive and a role (as mystmd does: their
#: answer at once), then the transforms named in argv[2], each on the page argv[3] (an
#: empty one without), then the directive again; prints what came back (a failed call's
#: message); ends by itself (no process.exit)
NODE_SCRIPT = """
const { default: plugin } = await import(process.argv[1]);
const gpu = plugin.directives.find((d) => d.name === "gpu");
const runtime = plugin.roles.find((r) => r.name === "runtime-time");
const now = (run) => {
  try {
    return run()[0].type;
  } catch (error) {
    return `error: ${error.message}`;
  }
};
const out = { directive: now(() => gpu.run({ name: "gpu", options: {} })),
              role: now(() => runtime.run({ name: "runtime-time", body: "gone" })),
              transforms: [] };
for (const name of JSON.parse(process.argv[2])) {
  const transform = plugin.transforms.find((t) => t.name === name);
  const tree = process.argv[3] ? JSON.parse(process.argv[3]) : { type: "root", children: [] };
  try {
    await transform.plugin()(tree, {});
    out.transforms.push(tree.type);
  } catch (error) {
    out.transforms.push(`error: ${error.message}`);
  }
}
out.after = now(() => gpu.run({ name: "gpu", options: {} }));
console.log(JSON.stringify(out));
"""


def run_node(folder: Path, python: Path | None = None,
             transforms: tuple[str, ...] = ("gpu-capture", "gpu-status", "gpu-capture"),
             text: str | None = None, page: Any = None, *arguments: str
             ) -> subprocess.CompletedProcess[str]:
    if NODE is None:
        pytest.skip("node is not installed")
    mjs = folder / plugin_file.MJS_FILE
    mjs.write_text(text or plugin_file.mjs_text(str(python) if python else None), "utf-8")
    return subprocess.run([NODE, "--input-type=module", "-e", NODE_SCRIPT, mjs.as_uri(),
                           json.dumps(list(transforms)), json.dumps(page) if page else "",
                           *arguments], capture_output=True, text=True,
                          timeout=120, cwd=folder,
                          env={**ENV, capture.ENV_CAPTURE: str(folder / "capture")})


def test_node_imports_the_mjs_and_one_server_answers_every_call(tmp_path):
    """A directive's and a role's call (answered at once, mystmd's call waiting for the
    worker's), the transforms' (awaited) and a directive after them: one process."""
    log = tmp_path / "calls.log"
    python = script_python(tmp_path, f'echo "$*" >> {log}')
    done = run_node(tmp_path, python)
    assert done.returncode == 0, done.stderr  # node ended: the idle server held it not
    assert json.loads(done.stdout) == {"directive": "admonition", "role": "span",
                                       "transforms": ["root", "root", "root"],
                                       "after": "admonition"}
    calls = log.read_text().splitlines()  # each process's arguments
    assert len(calls) == 1 and calls[0].endswith("--serve"), calls  # directives too


def test_a_server_that_dies_fails_its_transforms_with_a_clear_error(tmp_path):
    python = script_python(tmp_path, 'case "$*" in *--serve*) echo "died on purpose" >&2; '
                                     "exit 3;; esac")
    done = run_node(tmp_path, python, ("gpu-capture", "gpu-status"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # a directive or a role is then called in a process of its own (as mystmd goes on
    # after a directive's error with exit status 0): the transforms fail the build
    assert (out["directive"], out["role"], out["after"]) == ("admonition", "span",
                                                             "admonition")
    for said in out["transforms"]:
        assert said.startswith("error: sphinx-gpu-admonition: the plugin's server ended "
                               "(exit status 3)"), said
        assert "died on purpose" in said and "init again" in said


def test_a_server_that_answers_what_is_not_json_fails_the_transform(tmp_path):
    python = script_python(tmp_path, 'case "$*" in *--serve*) echo "hello?"; sleep 30;; esac')
    done = run_node(tmp_path, python, ("gpu-capture",))
    assert done.returncode == 0, done.stderr  # the stuck server does not hold node
    out = json.loads(done.stdout)
    assert out["directive"] == out["after"] == "admonition"  # in processes of their own
    [said] = out["transforms"]
    assert "answered what is not JSON: hello?" in said, said


def test_a_strict_builds_warning_fails_the_transform_with_the_warning(tmp_path):
    """``--strict`` on node's command line (the server's parent, as ``myst`` is): the
    server's strict reply is thrown, with the warning's line, as the executable
    plugin's non-zero exit was."""
    done = run_node(tmp_path, None, ("gpu-status",), None, _unknown_runtime_page(),
                    "--strict")
    assert done.returncode == 0, done.stderr
    [said] = json.loads(done.stdout)["transforms"]
    assert said.startswith("error: sphinx-gpu-admonition: warnings in a --strict build "
                           "("), said
    assert "sphinx-gpu-admonition [runtime]: {runtime}: no run time of 'gone'" in said
    assert "init again" not in said
    done = run_node(tmp_path, None, ("gpu-status",), None, _unknown_runtime_page())
    assert json.loads(done.stdout)["transforms"] == ["root"]  # without: a warning only


def test_an_interpreter_that_is_gone_says_so(tmp_path):
    done = run_node(tmp_path, tmp_path / "no-python", ("gpu-capture",))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "cannot run" in out["directive"] and "init again" in out["directive"]
    [said] = out["transforms"]
    assert "cannot run the plugin's server" in said and "init again" in said, said


def test_an_mjs_of_another_release_warns_to_run_init_again(tmp_path):
    older = plugin_file._mjs_from({"python": sys.executable, "version": "0.1",
                                   "specDigest": "0", "spec": plugin.PLUGIN_SPEC})
    done = run_node(tmp_path, text=older, transforms=("gpu-capture", "gpu-status"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["transforms"] == ["root", "root"]
    [warning] = [line for line in done.stderr.splitlines() if "init again" in line]
    assert f"written for version 0.1, the interpreter has {__version__}" in warning


# -- real builds ----------------------------------------------------------------------------
#: a book without code cells (no kernel starts): a notice, roles, the status page
SMALL_BOOK = {
    "index.md": "# Small\n\n```{gpu}\n:runtime:\n```\n\nThe next page runs in "
                "{runtime-time}`second`.\n",
    "second.md": "# Second\n\nIt runs in {runtime}`this page`.\n",
    "status.md": "# Status\n\n```{execution-status}\n```\n\n```{execution-environment}\n```\n",
}


def small_book(folder: Path, entry: str = plugin_file.MJS_FILE) -> Path:
    from mystmd_builds import ROOT

    book = folder / "book"
    shutil.copytree(ROOT / "template", book / "template")
    for name, text in SMALL_BOOK.items():
        (book / name).write_text(text, encoding="utf-8")
    plugins = ("    - type: executable\n      path: gpu_admonition.py\n"
               if entry == plugin_file.PLUGIN_FILE else f"    - {entry}\n")
    (book / "myst.yml").write_text(
        "version: 1\nproject:\n  title: Small\n  plugins:\n" + plugins + "  toc:\n"
        + "".join(f"    - file: {name}\n" for name in SMALL_BOOK) + "site:\n  template: "
        "./template\n", encoding="utf-8")
    if entry == plugin_file.PLUGIN_FILE:
        shutil.copy(ROOT / plugin_file.PLUGIN_FILE, book)
    return book


def site_pages(book: Path) -> dict[str, Any]:
    """The built pages' mdast without mystmd's random keys."""
    def bare(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: bare(v) for k, v in node.items() if k != "key"}
        return [bare(item) for item in node] if isinstance(node, list) else node

    return {path.stem: bare(json.loads(path.read_text(encoding="utf-8"))["mdast"])
            for path in (book / "_build" / "site" / "content").glob("*.json")}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.mystmd
def test_one_python_process_serves_every_call_of_a_build(tmp_path):
    from mystmd_builds import myst_build, requires_mystmd

    requires_mystmd()
    book = small_book(tmp_path)
    log = tmp_path / "calls.log"
    python = script_python(tmp_path, f'echo "$$ $*" >> {log}')
    plugin_file.write_plugin_file(book / plugin_file.MJS_FILE,
                                  plugin_file.mjs_text(str(python)))
    completed = myst_build(book)  # it returns: node ended, the server with it
    assert completed.returncode == 0, completed.stdout + completed.stderr
    calls = log.read_text().splitlines()
    servers = [line.split()[0] for line in calls if line.endswith("--serve")]
    # 3 pages: a directive, two roles and 6 transforms, one process
    assert len(servers) == 1 and len(calls) == 1, calls
    deadline = time.monotonic() + 20  # its input closed with node: it ends
    while _alive(int(servers[0])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(servers[0]))
    assert (book / "_build" / "execution-status.json").is_file()  # gpu-status ran


@pytest.mark.mystmd
def test_the_mjs_and_the_executable_plugin_build_the_same_pages(tmp_path):
    from mystmd_builds import myst_build, requires_mystmd

    requires_mystmd()
    built = {}
    for entry in (plugin_file.MJS_FILE, plugin_file.PLUGIN_FILE):
        book = small_book(tmp_path / entry, entry)
        completed = myst_build(book)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        log = completed.stdout + completed.stderr
        assert f"sphinx-gpu-admonition ({entry}) loaded: 3 directives, 7 roles, " \
               "2 transforms" in log
        built[entry] = (site_pages(book), sorted(line for line in log.splitlines()
                                                 if "sphinx-gpu-admonition [" in line))
    assert built[plugin_file.MJS_FILE] == built[plugin_file.PLUGIN_FILE]
    pages, warned = built[plugin_file.MJS_FILE]
    assert sorted(pages) == ["index", "second", "status"] and warned  # the unknown times


@pytest.mark.mystmd
def test_a_build_whose_server_dies_fails_with_a_clear_error(tmp_path):
    from mystmd_builds import myst_build, requires_mystmd

    requires_mystmd()
    book = small_book(tmp_path)
    python = script_python(tmp_path, 'case "$*" in *--serve*) echo "died on purpose" >&2; '
                                     "exit 3;; esac")
    plugin_file.write_plugin_file(book / plugin_file.MJS_FILE,
                                  plugin_file.mjs_text(str(python)))
    completed = myst_build(book)
    log = completed.stdout + completed.stderr
    assert completed.returncode != 0, log
    assert "sphinx-gpu-admonition: the plugin's server ended (exit status 3)" in log
    assert "died on purpose" in log
