"""Logging set-up: one pipeline for every line the process writes.

structlog's events and the standard `logging` records of libraries (aiohttp's access log,
kubernetes_asyncio, asyncio) go through the same processors (level, timestamp, exception
formatting) and the same renderer, on one handler on stderr: JSON lines under
`--log-format json` (the default off a terminal), readable console lines on one. A library's
record keeps its logger's name under `logger`, so its lines can be told apart.
"""

from __future__ import annotations

import logging
import sys

import structlog

SHARED: tuple[structlog.types.Processor, ...] = (
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
)
"""What every line gets, whichever API wrote it."""


def configure(*, level: str = "info", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    number = getattr(logging, level.upper(), logging.INFO)
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer(sort_keys=True)
        if json_output
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        # Records from `logging` arrive without structlog's chain: give them the same fields,
        # their logger's name, and their `extra` fields.
        foreign_pre_chain=[
            *SHARED,
            structlog.stdlib.add_logger_name,
            structlog.stdlib.ExtraAdder(),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):  # a second configure() replaces, never doubles, the output
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(number)
    structlog.configure(
        processors=[*SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
