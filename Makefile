# The README's commands. Each sets the environment up first (idempotent), in
# two stages: `setup` is the pretraining stack (mmcv without compiled ops
# unless a cached wheel with them exists), enough for the demo; `setup-full`
# adds mmcv's compiled ops (built once, cached), which mmdet/mmseg and the
# test suite need.
PY := .venv/bin/python
export OMP_NUM_THREADS ?= 2

.PHONY: setup setup-full demo test test-studies test-package test-slow gpu-check checks lint docs results

setup:
	bash tools/setup_env.sh

setup-full:
	bash tools/setup_env.sh --full

# The main job: SiameseIM pretraining + evaluation on Fashion-MNIST (CPU).
# Its results file is work_dirs/demo/demo.json; the published figures
# (projects/demo/results/demo.json) are rewritten only by DEMO_ARGS=--publish.
demo: setup
	$(PY) projects/demo/tools/demo.py $(DEMO_ARGS)

# The plugin's tests, as CI runs them: what a contributor runs between two
# edits, within 10 minutes on 2 cores. Prints the ten slowest tests and the
# wall time; every test's duration goes to work_dirs/test_durations/.
# pytest's "no tests collected" exit code 5 fails too.
TEST_RUN = code=$$?; \
	if [ $$code -eq 5 ]; then echo "no tests were collected"; exit 1; fi; exit $$code
# Both cores: two pytest-xdist workers of one thread each, a test file per
# worker at a time (its module fixtures built once).
PYTEST_PARALLEL = OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadfile
test: setup-full
	$(PYTEST_PARALLEL) -m "not slow and not studies and not package" --durations=10 tests; $(TEST_RUN)

# The studies' tests (conftest.py STUDY_TESTS: every project's tests,
# projects/*/tests, and the plugin's tests that run a study), which CI also
# runs.
test-studies: setup-full
	$(PYTEST_PARALLEL) -m "studies and not slow" --durations=10 tests projects; $(TEST_RUN)

# The released package's tests (conftest.py PACKAGE_TESTS): the wheel
# built and installed away from the checkout, the documented install run as
# written in a fresh virtual environment (from the package index), mim's
# launchers on two CPU processes. CI runs them.
test-package: setup-full
	$(PYTEST_PARALLEL) -m "package and not slow" --durations=10 tests; $(TEST_RUN)

# The slow tier (the heavy preflights at real size among them); prints its
# total time.
test-slow: setup-full
	@start=$$(date +%s); $(PY) -m pytest -q -m slow tests projects; code=$$?; \
	echo "make test-slow: $$(( $$(date +%s) - start )) s in total (exit $$code)"; \
	exit $$code

# Every GPU figure in one command, inside 30 minutes of device time
# (projects/gpu_check/README.md); without CUDA it says so and exits 0.
# GPU_CHECK_ARGS="--dry-run --gpus 2" lists the commands.
gpu-check: setup-full
	$(PY) projects/gpu_check/tools/gpu_check.py $(GPU_CHECK_ARGS)

checks: setup-full
	../shared/checks/run

# The ecosystem's lint (.pre-commit-config.yaml: flake8, isort, yapf,
# codespell, docformatter and pre-commit-hooks' fixers; settings in
# setup.cfg), every hook a tool of requirements/lint.txt installed into the
# venv: no hook repository is fetched. The tools are installed when one is
# missing or not at its pinned version, into .venv, created when there is
# none yet (CI lints first; tools/setup_env.sh then installs the stack into
# the same venv). The fixers rewrite files in place and fail when they did
# (the diff is shown; rerun to see it pass). LINT_FILES="a.py b.py" lints
# only those files; empty, every tracked file.
LINT_FILES ?=
lint:
	@test -x $(PY) || $${PYTHON:-$$(command -v python3.11 || command -v python3)} -m venv .venv
	@$(PY) -c "import sys; from importlib.metadata import version; \
		pins = [line.split('#')[0].split('==') for line in open('requirements/lint.txt')]; \
		sys.exit(any(len(p) == 2 and version(p[0].strip()) != p[1].strip() for p in pins))" 2>/dev/null \
		|| $(PY) -m pip install -q --disable-pip-version-check -r requirements/lint.txt
	@# yapf caches its grammar as a pickle in the user's cache, rebuilt when the
	@# venv's grammar file is newer (a fresh venv, as in CI); its parallel
	@# processes then race, one reading another's half-written pickle
	@# (EOFError). One process rebuilds it first, so pre-commit's only read it.
	@$(PY) -c "import yapf.yapflib.yapf_api"
	PATH="$(abspath $(dir $(PY))):$$PATH" $(PY) -m pre_commit run --show-diff-on-failure \
		$(if $(strip $(LINT_FILES)),--files $(LINT_FILES),--all-files)

# The documentation site: Sphinx + MyST from docs/ (warnings are errors; the
# API reference imports mmsiameseim.det / .seg, hence the full stack), then
# the offline link check of README.md, docs/ and configs/ READMEs (CI has no
# internet for Sphinx's linkcheck). The docs requirements come with
# `make setup-full`; `make setup` stays small.
docs: setup-full
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html
	$(PY) tools/docs/check_links.py

# Results files (NAME.json: data + date, machine, command, commit; each in
# the results/ folder of the project that takes it, the plugin's test runs in
# docs/results: projects/common/results.py RESULTS_HOMES) and the tables
# rendered from them into README.md, docs/, the config and project READMEs.
# `make results` reruns the quick ones (the UniGrad and attention
# benchmarks, the fault matrix from the test markers) and renders every
# block; the long ones are their own commands:
#   make demo DEMO_ARGS=--publish                       -> demo.json
#   $(PY) projects/table3/tools/ablation_table3.py      -> table3.json
#   $(PY) projects/side_by_side/tools/side_by_side.py --official-repo PATH
#                                                       -> side_by_side.json
#   $(PY) projects/speed/tools/pretrain.py --results-dir projects/speed/results
#   $(PY) projects/downstream_miniature/tools/downstream_miniature.py \
#       [--holdout]
#                                  -> downstream_miniature[_holdout].json
#   $(PY) projects/downstream_miniature/tools/collect_downstream_ablations.py
#                                  -> downstream_miniature_ablations.json
#   MMSIAMESEIM_RESULTS=1 make test                     -> tests.json
#   MMSIAMESEIM_RESULTS=1 make test-studies             -> tests_studies.json
# (the fault and person matrices come from the collection, as here)
# `$(PY) projects/common/tools/render_results.py --check` fails on any block
# that differs from its source or has none.
results: setup
	$(PY) projects/speed/tools/unigrad.py --results-dir projects/speed/results
	$(PY) projects/speed/tools/attention.py --results-dir projects/speed/results
	MMSIAMESEIM_RESULTS=1 $(PY) -m pytest -q --collect-only tests projects >/dev/null
	$(PY) projects/common/tools/render_results.py
