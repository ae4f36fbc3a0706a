"""The MCP client of the egress module (mcp_session) against the hostile server of tests/hostile_server.py, over
real TLS: whatever the server does at initialize, tools/list or tools/call (a priming event with a 600 s `retry`
then close, a trickle, endless comments, an endless chunked body, one huge line, a stalled TLS handshake), the
exchange answers within its deadline and a second, with the precise egress error, closes its connections and
leaves no thread behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from skillcore.egress import mcp_session
from skillcore.egress.client import EgressLimits
from skillcore.egress.errors import EgressError
from skillcore.egress.settings import EgressSettings
from tests.hostile_server import HostileServer

DEADLINE = 2.0
SLACK = 1.0
# behaviour -> the outcome's reason: `timeout` (504 upstream_timeout) or an UpstreamError's (502 upstream_error)
EXPECTED = {"prime_close": "timeout", "trickle": "timeout", "comments": "timeout", "chunked": "too_large",
            "huge_line": "too_large", "slow_tls": "timeout"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileServer]:
    import mcp.client.streamable_http  # noqa: F401  (imported once here, not inside the first measured call)

    server = HostileServer(tmp_path_factory.mktemp("hostile")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def settings(hostile: HostileServer) -> EgressSettings:
    return EgressSettings.from_env({**hostile.settings_env(), "SKILLS_LOCAL": "1",
                                    "SKILLS_LOCAL_HOSTED_DEADLINE_SECONDS": str(DEADLINE)})


def _egress_threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate() if t.name.startswith("egress")}


def _closed(hostile: HostileServer, behaviour: str) -> bool:
    """The client closed its connections (the server sees it at its next write; a stalled handshake's thread
    waits on, so it is not counted)."""
    if behaviour == "slow_tls":
        return True
    end = time.monotonic() + 3
    while hostile.connections and time.monotonic() < end:
        time.sleep(0.05)
    return hostile.connections == 0


def _timed(call: object) -> tuple[float, EgressError]:
    before = _egress_threads()
    started = time.monotonic()
    with pytest.raises(EgressError) as raised:
        call()  # type: ignore[operator]
    elapsed = time.monotonic() - started
    assert _egress_threads() <= before
    return elapsed, raised.value


@pytest.mark.parametrize("method", ["initialize", "list"])
@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_a_hostile_list_answers_within_the_deadline(hostile: HostileServer, settings: EgressSettings,
                                                    behaviour: str, method: str) -> None:
    elapsed, error = _timed(lambda: mcp_session.list_tools(hostile.url(behaviour, method), "tok", settings))
    assert error.reason == EXPECTED[behaviour], (behaviour, method, error)
    assert elapsed < DEADLINE + SLACK, (behaviour, method, elapsed)
    assert _closed(hostile, behaviour)


@pytest.mark.parametrize("method", ["initialize", "call"])
@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_a_hostile_call_answers_within_the_deadline_and_says_whether_it_was_sent(
        hostile: HostileServer, settings: EgressSettings, behaviour: str, method: str) -> None:
    ready: Future[bool] = Future()
    ready.set_result(True)
    before = hostile.methods["tools/call"]
    sent = threading.Event()
    elapsed, error = _timed(lambda: mcp_session.call_tool(hostile.url(behaviour, method), "tok", settings, "echo",
                                                          {"text": "hi"}, ready=ready, sent=sent))
    assert error.reason == EXPECTED[behaviour], (behaviour, method, error)
    assert elapsed < DEADLINE + SLACK, (behaviour, method, elapsed)
    assert _closed(hostile, behaviour)
    reached = hostile.methods["tools/call"] - before
    # a stalled handshake never opens the session: tools/call is never sent, whichever step was to misbehave
    assert sent.is_set() == (method == "call" and behaviour != "slow_tls") and reached <= int(sent.is_set())


def test_the_deadline_given_in_limits_bounds_the_exchange(hostile: HostileServer, settings: EgressSettings) -> None:
    elapsed, error = _timed(lambda: mcp_session.list_tools(hostile.url("prime_close", "list"), None, settings,
                                                           limits=EgressLimits(deadline_seconds=1.0)))
    assert error.reason == "timeout" and elapsed < 1.0 + SLACK
