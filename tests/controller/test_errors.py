"""Foreign errors stop at the boundary: HTTP statuses and Status bodies become the most
specific ControllerError, with a trimmed message and the retry policy the callers rely on."""

from __future__ import annotations

import json

import pytest

from controller.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    ConflictError,
    ForbiddenError,
    GoneError,
    InvalidError,
    NotFoundError,
    ServerError,
    TooManyRequestsError,
    TransportError,
    api_error,
    is_retryable,
)


@pytest.mark.parametrize(
    ("status", "reason", "cls"),
    [
        (400, "BadRequest", BadRequestError),
        (403, "Forbidden", ForbiddenError),
        (404, "NotFound", NotFoundError),
        (409, "Conflict", ConflictError),
        (409, "AlreadyExists", AlreadyExistsError),
        (410, "Expired", GoneError),
        (422, "Invalid", InvalidError),
        (429, "TooManyRequests", TooManyRequestsError),
        (500, "InternalError", ServerError),
        (503, "ServiceUnavailable", ServerError),
        (418, "Teapot", ApiError),
    ],
    ids=lambda v: str(v) if not isinstance(v, type) else v.__name__,
)
def test_status_maps_to_the_most_specific_class(status: int, reason: str, cls: type[ApiError]) -> None:
    body = json.dumps(
        {"kind": "Status", "status": "Failure", "reason": reason, "message": f"m{status}", "code": status}
    )
    err = api_error(status, body)
    assert type(err) is cls
    assert (err.status, err.reason, err.message) == (status, reason, f"m{status}")
    assert str(err) == f"{status} {reason}: m{status}"


def test_non_json_body_is_trimmed_into_the_message() -> None:
    err = api_error(502, b"<html>" + b"x" * 10000)
    assert isinstance(err, ServerError) and err.message.startswith("<html>") and len(err.message) == 2000


def test_retry_policy() -> None:
    assert is_retryable(TransportError("reset"))
    assert is_retryable(api_error(429, None)) and is_retryable(api_error(503, None))
    assert is_retryable(api_error(409, json.dumps({"reason": "Conflict"})))
    assert not is_retryable(api_error(422, None)) and not is_retryable(api_error(404, None))
    assert not is_retryable(api_error(403, None))


def test_io_errors_are_not_pure_errors() -> None:
    """Two roots: `except TopobridgeError` (the input is wrong) never catches an API failure."""
    from controller import errors
    from translations.errors import TopobridgeError

    io_errors = [
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.ControllerError)
    ]
    assert ConflictError in io_errors and TransportError in io_errors
    assert [cls.__name__ for cls in io_errors if issubclass(cls, TopobridgeError)] == []
    with pytest.raises(ConflictError):
        try:
            raise api_error(409, {"reason": "Conflict", "message": "the object has been modified"})
        except TopobridgeError:
            pytest.fail("a Conflict from the API was caught as a bad user object")
