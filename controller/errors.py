"""Errors the controller raises, drawn as a tree so callers can choose how broadly to catch.

* ControllerError
  + ApiError                 any failed Kubernetes call (.status, .reason, .message)
    - BadRequestError        400
    - UnauthorizedError      401
    - ForbiddenError         403: RBAC is missing a verb (see controller/rbac.py)
    - NotFoundError          404
    - ConflictError          409: re-read, then retry
      - AlreadyExistsError   409 with reason AlreadyExists
    - GoneError              410: the resourceVersion is too old; re-list
    - InvalidError           422: the object failed validation
    - TooManyRequestsError   429
    - ServerError            5xx
  + TransportError           no HTTP answer at all (refused, reset, timed out): retry
  + UnreadableObjectError    the answer is an object nested too deeply to read (see
                             `controller.kube.readable`): the object's problem, not retried
  + LeadershipLost           the lease was lost; everything in the leading scope stops
  + ConfigError              a setting is unusable (bad timings, no kubeconfig)
  + topobridge.devcluster.ControlPlaneError
                             the local control plane could not start or stop

Foreign errors (kubernetes_asyncio's ApiException, aiohttp's ClientError) stop at the
boundary in `controller.kube` and never travel further.

This tree is apart from the pure one (`translations.errors.TopobridgeError`: a user's object
cannot be used). Catching one never catches the other, so an API failure (a Conflict, a
timeout) is retried by the work queue and never reported to a user as a mistake in their spec.
"""

from __future__ import annotations

from typing import Any

from translations import jsontext


class ControllerError(Exception):
    """Base of the controller's own errors: I/O and configuration, never a bad user object."""


class ApiError(ControllerError):
    """The API server answered with an error status."""

    def __init__(
        self, message: str, *, status: int, reason: str = "", details: dict[str, Any] | None = None
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.details = details or {}
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")


class BadRequestError(ApiError):
    pass


class UnauthorizedError(ApiError):
    pass


class ForbiddenError(ApiError):
    pass


class NotFoundError(ApiError):
    pass


class ConflictError(ApiError):
    pass


class AlreadyExistsError(ConflictError):
    pass


class GoneError(ApiError):
    pass


class InvalidError(ApiError):
    pass


class TooManyRequestsError(ApiError):
    pass


class ServerError(ApiError):
    pass


class TransportError(ControllerError):
    """The request got no HTTP answer: connection refused or reset, or a timeout."""


class UnreadableObjectError(ControllerError):
    """The API server returned an object holding a value nested deeper than topobridge reads."""


class LeadershipLost(ControllerError):
    """This replica no longer holds the lease."""


class ConfigError(ControllerError):
    """A setting cannot be used as given; the message says which and why."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    422: InvalidError,
    429: TooManyRequestsError,
}

_BODY_LIMIT = 2000


def api_error(
    status: int, body: str | bytes | dict[str, Any] | None, *, fallback_reason: str = ""
) -> ApiError:
    """The most specific ApiError for an HTTP status and a `Status` body (trimmed for logs)."""
    parsed: dict[str, Any] = {}
    if isinstance(body, dict):
        parsed = body
    elif body:
        raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
        try:
            loaded = jsontext.loads(raw)
            parsed = loaded if isinstance(loaded, dict) else {}
        except ValueError:  # TooDeep included: jsontext never raises RecursionError
            parsed = {"message": raw.decode("utf-8", "replace")[:_BODY_LIMIT]}
    reason = str(parsed.get("reason") or fallback_reason or "")
    message = str(parsed.get("message") or fallback_reason or "API call failed")[:_BODY_LIMIT]
    details = parsed.get("details") if isinstance(parsed.get("details"), dict) else None
    cls: type[ApiError]
    if status == 409 and reason == "AlreadyExists":
        cls = AlreadyExistsError
    elif status >= 500:
        cls = ServerError
    else:
        cls = _BY_STATUS.get(status, ApiError)
    return cls(message, status=status, reason=reason, details=details)


def is_retryable(exc: BaseException) -> bool:
    """True for failures a retry with backoff may fix (transport trouble, 429, 5xx, conflicts)."""
    return isinstance(exc, TransportError | TooManyRequestsError | ServerError | ConflictError)
