"""The functions' AWS clients, made with botocore from one session per process (as `boto3.client` makes them
from boto3's default session, sharing its loader's cache of service models).

Not boto3: its import (its session, resources, s3transfer, multiprocessing) is about 60 modules and 10-15 ms
of every cold start, and the layer uses none of it: only low-level clients.
"""

from __future__ import annotations

import threading
from typing import Any

_session: Any = None
_lock = threading.Lock()


def client(service: str, **options: Any) -> Any:
    """A low-level client, `boto3.client(service, **options)` without boto3 (region_name, endpoint_url, config)."""
    global _session
    with _lock:
        if _session is None:
            import botocore.session

            _session = botocore.session.get_session()
        return _session.create_client(service, **options)
