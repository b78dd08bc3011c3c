# The README's commands. Both set the environment up first (idempotent).
PY := .venv/bin/python
export OMP_NUM_THREADS ?= 2

.PHONY: setup demo test test-slow checks

setup:
	bash tools/setup_env.sh

# The main job: SiameseIM pretraining + evaluation on Fashion-MNIST (CPU).
demo: setup
	$(PY) tools/demo.py $(DEMO_ARGS)

# The tests CI runs (pytest's "no tests collected" exit code 5 fails too).
test: setup
	$(PY) -m pytest -q tests; code=$$?; \
	if [ $$code -eq 5 ]; then echo "no tests were collected"; exit 1; fi; exit $$code

test-slow: setup
	$(PY) -m pytest -q -m slow tests

checks: setup
	../shared/checks/run
