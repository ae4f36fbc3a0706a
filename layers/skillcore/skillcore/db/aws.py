"""The functions' AWS clients, made with botocore from one session per process (as `boto3.client` makes them
from boto3's default session, sharing its loader's cache of service models).

Not boto3: its import (its session, resources, s3transfer, multiprocessing) is about 60 modules and 10-15 ms
of every cold start, and the layer uses none of it: only low-level clients.

Nor botocore's own service-name check as it stands: before loading a model, its loader lists every service it has
data for (`Loader.list_available_services`: a directory listing and a stat for each of some 445 services, once
for the service model and once for the endpoint rules), only to ask whether one name is among them. That was
about 10 ms of every cold start. The session's loader here (`_new_session`) answers the same question from the
one service's own directory, and lists them all only where a caller reads the list (botocore's error for an
unknown service names them); botocore itself proposes the change upstream (boto/botocore#3687).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

_session: Any = None
_lock = threading.Lock()


def client(service: str, **options: Any) -> Any:
    """A low-level client, `boto3.client(service, **options)` without boto3 (region_name, endpoint_url, config)."""
    global _session
    with _lock:
        if _session is None:
            _session = _new_session()
        return _session.create_client(service, **options)


def _new_session() -> Any:
    import botocore.exceptions
    import botocore.loaders
    import botocore.session

    class ServiceNames:
        """The services with data of one type, as `Loader.list_available_services` answers them: `name in` looks
        in that service's directory only; iterating lists every service, as botocore does."""

        def __init__(self, loader: Any, type_name: str) -> None:
            self._loader = loader
            self._type_name = type_name

        def __contains__(self, name: object) -> bool:
            if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
                return False
            try:
                return bool(self._loader.list_api_versions(name, self._type_name))
            except botocore.exceptions.DataNotFoundError:
                return False

        def __iter__(self) -> Iterator[str]:
            return iter(botocore.loaders.Loader.list_available_services(self._loader, self._type_name))

    class Loader(botocore.loaders.Loader):
        def list_available_services(self, type_name: str) -> Any:
            return ServiceNames(self, type_name)

    session = botocore.session.get_session()
    # The same search paths as the session's own loader (AWS_DATA_PATH, ~/.aws/models, botocore's data).
    default = botocore.loaders.create_loader(session.get_config_variable("data_path"))
    session.register_component("data_loader", Loader(extra_search_paths=default.search_paths,
                                                     include_default_search_paths=False))
    return session
