"""Hypothesis strategies for the tests, the fuzz run (`hack/fuzz.py`) and the benchmarks.

Not part of the wheel (pyproject's `packages.find` includes only the project's packages).
Import it as `tests.strategies.<module>` with the repository root on `sys.path`: `python -m
pytest` from the root puts it there (the README's and CI's command), and `hack/fuzz.py`
inserts it itself. `tests` has no `__init__.py` (pytest's rootdir conftest stays `conftest`),
so `tests` resolves as a namespace package and `tests.strategies` as a regular one.

* `primitives`: names, label keys and values, annotation texts and quantities the API server
  accepts, leaning on the edges (digit runs past Python's 4,300-digit `int()` limit, 253-char
  names, `10P` and `5Ei`, quantity strings a regular expression can stall on).
* `objects`: every kind the scheduler and the webhook read, as `kubectl get -o yaml` prints
  them (plain dicts), API-valid but adversarial; `hostile_clusters` mixes them all, and
  `ordinary_gangs` draws a small healthy gang with healthy nodes of its own that must still
  be placed beside them.
"""
