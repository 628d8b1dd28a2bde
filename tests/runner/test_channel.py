"""The judge's side of the protocol: a reply must echo its request's nonce and carry its answer's
fields, or its sender is lost (never the judge)."""
import json
import os

import pytest

from ladder.runner.channel import ContestantLost, PipeChannel, malformed


class Alive:
    def poll(self):
        return None


@pytest.fixture
def channel():
    to_contestant, from_contestant = os.pipe(), os.pipe()
    channel = PipeChannel(Alive(), to_contestant[1], from_contestant[0], lambda: "gone")
    yield channel, to_contestant[0], from_contestant[1]
    channel.close()
    for fd in (to_contestant[0], from_contestant[1]):
        os.close(fd)


def answer(read_fd: int, write_fd: int, reply: dict, echo: bool = True) -> None:
    request = json.loads(os.read(read_fd, 1 << 16))
    os.write(write_fd, (json.dumps({**reply, **({"nonce": request["nonce"]} if echo else {})}) + "\n").encode())


def test_a_reply_that_echoes_the_nonce_and_has_its_fields_is_taken(channel):
    pipe, read_fd, write_fd = channel
    sent = pipe.send({"op": "go"})
    answer(read_fd, write_fd, {"time_ms": 1.5})
    assert pipe.receive(sent, 5) == {"time_ms": 1.5}


def test_a_forged_reply_without_the_nonce_loses_its_sender(channel):
    pipe, read_fd, write_fd = channel
    sent = pipe.send({"op": "go"})
    answer(read_fd, write_fd, {"time_ms": 0.001}, echo=False)
    with pytest.raises(ContestantLost, match="does not answer it"):
        pipe.receive(sent, 5)


def test_a_malformed_reply_loses_its_sender_instead_of_crashing_the_judge(channel):
    pipe, read_fd, write_fd = channel
    sent = pipe.send({"op": "go"})
    answer(read_fd, write_fd, {"ready": True})
    with pytest.raises(ContestantLost, match="malformed reply"):
        pipe.receive(sent, 5)


@pytest.mark.parametrize("op, reply, problem", [
    ("go", {"time_ms": float("nan")}, "no valid 'time_ms'"),
    ("check", {"digest": [], "launches": True, "kernels": [], "violation": None, "mutated": []}, "no valid 'launches'"),
    ("report", {"report": {"host_ms": 1.0, "violation": 3}}, "report: no valid 'violation'"),
    ("arm", {"previous": 3}, "no valid 'previous'"),
    ("keep", {"report": None}, None),
    ("check", {"rejected": {"stage": "runtime"}}, "bad rejected"),
    ("load", {"error": 7}, "bad error"),
    ("warmup", {"error": "forward raised"}, None),
])
def test_each_answer_has_the_fields_of_its_request(op, reply, problem):
    assert malformed(op, reply) == problem
