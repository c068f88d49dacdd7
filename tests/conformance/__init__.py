"""Upstream scheduler test tables, ported row by row, as the fallback placer's conformance suite.

Layout: `objects` builds plain Kubernetes objects; `harness` holds the row type and runs a row;
`adapter` is the one place that talks to the placer; `rows_*` hold the ported tables, one module
per upstream area; `not_honoured` lists, with reasons, the rows the placer does not pass today.
The package is imported as `conformance` (pytest puts `tests/` on the path for it).
"""
