"""A DynamoDB that stops answering under a stream of chat turns: every turn answers 200 or 503
`store_unavailable` with Retry-After (never the 500 fallback), each before its invocation's deadline; once
DynamoDB is back, retrying each refused turn with its clientMessageId completes it exactly once.

The stack here has its own DynamoDB Local (the JVM is stopped with SIGSTOP, and always resumed), short store
timeouts (1 s to connect, 1 s to read) with many attempts (10: a stalled call alone would take 20 s), and a
ChatTurnFunction timeout of 8 s instead of the template's 29 s, so that only the deadline taken from the
invocation's time left (db/dynamo.py StoreTimeouts) bounds a turn, as it does in AWS, in a test of seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from skillcore.db.dynamo import ANSWER_MARGIN_SECONDS
from skillcore.errors import RETRY_AFTER_SECONDS
from skillcore_local.invoke import FunctionRegistry, function_specs
from skillcore_local.stack import LocalStack
from tests.local_stack import RACING_LIMITS

from .conftest import JWT_SECRET, StackClient

pytestmark = pytest.mark.stack

TURN_TIMEOUT_S = 8  # the test stack's ChatTurnFunction timeout: the invocation's deadline
SLACK_S = 1.5  # the gateway, the HTTP round trip, a loaded machine
STOPPED_S = 12  # longer than TURN_TIMEOUT_S: turns started during the stop run out of time
STREAMS = 3  # one user (and conversation) each: turns of one conversation may conflict (409) by design
PAUSE_S = 0.3  # between two turns of a stream
STORE_ENV = {
    "SKILLS_STORE_CONNECT_TIMEOUT_MS": "1000",
    "SKILLS_STORE_READ_TIMEOUT_MS": "1000",
    "SKILLS_STORE_MAX_ATTEMPTS": "10",
}


@pytest.fixture(scope="module")
def stalling_stack(_dummy_credentials: None) -> Iterator[StackClient]:
    specs = function_specs()
    registry = FunctionRegistry({**specs, "ChatTurnFunction": replace(specs["ChatTurnFunction"], timeout=TURN_TIMEOUT_S)})
    with pytest.MonkeyPatch.context() as patch:
        # Each stream sends its turns back to back, past any person's rate: the store's stall is what is tested.
        for name, value in {**STORE_ENV, **RACING_LIMITS, "SKILLS_RATE_CHAT_PER_MINUTE": "0"}.items():
            patch.setenv(name, value)
        local = LocalStack(port=0, data_dir=None, scan_interval=0, jwt_secret=JWT_SECRET, registry=registry,
                           access_log=False)
        local.start()
        try:
            yield StackClient(local)
        finally:
            local.stop()


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The process stopped (SIGSTOP) for the block, and always resumed after it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@dataclass
class Turn:
    stream: int
    client_message_id: str
    text: str
    status: int
    seconds: float
    retry_after: str | None
    body: Any


class Stream:
    """One user sending turns into its agent's conversation, one after another, until told to stop."""

    def __init__(self, stack: StackClient, index: int) -> None:
        self.stack, self.index = stack, index
        self.user = f"stall-{index}-{uuid.uuid4().hex[:8]}"
        self.auth = stack.token(self.user)
        status, agent = stack.call("POST", "/rpc/agents", {"name": f"Mika {index}"}, token=self.auth)
        assert status == 201, agent
        self.conversation = agent["defaultConversationId"]
        self.turns: list[Turn] = []

    @property
    def path(self) -> str:
        return f"/rpc/conversations/{self.conversation}/messages"

    def send(self, client_message_id: str, text: str) -> Turn:
        started = time.monotonic()
        response = self.stack.request("POST", self.path, body={"clientMessageId": client_message_id, "text": text},
                                      token=self.auth, timeout=60)
        return Turn(self.index, client_message_id, text, response.status, time.monotonic() - started,
                    response.header("Retry-After"), response.json())

    def run(self, stop: threading.Event) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            cid = f"s{self.index}-{n}-{uuid.uuid4().hex[:6]}"
            self.turns.append(self.send(cid, f"turn {n} of stream {self.index}: how is it going?"))
            stop.wait(PAUSE_S)

    def messages(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = "?limit=100" + (f"&cursor={cursor}" if cursor else "")
            status, page = self.stack.call("GET", self.path + query, token=self.auth)
            assert status == 200, page
            found += page["items"]
            cursor = page.get("nextCursor")
            if not cursor:
                return found


def test_turns_answer_503_within_the_deadline_and_complete_once_when_retried(stalling_stack: StackClient) -> None:
    stack = stalling_stack
    ddb = stack.local.ddb
    assert ddb is not None and ddb.pid is not None, "the stack's own DynamoDB Local (java) is needed"
    streams = [Stream(stack, i) for i in range(STREAMS)]
    warm = streams[0].send("warm-up", "hello")  # the function is loaded before anything stops
    assert warm.status == 200, warm.body

    stop = threading.Event()
    threads = [threading.Thread(target=s.run, args=(stop,), name=f"stream-{s.index}") for s in streams]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1.5)
        with stopped(ddb.pid):
            time.sleep(STOPPED_S)
        time.sleep(2.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=TURN_TIMEOUT_S + 30)
    turns = [t for s in streams for t in s.turns]
    print(f"\n{len(turns)} turns: {Counter(t.status for t in turns)}, slowest {max(t.seconds for t in turns):.2f} s, "
          f"slowest 503 {max((t.seconds for t in turns if t.status == 503), default=0):.2f} s")

    # Every answer is a turn or a 503 store_unavailable with Retry-After, within the deadline.
    assert Counter(t.status for t in turns).keys() <= {200, 503}, [(t.status, t.body) for t in turns if t.status != 200]
    refused = [t for t in turns if t.status == 503]
    for turn in refused:
        assert turn.body["error"]["code"] == "store_unavailable", turn.body
        assert turn.retry_after == str(RETRY_AFTER_SECONDS)
    slowest = max(t.seconds for t in turns)
    assert slowest <= TURN_TIMEOUT_S - ANSWER_MARGIN_SECONDS + SLACK_S, sorted(t.seconds for t in turns)[-5:]
    assert refused, "the stop outlasted the deadline: some turn must have been refused"
    assert sum(t.status == 200 for t in turns) > len(refused)  # before and after the stop, turns went through

    # DynamoDB is back: each refused turn, retried with its clientMessageId, completes.
    by_stream = {s.index: s for s in streams}
    retried: dict[str, Turn] = {}
    for turn in refused:
        for _ in range(5):
            again = by_stream[turn.stream].send(turn.client_message_id, turn.text)
            if again.status != 503:
                break
            time.sleep(RETRY_AFTER_SECONDS)
        assert again.status == 200, again.body
        retried[turn.client_message_id] = again

    # Exactly one user message and one reply per clientMessageId, whichever answer completed it.
    for stream in streams:
        messages = stream.messages()
        completed = {t.client_message_id: t for t in stream.turns if t.status == 200}
        completed |= {cid: t for cid, t in retried.items() if t.stream == stream.index}
        if stream.index == 0:
            completed["warm-up"] = warm
        ids = Counter(m["messageId"] for m in messages)
        assert all(count == 1 for count in ids.values())
        user_texts = Counter(m["text"] for m in messages if m["role"] == "user")
        for cid, turn in completed.items():
            assert user_texts[turn.text] == 1, cid
            assert ids[turn.body["userMessage"]["messageId"]] == 1 and ids[turn.body["reply"]["messageId"]] == 1
        assert len(messages) == 2 * len(completed)
