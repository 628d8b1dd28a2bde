"""How the judge talks to a contestant: one JSON request, one JSON reply, over private pipes or in process.

Requests and replies are small (tensors travel as files, see ``runner.judge``). ``PipeChannel``
speaks to a contestant process over two pipes that are its only inherited file descriptors, so
candidate code printing to stdout cannot corrupt the protocol; every reply has a deadline, and a
contestant that dies or stops answering becomes ``ContestantLost`` with a one-line reason.
``LocalChannel`` hands the request to a handler in this process (trusted code only, no isolation).
"""
from __future__ import annotations

import json
import os
import select
import time
from typing import Any, Callable


class ContestantLost(Exception):
    """The contestant died, hung past its deadline or answered garbage (the message says which)."""


class PipeChannel:
    def __init__(self, process: Any, send_fd: int, receive_fd: int, describe_death: Callable[[], str]):
        self.process = process
        self._send, self._receive = send_fd, receive_fd
        self._buffer = b""
        self._describe_death = describe_death

    def request(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send(command)
        return self.receive(timeout, command.get("op", "?"))

    def send(self, command: dict[str, Any]) -> None:
        """Send without waiting: several contestants then work at once (``receive`` each reply)."""
        try:
            os.write(self._send, (json.dumps(command) + "\n").encode())
        except (BrokenPipeError, OSError):
            raise ContestantLost(self._describe_death()) from None

    def receive(self, timeout: float, op: str) -> dict[str, Any]:
        return self._reply(timeout, op)

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

    def send(self, command: dict[str, Any]) -> None:
        self._pending = self.request(command, 0.0)

    def receive(self, timeout: float, op: str) -> dict[str, Any]:
        reply, self._pending = self._pending, None
        return reply

    def close(self) -> None:
        pass


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
        reply = handler(command)
        os.write(send_fd, (json.dumps(reply, default=str) + "\n").encode())
        if command.get("op") == "finish":
            return
