"""What ``scripts/test`` decides before it runs a test (README, "Two commands"): how
many pytest workers each Sphinx environment gets, and when an environment is installed
into again. The shell functions are run by bash as the script defines them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import PROJECT

SCRIPT = PROJECT / "scripts" / "test"


def _function(name: str) -> str:
    """The text of the shell function ``name`` in ``scripts/test``."""
    text = SCRIPT.read_text(encoding="utf-8")
    found = re.search(rf"^{name}\(\) {{.*?^}}$", text, flags=re.S | re.M)
    assert found, f"scripts/test has no function {name}"
    return found.group(0)


def workers(cpus: int, load: float, chosen: str | None = None) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SGA_TEST_WORKERS"}
    if chosen is not None:
        env["SGA_TEST_WORKERS"] = chosen
    done = subprocess.run(["bash", "-c", f"{_function('test_workers')}\n"
                                         f"test_workers {cpus} {load}"],
                          capture_output=True, text=True, env=env, check=True, timeout=30)
    return done.stdout.strip(), done.stderr.strip()


@pytest.mark.parametrize(("cpus", "load", "expected"), [
    (2, 0.3, "2"),   # the two environments one after the other: both cores
    (2, 1.9, "2"),   # its own installs just ran
    (2, 2.7, "1"),   # a second scripts/test is running: no workers
    (1, 0.0, "1"),
    (4, 0.5, "2"),   # the environments at once: half the cores each
    (6, 0.5, "3"),
    (16, 1.0, "4"),  # at most 4: more would make each module's builds again for little
    (16, 16.0, "1"),
])
def test_the_workers_follow_the_cores_and_the_load(cpus, load, expected):
    assert workers(cpus, load) == (expected, "")


def test_sga_test_workers_chooses_and_a_wrong_value_is_said_and_ignored():
    assert workers(2, 5.0, "3") == ("3", "")
    number, said = workers(2, 0.3, "two")
    assert number == "2"
    assert said == ("== SGA_TEST_WORKERS=two is not a number of workers (1, 2, ...): "
                    "chosen as without it")
    assert workers(2, 0.3, "0")[0] == "2"


def test_an_environment_is_installed_into_again_only_when_asked_for_other_things(tmp_path):
    """``make_venv`` (``scripts/_venv.sh``): pip runs for a new environment, not again
    for the same arguments and pyproject.toml, again for other arguments, an edited
    pyproject.toml or ``SGA_REINSTALL=1``, and removes rfc3987-syntax after each install.
    A fake interpreter logs pip's calls."""
    log = tmp_path / "pip.log"
    python = tmp_path / "python3"
    # 'python -m venv DIR' makes DIR/bin/python (this script again); '-c' says a version;
    # '-m pip' is logged
    python.write_text(f"""#!/bin/bash
case "$1" in
  -m) if [ "$2" = venv ]; then mkdir -p "${{@: -1}}/bin"; cp "$0" "${{@: -1}}/bin/python"
      else echo "$*" >> {log}; fi ;;
  -c) echo 3 12 ;;
esac
""", encoding="utf-8")
    python.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    helpers = tmp_path / "_venv.sh"  # a copy, to edit
    shutil.copyfile(PROJECT / "scripts" / "_venv.sh", helpers)

    def make_venv(*args: str, **env: str) -> int:
        done = subprocess.run(
            ["bash", "-c", f'source "{helpers}" && '
                           f'make_venv --python "{python}" .venv-x "$@"', "make_venv", *args],
            cwd=project, capture_output=True, text=True, timeout=60,
            env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        installs = sum(1 for call in calls
                       if call.startswith("-m pip install") and "--upgrade pip" not in call)
        # each install is followed by the removal of the slow "iri" format checker
        # (drop_iri_checker), and only then is the environment marked up to date
        drops = [call for call in calls if call.startswith("-m pip uninstall")]
        assert drops == ["-m pip uninstall -y -q rfc3987-syntax"] * installs, calls
        return installs

    assert make_venv("-e", ".[test]") == 1  # a new environment
    assert make_venv("-e", ".[test]") == 0  # the same: up to date
    assert make_venv("-e", ".[test]", "extra==1") == 1  # other arguments
    assert make_venv("-e", ".[test]", "extra==1") == 0
    (project / "pyproject.toml").write_text("[project]\nname = 'y'\n", encoding="utf-8")
    assert make_venv("-e", ".[test]", "extra==1") == 1  # pyproject.toml changed
    assert make_venv("-e", ".[test]", "extra==1", SGA_REINSTALL="1") == 1
    assert make_venv("-e", ".[test]", "extra==1") == 0
    with helpers.open("a", encoding="utf-8") as file:  # how environments are made changed
        file.write("# edited\n")
    assert make_venv("-e", ".[test]", "extra==1") == 1
    assert Path(project / ".venv-x" / ".sga-installed").is_file()
