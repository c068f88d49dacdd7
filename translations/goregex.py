"""Go (RE2) regular expressions, as Volcano evaluates HyperNode `regexMatch.pattern`.

Python's `re` both accepts patterns Go rejects (backreferences, lookaround) and rejects some
Go accepts, so every place that matches a HyperNode pattern goes through here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import re2

GoRegexError = re2.error


@functools.lru_cache(maxsize=1024)
def compile_go_regex(pattern: str) -> Any:
    """Compile with RE2; raises GoRegexError when Go's regexp would refuse the pattern."""
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def regex_matches(pattern: str, names: Iterable[str]) -> list[str]:
    """Names the pattern matches the way Volcano does (Go MatchString: unanchored search).
    A pattern that does not compile matches nothing."""
    try:
        rx = compile_go_regex(pattern)
    except GoRegexError:
        return []
    return [n for n in names if rx.search(n)]
