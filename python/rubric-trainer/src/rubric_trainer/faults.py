"""The ways a request can fail, each with the wire code the TypeScript client maps to its error
classes. A fault becomes an error reply ``{"id", "error": {"code", "message", "data"}}`` and the
sidecar goes on serving."""

from __future__ import annotations

from typing import Any, Optional


class Fault(Exception):
    code = "internal"

    def __init__(self, message: str, data: Optional[dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data or {}


class ParseError(Fault):
    """A line that is not a JSON object."""

    code = "parse_error"


class InvalidRequest(Fault):
    """A JSON object that is not a request: no id, no method, params not an object."""

    code = "invalid_request"


class UnknownMethod(Fault):
    code = "unknown_method"


class InvalidParams(Fault):
    """Params that do not fit the method's schema; ``data.path`` names the offending field."""

    code = "invalid_params"


class NoPolicy(Fault):
    """A policy.* method before policy.init (or checkpoint.load)."""

    code = "no_policy"


class NonFinite(Fault):
    """A loss or gradient came out NaN or infinite; no parameter was changed."""

    code = "non_finite"


class OutOfMemory(Fault):
    """Host or accelerator memory ran out; the request's allocations were released."""

    code = "out_of_memory"


class Unavailable(Fault):
    """An optional library (transformers, peft, onnx) the request needs is not installed."""

    code = "unavailable"


class Cancelled(Fault):
    """The client cancelled the request (``$/cancel``) before or while it ran."""

    code = "cancelled"


class CheckpointFault(Fault):
    """A checkpoint that is missing, unreadable, or of another model."""

    code = "checkpoint"


# Read off the classes rather than listed by hand, so that a new fault cannot be left out of the
# codes the TypeScript client is checked against.
FAULT_CODES = sorted({Fault.code, *(cls.code for cls in Fault.__subclasses__())})


def is_out_of_memory(error: BaseException) -> bool:
    """torch reports exhausted memory as a RuntimeError (CUDA's OutOfMemoryError is one) or MemoryError."""
    if isinstance(error, MemoryError):
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text or "not enough memory" in text)
