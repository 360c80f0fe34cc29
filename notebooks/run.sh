#!/usr/bin/env bash
# Runs notebooks/validation.ipynb headless against a scorecard:
#
#   notebooks/run.sh SCORECARD.json [TIMESERIES.csv]
#
# Creates notebooks/.venv (git-ignored) on first use, installs
# notebooks/requirements.txt into it (again whenever that file changes), then
# executes the notebook with nbconvert into a temporary folder; exits non-zero
# if any cell raises. Needs Python 3.11 or newer with venv and pip (Debian:
# apt-get install python3-venv); PYTHON overrides the interpreter.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: notebooks/run.sh SCORECARD.json [TIMESERIES.csv]" >&2
  exit 2
fi
for file in "$@"; do
  [[ -f "$file" ]] || { echo "notebooks/run.sh: no such file: $file" >&2; exit 2; }
done
if [[ $# -eq 2 && ! -f "$(dirname "$2")/complete.json" ]]; then
  echo "notebooks/run.sh: $(dirname "$2") has no complete.json: not a results folder twin finished writing (an interrupted run's?)" >&2
  exit 2
fi
# Absolute paths: the kernel runs in notebooks/, not in the caller's folder.
export TWIN_SCORECARD="$(realpath "$1")"
if [[ $# -eq 2 ]]; then
  export TWIN_TIMESERIES="$(realpath "$2")"
else
  unset TWIN_TIMESERIES
fi

python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "notebooks/run.sh: $python is $("$python" --version 2>&1); the notebook needs Python 3.11+" >&2
  exit 1
fi

venv="$here/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
  if ! "$python" -m venv "$venv"; then
    rm -rf "$venv"
    echo "notebooks/run.sh: '$python -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
    exit 1
  fi
fi
if ! cmp -s "$here/requirements.txt" "$venv/installed-requirements.txt"; then
  echo "== installing notebooks/requirements.txt into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/installed-requirements.txt"
fi

out="$(mktemp -d "${TMPDIR:-/tmp}/twin-notebook.XXXXXX")"
# Headless: the inline backend renders with Agg and needs no display; a fresh
# matplotlib config and font cache (only the fonts the wheel ships) per run.
unset DISPLAY
export MPLCONFIGDIR="$out/matplotlib"
export JUPYTER_PREFER_ENV_PATH=1
export PATH="$venv/bin:$PATH"
echo "== executing notebooks/validation.ipynb on $TWIN_SCORECARD"
"$venv/bin/jupyter" nbconvert --to notebook --execute \
  --ExecutePreprocessor.timeout=600 \
  --KernelManager.transport=ipc --KernelManager.ip="$out/kernel" \
  --output-dir "$out" "$here/validation.ipynb"
echo "executed notebook: $out/validation.ipynb"
