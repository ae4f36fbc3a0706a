"""A function's init, with the cyclic garbage collector paused.

Init allocates over 100k long-lived objects and frees none: the collector would traverse them again and
again while the modules load (20-50 ms of a cold start, measured by `make bench`). Each handler calls
`begin()` before its other imports and `end()` once it is wired; `end()` also freezes what init built, so
later collections skip it. If init raises, the collector stays paused in a process Lambda then discards.
"""

import gc


def begin() -> None:
    gc.disable()


def end() -> None:
    gc.freeze()
    gc.enable()
