"""Go (RE2) regular expressions, as Volcano evaluates HyperNode `regexMatch.pattern`.

Python's `re` both accepts patterns Go rejects (backreferences, lookaround) and rejects some
Go accepts, so every place that matches a HyperNode pattern goes through here.

Memory is bounded, whatever the cluster stores: a pattern longer than MAX_PATTERN_LENGTH is
refused (the webhook denies it naming the field; a stored one matches nothing), each compiled
expression may use at most MAX_MEMORY_PER_PATTERN (RE2's `max_mem`: program and match-time
DFA cache together), and the cache of compiled expressions holds at most MAX_CACHED_PATTERNS,
evicting the least recently used, so it can never grow past their product.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import re2

GoRegexError = re2.error

MAX_PATTERN_LENGTH = 4096
"""Characters in one pattern. A node-name pattern is tens of characters; an alternation of a
few hundred node names still fits."""
MAX_PATTERN_CHARS_PER_HYPERNODE = 64 * 1024
"""regexMatch characters one HyperNode may carry in all: compiling is the admission's CPU cost
(hundreds of patterns at MAX_PATTERN_LENGTH take seconds on the webhook's worker thread)."""

MAX_MEMORY_PER_PATTERN = 256 * 1024
"""RE2 `max_mem` of one compiled expression (bytes): a pattern whose program needs more does
not compile, and matching beyond it falls back to a slower, memory-free algorithm."""
MAX_CACHED_PATTERNS = 256
"""Compiled expressions kept: at most MAX_CACHED_PATTERNS x MAX_MEMORY_PER_PATTERN bytes."""

_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()
"""Rules may run on worker threads (large reviews are judged off the event loop)."""


class PatternTooLongError(GoRegexError):  # type: ignore[misc,valid-type]  # re2.error is untyped
    """A pattern beyond MAX_PATTERN_LENGTH characters."""

    def __init__(self, length: int) -> None:
        super().__init__(f"pattern of {length} characters; at most {MAX_PATTERN_LENGTH} are allowed")


def compile_go_regex(pattern: str) -> Any:
    """Compile with RE2; raises GoRegexError when Go's regexp would refuse the pattern, or
    PatternTooLongError beyond MAX_PATTERN_LENGTH characters."""
    with _cache_lock:
        compiled = _cache.get(pattern)
        if compiled is not None:
            _cache.move_to_end(pattern)
            return compiled
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternTooLongError(len(pattern))
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_MEMORY_PER_PATTERN
    compiled = re2.compile(pattern, options)
    with _cache_lock:
        _cache[pattern] = compiled
        while len(_cache) > MAX_CACHED_PATTERNS:
            _cache.popitem(last=False)
    return compiled


def cached_patterns() -> int:
    """How many compiled expressions the cache holds now."""
    return len(_cache)


def regex_matches(pattern: str, names: Iterable[str]) -> list[str]:
    """Names the pattern matches the way Volcano does (Go MatchString: unanchored search).
    A pattern that does not compile (or is too long) matches nothing."""
    try:
        rx = compile_go_regex(pattern)
    except GoRegexError:
        return []
    return [n for n in names if rx.search(n)]
