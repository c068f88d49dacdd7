"""Pure models of every foreign schema topobridge speaks, the topology tree, and the
translations between dialects.

Nothing in this package performs I/O or imports the Kubernetes client: objects come in as
plain dicts (validated once, at the edge, into these models) and leave the same way.
"""
