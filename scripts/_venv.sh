# Helpers for scripts/test and scripts/build-docs (sourced, not run).

# make_venv [--python INTERPRETER] DIR PIP-ARGS...: a virtual environment with
# these packages installed, made with INTERPRETER (default: python3); one made
# with another Python version is made afresh.  pip's output goes to DIR.log and
# is shown only when the install fails.  An environment that already holds what
# these arguments, pyproject.toml and this file asked for (DIR/.sga-installed says
# so) is not installed into again: a second run on a laptop starts its tests at once
# (the package is installed editable, so an edit of its code needs no install).
# SGA_REINSTALL=1 installs anyway (after removing a package by hand, say).
make_venv() {
  local python=python3
  if [ "$1" = --python ]; then
    python=$2
    shift 2
  fi
  local venv=$1
  shift
  local version='import sys; print(*sys.version_info[:2])'
  if [ ! -x "$venv/bin/python" ] ||
     [ "$("$venv/bin/python" -c "$version" 2>/dev/null)" != "$("$python" -c "$version")" ]; then
    "$python" -m venv --clear "$venv"
  fi
  local stamp="$venv/.sga-installed" wanted
  # what was asked, pyproject.toml, and this file (how an environment is made: a change
  # here, such as drop_iri_checker, reaches environments made before it)
  wanted="$* $(cat pyproject.toml "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
  if [ "${SGA_REINSTALL:-}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    echo "== $venv: up to date ($*)"
    return 0
  fi
  rm -f "$stamp"
  echo "== installing into $venv: $*"
  if ! { "$venv/bin/python" -m pip install -q --upgrade pip &&
         "$venv/bin/python" -m pip install -q "$@"; } >"$venv.log" 2>&1; then
    grep -v "^WARNING: Location" "$venv.log" | tail -40
    echo "pip install failed (full log: $venv.log)" >&2
    return 1
  fi
  drop_iri_checker "$venv"
  printf '%s\n' "$wanted" >"$stamp"
}

# drop_iri_checker DIR: removes rfc3987-syntax from the environment. jupyter_server's
# jupyter-events asks for jsonschema's non-GPL format checkers, and jsonschema imports
# them all when it is imported: rfc3987-syntax builds its Lark parsers then, 1.8 s of
# every process that imports nbformat or jupyter_server here (every Sphinx build the
# tests and the benchmark start, the Jupyter server of every mystmd build). It checks
# only the "iri" formats, which no Jupyter schema and no test uses; without it jsonschema
# skips them (python-jsonschema/jsonschema#1428).
drop_iri_checker() {
  "$1/bin/python" -m pip uninstall -y -q rfc3987-syntax >>"$1.log" 2>&1 || true
}

# ensure_chromium: Debian's Chromium for the browser tests (Playwright drives it).
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's chromium for the browser tests"
    $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq chromium >/dev/null
  else
    echo "== chromium not found and no apt-get: browser tests will be skipped" >&2
  fi
}

# ensure_mystmd: mystmd (the engine of Jupyter Book 2), pinned, from npm into .mystmd/
# (tests/integration/test_mystmd.py builds a book with it; skipped where node and npm
# are missing).
MYSTMD_VERSION=1.8.3
ensure_mystmd() {
  local myst=.mystmd/node_modules/.bin/myst
  [ -x "$myst" ] && [ "$("$myst" --version 2>/dev/null)" = "v$MYSTMD_VERSION" ] && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "== npm not found: the mystmd tests will be skipped" >&2
    return 0
  fi
  echo "== installing mystmd $MYSTMD_VERSION into .mystmd/"
  if ! npm install --prefix .mystmd --no-audit --no-fund "mystmd@$MYSTMD_VERSION" \
       >.mystmd.log 2>&1; then
    tail -20 .mystmd.log
    echo "npm install failed (full log: .mystmd.log); the mystmd tests will be skipped" >&2
  fi
}

# -- quantecon-book-theme on Python 3.13 (issue 26 item 12) ---------------------------
# quantecon-book-theme's current releases need Python >= 3.12 (QuantEcon's GPU
# runners use 3.13), the machine's python3 may be older: scripts/build-docs and
# scripts/test also build with it when a Python 3.13 (else 3.12) is found.

# the theme's current release on PyPI (`python3.13 -m pip index versions
# quantecon-book-theme`), pinned so that a new release changes CI only by a commit
QE_THEME="quantecon-book-theme==0.22.1"

# modern_python: prints the path of a Python 3.13 (else 3.12) and succeeds, or
# fails silently.  Looked for as python3.13 / python3.12 on PATH (pyenv's shims
# included) and in pyenv's versions folder; QE_PYTHON=PATH chooses one,
# QE_PYTHON=none finds none (to see the skip).
modern_python() {
  local minor candidate pyenv_root
  if [ -n "${QE_PYTHON:-}" ]; then
    [ "$QE_PYTHON" = none ] && return 1
    _python_is_modern "$QE_PYTHON" && echo "$QE_PYTHON" && return 0
    return 1
  fi
  pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  for minor in 3.13 3.12; do
    for candidate in "$(command -v "python$minor" 2>/dev/null)" \
                     "$pyenv_root"/versions/"$minor"*/bin/python3 \
                     /root/.pyenv/versions/"$minor"*/bin/python3; do
      [ -n "$candidate" ] && _python_is_modern "$candidate" || continue
      # the real interpreter, not pyenv's shim (which depends on the directory)
      "$candidate" -c 'import sys; print(sys.executable)'
      return 0
    done
  done
  return 1
}

# _python_is_modern PATH: PATH runs and is Python 3.12 or newer.
_python_is_modern() {
  [ -x "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null
}
