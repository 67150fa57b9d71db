# Helpers for scripts/test and scripts/build-docs (sourced, not run).

# make_venv DIR PIP-ARGS...: a virtual environment with these packages installed.
# pip's output goes to DIR.log and is shown only when the install fails.
make_venv() {
  local venv=$1
  shift
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  echo "== installing into $venv: $*"
  if ! { "$venv/bin/python" -m pip install -q --upgrade pip &&
         "$venv/bin/python" -m pip install -q "$@"; } >"$venv.log" 2>&1; then
    grep -v "^WARNING: Location" "$venv.log" | tail -40
    echo "pip install failed (full log: $venv.log)" >&2
    return 1
  fi
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
# (tests/test_mystmd.py builds a book with it; skipped where node and npm are missing).
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
