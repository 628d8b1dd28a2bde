"""How the judge talks to a contestant: one JSON request, one JSON reply, over private pipes or in process.

Requests and replies are small (tensors travel as files, see ``ladder.runner.exchange``). ``PipeChannel``
speaks to a contestant process over two pipes that are its only inherited file descriptors, so
candidate code printing to stdout cannot corrupt the protocol; every reply has a deadline, and a
contestant that dies or stops answering becomes ``ContestantLost`` with a one-line reason.

The judge never trusts a reply's shape: each request carries a fresh random nonce the reply must
echo (a line candidate code wrote into the pipe cannot know it), and each reply must carry the
fields its request's answer has (``REPLY_FIELDS``), so a forged or garbled reply loses its sender
its verdict instead of crashing the judge.

``LocalChannel`` hands the request to a handler in this process (trusted code only, no isolation).
"""
from __future__ import annotations

import json
import math
import os
import secrets
import select
import time
from typing import Any, Callable

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

NUMBER = (int, float)
# What the answer to each request carries, unless it says it failed ("error", "failed", "rejected").
REPLY_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "check": {"digest": (list,), "launches": (int,), "tuning_launches": (int,), "kernels": (list,),
              "violation": (str, type(None)), "mutated": (list,)},
    "warmup": {"estimate_ms": NUMBER, "host_ms": NUMBER},
    "arm": {"previous": (dict, type(None))},
    "go": {"time_ms": NUMBER},
    "report": {"report": (dict, type(None))},
    "keep": {"report": (dict, type(None))},
}
FAILURES: dict[str, tuple[type, ...]] = {"error": (str,), "failed": (str,), "rejected": (dict,)}
# A timed call's report, which rides on the next request's answer.
REPORT_FIELDS: dict[str, tuple[type, ...]] = {"host_ms": NUMBER, "violation": (str, type(None))}
NESTED = {"report": REPORT_FIELDS, "previous": REPORT_FIELDS}


class ContestantLost(Exception):
    """The contestant died, hung past its deadline or answered garbage (the message says which)."""


class PipeChannel:
    def __init__(self, process: Any, send_fd: int, receive_fd: int, describe_death: Callable[[], str]):
        self.process = process
        self._send, self._receive = send_fd, receive_fd
        self._buffer = b""
        self._describe_death = describe_death

    def request(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        return self.receive(self.send(command), timeout)

    def send(self, command: dict[str, Any]) -> tuple[str, str]:
        """Send a request without waiting; ``receive`` takes what this returns and waits for the answer."""
        nonce = secrets.token_hex(8)
        try:
            os.write(self._send, (json.dumps({**command, "nonce": nonce}) + "\n").encode())
        except (BrokenPipeError, OSError):
            raise ContestantLost(self._describe_death()) from None
        return command.get("op", "?"), nonce

    def receive(self, sent: tuple[str, str], timeout: float) -> dict[str, Any]:
        op, nonce = sent
        reply = self._reply(timeout, op)
        if reply.pop("nonce", None) != nonce:
            raise ContestantLost(f"answered '{op}' with a reply that does not answer it (forged, or out of order)")
        problem = malformed(op, reply)
        if problem:
            raise ContestantLost(f"answered '{op}' with a malformed reply ({problem})")
        return reply

    def _reply(self, timeout: float, op: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ContestantLost(f"no answer to '{op}' within {timeout:g} s (hung; killed)")
            ready, _, _ = select.select([self._receive], [], [], min(left, 0.5))
            if not ready:
                if self.process.poll() is not None:
                    raise ContestantLost(self._describe_death())
                continue
            chunk = os.read(self._receive, 1 << 16)
            if not chunk:
                raise ContestantLost(self._describe_death())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise ContestantLost(f"answered '{op}' with something that is not the protocol") from None
        if not isinstance(reply, dict):
            raise ContestantLost(f"answered '{op}' with something that is not the protocol")
        return reply

    def close(self) -> None:
        for fd in (self._send, self._receive):
            try:
                os.close(fd)
            except OSError:
                pass


class LocalChannel:
    """The same requests, answered by ``handler`` in this process."""

    process = None

    def __init__(self, handler: Callable[[dict[str, Any]], dict[str, Any]]):
        self._handler = handler

    def request(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        return json.loads(json.dumps(self._handler(command), default=str))

    def send(self, command: dict[str, Any]) -> dict[str, Any]:
        return command  # answered when received: this process has no other to wait on

    def receive(self, sent: dict[str, Any], timeout: float) -> dict[str, Any]:
        return self.request(sent, timeout)

    def close(self) -> None:
        pass


def malformed(op: str, reply: dict[str, Any]) -> str | None:
    """Why a reply is not what its request's answer looks like, or None."""
    failures = [key for key in FAILURES if key in reply]
    if failures:
        bad = [key for key in failures if not isinstance(reply[key], FAILURES[key])]
        rejected = reply.get("rejected")
        if not bad and isinstance(rejected, dict) and not all(isinstance(rejected.get(key), str)
                                                               for key in ("stage", "reason")):
            bad = ["rejected"]
        return f"bad {', '.join(bad)}" if bad else None
    return _missing(REPLY_FIELDS.get(op, {}), reply)


def _missing(fields: dict[str, tuple[type, ...]], reply: dict[str, Any]) -> str | None:
    for key, kinds in fields.items():
        value = reply.get(key)
        if (not isinstance(value, kinds) or isinstance(value, bool)
                or isinstance(value, float) and not math.isfinite(value)):
            return f"no valid {key!r}"
        if key in NESTED and isinstance(value, dict):
            problem = _missing(NESTED[key], value)
            if problem:
                return f"{key}: {problem}"
    return None


def serve(receive_fd: int, send_fd: int, handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The contestant's side: answer requests until 'finish' or until the judge closes the pipe."""
    reader = os.fdopen(receive_fd, "rb", buffering=0)
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = reader.read(1 << 16)
            if not chunk:
                return
            buffer += chunk
        line, _, buffer = buffer.partition(b"\n")
        command = json.loads(line)
        reply = {**handler(command), "nonce": command.get("nonce")}
        os.write(send_fd, (json.dumps(reply, default=str) + "\n").encode())
        if command.get("op") == "finish":
            return
