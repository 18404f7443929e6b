"""The serve loop: read requests from stdin, run them one at a time, answer every one on stdout.

A reader thread parses stdin so that ``$/cancel`` is seen while a request runs (torch releases the
GIL in its kernels). Any failure of a request becomes an error reply and the loop goes on. The
loop ends on ``shutdown`` or when stdin closes (the client died), so no sidecar outlives its client.
Under torchrun, rank 0 runs this loop and broadcasts each request; the other ranks run it blind.
The loop knows methods by name only: the policy's handlers are in ``policy_methods``, μ's in
``mu_methods``.
"""

from __future__ import annotations

import gc
import importlib.util
import logging
import os
import queue
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import BinaryIO, Callable, NoReturn, Optional

import torch

from . import __version__, mu_methods, policy_methods
from .distributed import DistContext
from .faults import Cancelled, Fault, InvalidParams, NoPolicy, OutOfMemory, ParseError, UnknownMethod, is_out_of_memory
from .mu import Mu
from .policy import Policy
from .protocol import PARAMS, Channel, Request, parse_message
from .schema import ParamError

log = logging.getLogger("rubric_trainer")

END = object()
"""Queued by the reader when stdin closes."""

MAX_LINE_BYTES = int(os.environ.get("RUBRIC_SIDECAR_MAX_LINE_BYTES", str(256 * 1024 * 1024)))
"""The longest request line read; a longer one is skipped and answered with a parse error."""


@dataclass
class Call:
    """What a handler may use besides its params."""

    session: "Session"
    request: Request

    def check_cancelled(self) -> None:
        # Only a single process can stop mid-request: under torchrun the other ranks would be
        # left waiting in a collective. There, cancellation takes effect before a request starts.
        if not self.session.dist.distributed and self.request.id in self.session.cancelled:
            raise Cancelled(f"request {self.request.id} was cancelled while it ran")

    def notify(self, method: str, params: dict) -> None:
        if self.session.channel is not None:
            self.session.channel.notify(method, params)


class Session:
    def __init__(self, dist: DistContext, channel: Optional[Channel]) -> None:
        self.dist = dist
        self.channel = channel
        self.policy: Optional[Policy] = None
        self.mu: Optional[Mu] = None
        self.cancelled: set = set()

    def require_policy(self) -> Policy:
        if self.policy is None:
            raise NoPolicy("no policy yet: call policy.init (or checkpoint.load) first")
        return self.policy

    def require_mu(self) -> Mu:
        if self.mu is None:
            raise NoPolicy("no μ yet: call mu.init (or mu.load) first")
        return self.mu

    # --- the loop -------------------------------------------------------------------------------

    def serve_main(self, stdin: BinaryIO) -> None:
        assert self.channel is not None
        inbox: "queue.Queue[object]" = queue.Queue()
        threading.Thread(target=self.read, args=(stdin, inbox), name="stdin-reader", daemon=True).start()
        self.channel.notify("ready", {"pid": os.getpid(), "version": __version__, "torch": torch.__version__, "world_size": self.dist.world_size})
        while True:
            item = inbox.get()
            if item is END:
                self.dist.broadcast(None)
                return
            if isinstance(item, Fault):
                self.channel.send(error_reply(item.data.get("id"), item))
                continue
            assert isinstance(item, Request)
            if item.id in self.cancelled:
                self.cancelled.discard(item.id)
                self.channel.send(error_reply(item.id, Cancelled(f"request {item.id} was cancelled before it started")))
                continue
            self.dist.broadcast((item.method, item.params))
            reply = self.handle(item)
            self.cancelled.discard(item.id)
            try:
                self.channel.send(reply)
            except Fault as fault:
                self.channel.send(error_reply(item.id, fault))
            if item.method == "shutdown":
                return

    def serve_follower(self) -> None:
        while True:
            message = self.dist.broadcast(None)
            if message is None:
                return
            method, params = message
            reply = self.handle(Request(None, method, params))
            if "error" in reply:
                log.warning("rank %d: %s failed: %s", self.dist.rank, method, reply["error"]["message"])
            if method == "shutdown":
                return

    def read(self, stdin: BinaryIO, inbox: "queue.Queue[object]") -> None:
        # Whatever a line holds, the reader answers it and reads on, and END is always queued:
        # a reader that died would leave the loop waiting forever, answering nothing, never exiting.
        try:
            while True:
                line = stdin.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    # Skip the rest of the line in bounded pieces; never hold it whole.
                    while line and not line.endswith(b"\n"):
                        line = stdin.readline(MAX_LINE_BYTES)
                    inbox.put(ParseError(f"a line over {MAX_LINE_BYTES} bytes was skipped"))
                    continue
                self.read_line(line, inbox)
        except Exception as error:  # noqa: BLE001 — the stream itself failed (a closed pipe, a decode fault)
            log.error("stdin reader stopped: %s", error)
        finally:
            inbox.put(END)

    def read_line(self, line: bytes, inbox: "queue.Queue[object]") -> None:
        if not line.strip():
            return
        try:
            message = parse_message(line)
        except Fault as fault:
            inbox.put(fault)
            return
        except Exception as error:  # noqa: BLE001 — any other fault in one line is that line's error reply
            inbox.put(ParseError(f"unreadable line: {type(error).__name__}: {error}"))
            return
        if message.id is not None:
            inbox.put(message)
        elif message.method == "$/cancel" and isinstance(message.params.get("id"), (int, str)):
            self.cancelled.add(message.params["id"])
        else:
            log.warning("ignoring the notification %r", message.method)

    def handle(self, request: Request) -> dict:
        call = Call(self, request)
        try:
            method = METHODS.get(request.method)
            schema = PARAMS.get(request.method)
            if method is None or schema is None:
                raise UnknownMethod(f"no method {request.method!r}; the methods are {', '.join(sorted(METHODS))}", {"method": request.method})
            try:
                params = schema.parse(request.params, "params")
            except ParamError as error:
                raise InvalidParams(str(error), {"path": error.path}) from error
            return {"id": request.id, "result": method(call, params)}
        except Fault as fault:
            return error_reply(request.id, fault)
        except Exception as error:  # the loop must survive any failure of one request
            if is_out_of_memory(error):
                release_memory(self.policy)
                return error_reply(request.id, OutOfMemory(f"out of memory in {request.method}: {first_line(error)}"))
            log.error("%s failed:\n%s", request.method, traceback.format_exc())
            return error_reply(request.id, Fault(f"{type(error).__name__}: {first_line(error)}", {"traceback": traceback.format_exc(limit=8)}))


def error_reply(request_id: object, fault: Fault) -> dict:
    return {"id": request_id, "error": {"code": fault.code, "message": fault.message, "data": fault.data}}


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def release_memory(policy: Optional[Policy]) -> None:
    """After an out-of-memory failure: drop gradients and cached blocks so the next request can run."""
    if policy is not None:
        policy.optimizer.zero_grad(set_to_none=True)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# --- the sidecar's own methods ----------------------------------------------------------------


def health(call: Call, params: dict) -> dict:
    session = call.session
    return {
        "ok": True,
        "version": __version__,
        "pid": os.getpid(),
        "torch": torch.__version__,
        # torch's intra-op threads: its sums (and so trained weights) depend on how many.
        "threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
        "world_size": session.dist.world_size,
        "transformers": importlib.util.find_spec("transformers") is not None,
        "policy": session.policy.describe() if session.policy is not None else None,
        "mu": session.mu.describe() if session.mu is not None else None,
    }


def shutdown(call: Call, params: dict) -> dict:
    return {"ok": True}


METHODS: dict[str, Callable[[Call, dict], dict]] = {
    "health": health,
    "shutdown": shutdown,
    **policy_methods.METHODS,
    **mu_methods.METHODS,
}


def serve(threads: Optional[int] = None, log_level: str = "INFO") -> NoReturn:
    """Runs the sidecar on this process's stdio until shutdown or end of input, then ends the process."""
    if threads is not None:
        torch.set_num_threads(threads)
    # The protocol keeps the real stdout to itself; anything else that prints (a library, C code,
    # another rank) lands on stderr instead of corrupting the JSON lines.
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    dist = DistContext.from_environment()
    logging.basicConfig(stream=sys.stderr, level=log_level, format=f"rubric-trainer[{dist.rank}] %(levelname)s %(message)s", force=True)
    session = Session(dist, Channel(protocol) if dist.is_main else None)
    try:
        if dist.is_main:
            session.serve_main(sys.stdin.buffer)
        else:
            session.serve_follower()
    except BrokenPipeError:
        log.warning("the client closed the pipe; stopping")
    finally:
        dist.close()
    # Leave without running finalisers: the stdin reader is a daemon thread blocked in read(), and
    # a normal exit aborts while finalising stdin under its lock; and after DDP steps, tearing down
    # the reducer and the gloo group at exit can spin forever. Everything written is flushed.
    sys.stderr.flush()
    os._exit(0)
