"""topobridge: the command line, logging and the local development control plane.

The domain lives in `translations` (pure models and translations), `webhooks` (validation
rules and the admission server) and `controller` (watch loops, the placer engine and the
scheduler runtime); this package only wires them to a terminal.
"""

__version__ = "0.1.0"
