"""The model is the scarce resource: automation runs share a rate of model calls (the Bedrock quota, in
requests per minute, divided among the workers that may run at once).

`RateLimiter` is a token bucket. `ThrottledModel` takes a token before each call; without one it waits,
with exponential backoff and full jitter, up to `max_wait_ms`, and a call that Bedrock itself throttles
(ModelError "throttled") is tried again the same way. Only when the wait is spent does the call fail, as a
transient ModelError: the slot is then retried later within its window (automation/slots.py), never failed
outright. The clock and the sleep are parameters, so the tests run it without waiting.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

from skillcore.model.port import ChatModel, ModelError, ModelRequest, ModelResponse
from skillcore.settings import Settings

THROTTLED = "throttled"
BASE_DELAY_MS = 100
MAX_DELAY_MS = 5_000


class RateLimiter:
    def __init__(self, per_minute: int, *, burst: int | None = None, clock: Callable[[], float] = time.monotonic):
        self._rate = per_minute / 60.0
        self._capacity = float(burst if burst is not None else max(1, per_minute // 60))
        self._tokens = self._capacity
        self._clock = clock
        self._at = clock()
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(self._capacity, self._tokens + (now - self._at) * self._rate)
            self._at = now
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False


class ThrottledModel:
    def __init__(self, model: ChatModel, limiter: RateLimiter | None, *, max_wait_ms: int,
                 rng: random.Random | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self._model = model
        self._limiter = limiter
        self._max_wait = max_wait_ms / 1000
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._clock = clock
        self.waits = 0  # backoffs taken, for the bench and the tests
        self._waits_lock = threading.Lock()  # one worker's runs call it from several threads

    def converse(self, request: ModelRequest) -> ModelResponse:
        deadline = self._clock() + self._max_wait
        attempt = 0
        while True:
            if self._limiter is None or self._limiter.try_acquire():
                try:
                    return self._model.converse(request)
                except ModelError as error:
                    if str(error) != THROTTLED:
                        raise
            attempt += 1
            delay = self._rng.uniform(0, min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** min(attempt, 16)) / 1000)
            if self._clock() + delay > deadline:
                raise ModelError(THROTTLED)
            with self._waits_lock:
                self.waits += 1
            self._sleep(delay)


def throttled(model: ChatModel, settings: Settings) -> ChatModel:
    limiter = RateLimiter(settings.model_calls_per_minute) if settings.model_calls_per_minute else None
    return ThrottledModel(model, limiter, max_wait_ms=settings.model_wait_ms)
