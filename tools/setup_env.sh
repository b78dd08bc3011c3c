#!/usr/bin/env bash
# One set-up entry point: takes a fresh clone to a working environment, in two stages.
#
#   bash tools/setup_env.sh                   # the pretraining stack, enough for `make demo` (minutes):
#                                             #   .venv, torch, mmcv 2.1.0 (the cached wheel with compiled
#                                             #   ops if there is one, else mmcv-lite: the same Python files
#                                             #   without ops), mmpretrain, mmdet/mmseg/mim, mmsiameseim,
#                                             #   Fashion-MNIST
#   bash tools/setup_env.sh --full            # + mmcv's compiled ops (built once, about 15 minutes on 2
#                                             #   cores, then reused from the cache) and the documentation
#                                             #   tools (requirements/docs.txt): `make setup-full`,
#                                             #   `make test`, `make docs`
#   bash tools/setup_env.sh --check [--full]  # only verify an existing environment (--full: ops required)
#
# Environment variables:
#   MMSIAMESEIM_CACHE   where built wheels are cached (default ~/.cache/mmsiameseim);
#                       the mmcv wheel is keyed by the torch version it was built against.
#   FMNIST_DIR          where the un-gzipped Fashion-MNIST files go (default data/fashion_mnist)
#   PYTHON              interpreter used to create the venv (default python3.11, else python3)
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VENV="$ROOT/.venv"
CACHE=${MMSIAMESEIM_CACHE:-$HOME/.cache/mmsiameseim}
FMNIST_DIR=${FMNIST_DIR:-$ROOT/data/fashion_mnist}
TORCH_VERSION=$(sed -n 's/^torch==//p' requirements/runtime.txt)
MMCV_VERSION=$(sed -n 's/^mmcv==//p' requirements/mmcv.txt)
WHEELS="$CACHE/wheels/mmcv-$MMCV_VERSION-torch-$TORCH_VERSION-py311"
STEP="start"

FULL=0
CHECK=0
for arg in "$@"; do
  case "$arg" in
    --full) FULL=1 ;;
    --check) CHECK=1 ;;
    -h|--help) sed -n '2,/^set -Eeuo/{/^set -Eeuo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "[setup] unknown option '$arg' (expected --full, --check or --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
trap 'printf "\033[31m[setup] FAILED at step: %s (line %s)\033[0m\n" "$STEP" "$LINENO" >&2' ERR

step() { STEP="$1"; say "$1"; }

# ---------------------------------------------------------------- venv
step "virtual environment in .venv"
if [[ ! -x "$VENV/bin/python" ]]; then
  if (( CHECK )); then echo "no environment in $VENV: run 'bash tools/setup_env.sh' first" >&2; false; fi
  PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
  "$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    || { echo "Python 3.11 is required (got $("$PY" --version))" >&2; false; }
  "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
# pip's stderr without what is harmless here: the "Location ... is ignored"
# notes of local indexes, and two dependency conflicts pip's resolver prints in
# red on a set-up that succeeded: openmim declares opendatalab (installed
# --no-deps on purpose, requirements/mim.txt) and torch wants a newer
# setuptools than the mmcv build (only while --full builds). Any other
# conflict is shown, with pip's header line.
pip_stderr() {
  awk '/^WARNING: Location/ {next}
       /^ERROR: pip.s dependency resolver does not currently/ {head = $0; next}
       /^openmim [^ ]+ requires opendatalab/ || /^torch [^ ]+ requires setuptools/ {next}
       {if (head != "") {print head; head = ""}; print}'
}
pipq() { "$VPY" -m pip --disable-pip-version-check -q "$@" 2> >(pip_stderr >&2); }

mmcv_ok() { "$VPY" -c "import mmcv; assert mmcv.__version__ == '$MMCV_VERSION'" 2>/dev/null; }
ops_ok() { "$VPY" -c "import mmcv, mmcv.ops; assert mmcv.__version__ == '$MMCV_VERSION'" 2>/dev/null; }
have_wheel() { ls "$WHEELS"/mmcv-*.whl >/dev/null 2>&1; }
# The full wheel replaces mmcv-lite. Both own the same mmcv/ files, so the lite
# distribution goes first (removing either one later would break the other).
install_full_wheel() {
  say "installing $(ls "$WHEELS"/mmcv-*.whl)"
  if "$VPY" -m pip --disable-pip-version-check show -q mmcv-lite >/dev/null 2>&1; then
    pipq uninstall -y mmcv-lite
  fi
  pipq install --no-deps --force-reinstall "$WHEELS"/mmcv-*.whl
}

# A stamp over the requirement files makes a second run skip the installs.
STAMP="$VENV/.mmsiameseim-setup"
WANT=$(cat requirements/*.txt setup.cfg setup.py | sha256sum | cut -c1-16)
if (( ! CHECK )) && [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  step "torch $TORCH_VERSION + runtime requirements"
  pipq install -r requirements/runtime.txt -r requirements/tests.txt

  step "mmcv $MMCV_VERSION (the cached wheel with ops if there is one, else mmcv-lite)"
  if ops_ok; then
    say "mmcv $MMCV_VERSION with compiled ops is installed"
  elif have_wheel; then
    install_full_wheel
  elif ! mmcv_ok; then
    say "no cached mmcv wheel in $WHEELS: installing mmcv-lite $MMCV_VERSION (the ops come with --full)"
    pipq install --no-deps "mmcv-lite==$MMCV_VERSION"
  fi
  pipq install -r requirements/mmcv_deps.txt

  step "mmdet, mmseg, mim and friends"
  pipq install -r requirements/optional.txt
  pipq install --no-deps openmim==0.3.9
  pipq install $(grep -v -e '^#' -e '^openmim' requirements/mim.txt)

  step "mmsiameseim (editable)"
  pipq install --no-deps --no-build-isolation -e .
  echo "$WANT" > "$STAMP"
elif (( ! CHECK )); then
  say "requirements unchanged since the last set-up: reusing .venv"
fi

# ---------------------------------------------------------------- the projects
# The wheel is mmsiameseim alone (setup.cfg); in the checkout the studies
# (projects/) import each other and the tests' helpers, so the venv's path
# holds the checkout's root (a .pth file, rewritten at every set-up).
if (( ! CHECK )); then
  step "the checkout's studies (projects) on the venv's path"
  SITE=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$ROOT" > "$SITE/mmsiameseim_checkout.pth"
fi

# ---------------------------------------------------------------- compiled ops (--full)
if (( FULL && ! CHECK )); then
  step "mmcv $MMCV_VERSION compiled ops (built once, cached by torch version)"
  if ops_ok; then
    say "compiled ops are installed"
  else
    if ! have_wheel; then
      say "no cached mmcv wheel in $WHEELS: building from source (about 15 minutes on 2 cores)"
      mkdir -p "$WHEELS"
      # mmcv's setup.py needs pkg_resources from setuptools<70; torch wants >=77 at run time,
      # so the old setuptools is only there for the build and replaced right after it.
      pipq install -r requirements/build.txt
      SRC=$(mktemp -d)
      pipq download --no-deps --no-binary :all: -d "$SRC" "mmcv==$MMCV_VERSION"
      tar xzf "$SRC"/mmcv-*.tar.gz -C "$SRC"
      # torch >= 2.10 headers require C++20; mmcv 2.1.0 hard-codes -std=c++17.
      sed -i 's/-std=c++17/-std=c++20/g' "$SRC/mmcv-$MMCV_VERSION/setup.py"
      (cd "$SRC/mmcv-$MMCV_VERSION" && MMCV_WITH_OPS=1 FORCE_CUDA=0 MAX_JOBS=${MAX_JOBS:-$(nproc)} \
        "$VPY" -m pip --disable-pip-version-check wheel --no-build-isolation --no-deps \
        -w "$WHEELS.tmp" . > "$SRC/build.log" 2>&1) \
        || { tail -n 40 "$SRC/build.log" >&2; echo "full build log: $SRC/build.log" >&2; false; }
      mv "$WHEELS.tmp"/mmcv-*.whl "$WHEELS"/ && rm -rf "$WHEELS.tmp" "$SRC"
    fi
    # Also after a build that was interrupted in an earlier run: back to torch's setuptools.
    pipq install -r requirements/runtime.txt
    install_full_wheel
    pipq install -r requirements/mmcv_deps.txt
  fi
fi

# ---------------------------------------------------------------- docs (--full)
# Sphinx, MyST and the theme for `make docs` and tests/test_docs; not needed by
# `make demo`, so the pretraining stage stays small.
if (( FULL && ! CHECK )); then
  step "documentation tools (requirements/docs.txt)"
  pipq install -r requirements/docs.txt
fi

# ---------------------------------------------------------------- data
step "Fashion-MNIST in $FMNIST_DIR"
FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
missing=()
for f in "${FILES[@]}"; do [[ -s "$FMNIST_DIR/$f" ]] || missing+=("$f"); done
if (( ${#missing[@]} )); then
  if ! dpkg -L dataset-fashion-mnist >/dev/null 2>&1 && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian package dataset-fashion-mnist"
    (apt-get install -y -q dataset-fashion-mnist >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q dataset-fashion-mnist >/dev/null; }) || true
  fi
  mkdir -p "$FMNIST_DIR"
  for f in "${missing[@]}"; do
    src=$(dpkg -L dataset-fashion-mnist 2>/dev/null | grep -E "/$f\.gz$" | head -n1 || true)
    if [[ -n "$src" && -s "$src" ]]; then
      gunzip -c "$src" > "$FMNIST_DIR/$f.part" && mv "$FMNIST_DIR/$f.part" "$FMNIST_DIR/$f"
    fi
  done
  missing=()
  for f in "${FILES[@]}"; do [[ -s "$FMNIST_DIR/$f" ]] || missing+=("$f"); done
  if (( ${#missing[@]} )); then
    STEP="Fashion-MNIST"
    echo "Fashion-MNIST is missing: ${missing[*]}" >&2
    echo "Install it with 'sudo apt-get install dataset-fashion-mnist' and rerun, or put the four" >&2
    echo "un-gzipped files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte," >&2
    echo "t10k-labels-idx1-ubyte into $FMNIST_DIR (set FMNIST_DIR to use another folder)." >&2
    false
  fi
fi

# ---------------------------------------------------------------- verify
step "verify the environment"
MMSIAMESEIM_FULL=$FULL "$VPY" - <<'EOF'
import importlib
import os

import torch, torchvision, mmengine, mmcv, mmpretrain
import mmsiameseim
try:
    importlib.import_module('mmcv._ext')
    ops = True
except ImportError as e:
    if os.environ['MMSIAMESEIM_FULL'] == '1':
        raise SystemExit(f"[setup] mmcv's compiled ops do not load: {e}; make setup-full builds them")
    ops = False
print(f'[setup] torch {torch.__version__}, torchvision {torchvision.__version__}, '
      f'mmengine {mmengine.__version__}, mmcv {mmcv.__version__} '
      f'{"with compiled ops" if ops else "without compiled ops"}, '
      f'mmpretrain {mmpretrain.__version__}, mmsiameseim {mmsiameseim.__version__}')
try:
    import mmdet, mmseg
    if ops:
        import mmcv.ops  # noqa: F401  (what mmdet's and mmseg's models import)
    print(f'[setup] mmdet {mmdet.__version__}, mmseg {mmseg.__version__}')
except ImportError as e:
    raise SystemExit(f'[setup] optional stack is broken: {e}')
if not ops:
    print('[setup] pretraining stack ready (make demo); the mmdet/mmseg models and '
          "make test need mmcv's compiled ops: make setup-full builds them")
EOF
# the studies' tools run as scripts, from any folder: the projects must import there
(cd / && "$VPY" -c 'import projects.common') \
  || { echo "[setup] projects does not import outside the checkout: rerun 'bash tools/setup_env.sh'" >&2; false; }
say "ready: activate with 'source .venv/bin/activate'"
