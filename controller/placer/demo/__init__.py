"""Demo scenarios for `topobridge simulate` (and `make demo`): the seed documents' worked examples
as plain Kubernetes objects."""
