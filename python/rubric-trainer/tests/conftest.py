"""A real sidecar process for the protocol tests, spoken to over its stdio as the TypeScript client does."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator, Optional

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
# A guard against a hung sidecar, far above any request here; not a measurement.
HANG_GUARD_S = 240.0

TINY_MODEL = {"kind": "tiny", "vocab_size": 12, "d_model": 16, "n_heads": 2, "n_layers": 1, "max_seq_len": 24}


def session_call(session, method: str, params: dict) -> dict:
    """The result of a request to an in-process ``server.Session`` that must succeed."""
    from rubric_trainer.protocol import Request

    reply = session.handle(Request(1, method, params))
    assert "result" in reply, reply
    return reply["result"]


def sidecar_environment() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class SidecarProcess:
    """``python -m rubric_trainer serve`` (or a launcher's command line) with a JSON-lines conversation."""

    def __init__(self, command: Optional[list[str]] = None) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "rubric_trainer", "serve", "--threads", "1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=sidecar_environment(),
        )
        self.lines: "queue.Queue[Optional[dict]]" = queue.Queue()
        self.notifications: list[dict] = []
        self.ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = self.next_message()
        assert self.ready.get("method") == "ready", self.ready

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def next_message(self) -> dict:
        try:
            message = self.lines.get(timeout=HANG_GUARD_S)
        except queue.Empty:
            raise AssertionError(f"no message from the sidecar; its stderr:\n{self.stderr_text()}") from None
        if message is None:
            raise AssertionError(f"the sidecar closed its stdout (exit {self.process.poll()}); its stderr:\n{self.stderr_text()}")
        return message

    def send(self, message: dict | str) -> None:
        assert self.process.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(text.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def submit(self, method: str, params: Optional[dict] = None) -> int:
        request_id = next(self.ids)
        self.send({"id": request_id, "method": method, "params": params or {}})
        return request_id

    def reply(self, request_id: object) -> dict:
        while True:
            message = self.next_message()
            if "id" not in message:
                self.notifications.append(message)
            elif message["id"] == request_id:
                return message
            else:
                raise AssertionError(f"expected the reply to {request_id}, got {message}")

    def call(self, method: str, params: Optional[dict] = None) -> dict:
        """The result of a request that must succeed."""
        reply = self.reply(self.submit(method, params))
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, params: Optional[dict] = None) -> dict:
        """The error of a request that must fail."""
        reply = self.reply(self.submit(method, params))
        assert "error" in reply, reply
        return reply["error"]

    def close(self) -> int:
        if self.process.poll() is None:
            try:
                self.send({"id": 0, "method": "shutdown"})
                assert self.process.stdin is not None
                self.process.stdin.close()
            except BrokenPipeError:
                pass
            try:
                return self.process.wait(timeout=HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"the sidecar did not stop; its stderr:\n{self.stderr_text()}")
        return self.process.returncode


@pytest.fixture
def sidecar() -> Iterator[SidecarProcess]:
    process = SidecarProcess()
    yield process
    process.close()
