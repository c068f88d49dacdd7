"""End-to-end scenarios and the tools around them: the shared scenario files, the local
control-plane target, the kind target's manifests, and the `make demo` driver.

Not part of the installed product: these modules drive topobridge from outside, the way a
user and a cluster would (including a kubelet stand-in for API-only nodes).
"""
