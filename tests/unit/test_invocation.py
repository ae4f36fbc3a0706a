"""skillcore/invocation.py: the time left comes from the invocation's own context, and nothing outside one."""

from __future__ import annotations

from skillcore.invocation import InvocationBudget


class Context:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def get_remaining_time_in_millis(self) -> int:
        return self.ms


def test_seconds_left_follow_the_current_invocation() -> None:
    budget = InvocationBudget()
    assert budget.seconds_left() is None
    first = Context(29_000)
    budget.begin(first)
    assert budget.seconds_left() == 29.0
    first.ms = 4_500  # read at the moment of asking, not at begin
    assert budget.seconds_left() == 4.5
    budget.begin(Context(12_000))
    assert budget.seconds_left() == 12.0
    budget.begin(object())  # a context without the method (a script): no budget
    assert budget.seconds_left() is None


def test_an_invocation_bounds_only_its_block_and_the_work_it_hands_on() -> None:
    import contextvars
    import threading

    budget = InvocationBudget()
    seen: dict[str, float | None] = {}
    with budget.invocation(Context(7_000)):
        assert budget.seconds_left() == 7.0
        plain = threading.Thread(target=lambda: seen.update(plain=budget.seconds_left()))
        handed = threading.Thread(target=contextvars.copy_context().run,
                                  args=(lambda: seen.update(handed=budget.seconds_left()),))
        for thread in (plain, handed):
            thread.start()
            thread.join()
    assert seen == {"plain": None, "handed": 7.0}
    assert budget.seconds_left() is None  # after the invocation, nothing is bound by it
