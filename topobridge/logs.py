"""structlog set-up: JSON lines when not on a terminal, readable console output on one."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(*, level: str = "info", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer(sort_keys=True) if json_output else structlog.dev.ConsoleRenderer(colors=False)
    )
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), stream=sys.stderr, format="%(message)s")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
