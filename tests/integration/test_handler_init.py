"""Each handler's init pauses the cyclic garbage collector and leaves it running, with init's objects frozen."""

from __future__ import annotations

import gc

import pytest

from tests.support import load_function


@pytest.mark.parametrize("logical_id", ["RpcFunction", "ChatTurnFunction", "ScanFunction", "WorkerFunction"])
def test_init_leaves_the_collector_enabled_and_its_objects_frozen(aws, logical_id: str) -> None:
    gc.unfreeze()
    collections_before = gc.get_stats()[2]["collections"]
    module = load_function(logical_id)
    assert callable(module.lambda_handler)
    assert gc.isenabled()
    assert gc.get_freeze_count() > 10_000  # the modules, registries and clients init built
    assert gc.get_stats()[2]["collections"] == collections_before  # no full collection ran during init
    gc.unfreeze()
