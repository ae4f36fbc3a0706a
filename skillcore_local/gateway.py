"""A local stand-in for the API Gateway HTTP API in front of the functions (payload format 2.0).

The gateway dispatches each request to the module whose job it is: a route to a function (routing.py, from the
route table, skillcore/api/route_table.py, matched the way API Gateway matches), checked by the JWT authorizer stand-in
(authorizer.py), turned into the 2.0 event AWS would send and the handler's result back into HTTP with the 2.0
response rules (payload.py), the handler run in-process (invoke.py). Local-only routes exist besides (never
deployed): `POST /_local/scan` and `POST|DELETE /_local/faults` (local_routes.py), the page's sign-in
`GET /_local/login` and `POST /_local/token`, the Skills page itself under `/skills/` (page.py; `/` redirects
there and `/favicon.ico` is its icon) and the contract
documents (docs.py). The HTTP server is http_server.py. Before any of them, the request must be one the
gateway accepts (acceptance.py): a loopback or configured Host, and no other origin's POST to `/_local/*`.

Where AWS's own answer would be `{"message": "Unauthorized"}` or `{"message": "Not Found"}`, this gateway
answers the API's error envelope instead (docs/contract.md), so clients see one error shape everywhere.
"""

from __future__ import annotations

import re
import sys
import threading
import traceback
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from skillcore_local import acceptance
from skillcore_local.authorizer import authorize
from skillcore_local.docs import ContractFiles
from skillcore_local.docs import handles as serves_contract
from skillcore_local.http_server import LocalServer, RequestHandler
from skillcore_local.invoke import FunctionRegistry, ensure_layer_on_path
from skillcore_local.jwt_local import default_secret
from skillcore_local.local_routes import LocalRoutes
from skillcore_local.page import PageFiles
from skillcore_local.page import handles as serves_page
from skillcore_local.page import handles_local as serves_sign_in
from skillcore_local.page import handles_root as serves_root
from skillcore_local.payload import aws_internal_error, from_lambda_result, http_event, new_request_id
from skillcore_local.responses import HttpResponse, error_response
from skillcore_local.routing import Route, match_route, table_routes
from skillcore_local.sqs import QUEUE_URL, EventSource

# RFC 9110 `token`: any such method reaches the router (which answers 405 with Allow); anything else is a 400.
METHOD_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class Gateway:
    """The HTTP server. start() serves on a background thread; stop() shuts it down and joins."""

    def __init__(
        self,
        registry: FunctionRegistry | None = None,
        *,
        routes: list[Route] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        jwt_secret: str | None = None,
        access_log: bool = True,
        contract: ContractFiles | None = None,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        """`allowed_hosts`: Host names accepted besides the loopback ones (acceptance.py); by default
        SKILLS_LOCAL_ALLOWED_HOSTS's."""
        self.registry = registry or FunctionRegistry()
        self._routes = routes
        self._routes_lock = threading.Lock()
        self.jwt_secret = jwt_secret or default_secret()
        self.access_log = access_log
        self.contract = contract or ContractFiles()
        self.page = PageFiles(jwt_secret=self.jwt_secret)
        self._server = LocalServer((host, port), RequestHandler, self)
        self.hosts = acceptance.allowed_hosts(
            self.port, acceptance.configured_hosts() if allowed_hosts is None else allowed_hosts)
        self._thread: threading.Thread | None = None
        # The work queue and its event source mapping (skillcore_local/sqs.py), registered where the
        # handlers' db/work_queue finds it (SKILLS_WORK_QUEUE_URL=local://WorkQueue) while this gateway runs.
        # The registry is one per process: a gateway started beside another (a test's own) takes it over and
        # hands it back when it stops, so the first one's scans never go to a queue nobody drains.
        self.work = EventSource(self.registry)
        self.local = LocalRoutes(self.registry, self.work)
        ensure_layer_on_path()
        self._queue_before: Any = None
        self._registered = False
        self._register_queue()

    def _register_queue(self) -> None:
        from skillcore.work.sqs_queue import local_queue, register_local

        if not self._registered:
            self._queue_before = local_queue(QUEUE_URL)
            register_local(QUEUE_URL, self.work.queue)
            self._registered = True

    def _release_queue(self) -> None:
        from skillcore.work.sqs_queue import local_queue, register_local

        if self._registered:
            if local_queue(QUEUE_URL) is self.work.queue:
                register_local(QUEUE_URL, self._queue_before)
            self._registered = False

    @property
    def routes(self) -> list[Route]:
        """The given routes, else the route table's, read on the first request: the route modules import the
        layer, whose modules read the handlers' environment (the stack applies it after making the gateway)."""
        with self._routes_lock:
            if self._routes is None:
                self._routes = table_routes()
            return self._routes

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}"

    def start(self) -> Gateway:
        self._register_queue()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="local-gateway", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        self._release_queue()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def run_scan(self, when: datetime | None = None) -> Any:
        """The scan and the work queue drained (local_routes.LocalRoutes.run_scan), for the schedule loop."""
        return self.local.run_scan(when)

    # -- request dispatch (called on the server's worker threads)
    def dispatch(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        source_ip: str,
        protocol: str,
    ) -> tuple[HttpResponse, str]:
        """The response, and a label for the access log (the function that ran, or why none did)."""
        raw_path = urlsplit(target).path or "/"
        if not METHOD_TOKEN.match(method):
            return error_response(400, "bad_request", "the request method is not an HTTP token"), "-"
        not_accepted = acceptance.refusal(method, raw_path, headers, self.hosts)
        if not_accepted is not None:
            return not_accepted, "refused"
        if serves_sign_in(raw_path):
            return self.page.local(method, raw_path, body), "local"
        if raw_path == "/_local" or raw_path.startswith("/_local/"):
            return self.local.serve(method, raw_path, body), "local"
        if serves_page(raw_path):
            return self.page.serve(method, raw_path), "page"
        if serves_root(raw_path):
            return self.page.root(method, raw_path), "page"
        if serves_contract(raw_path):
            return self.contract.serve(method, raw_path), "contract"
        found = match_route(self.routes, method, raw_path)
        if found is None:
            return error_response(404, "not_found", f"no route for {method} {raw_path}"), "-"
        route, params = found
        claims, refused = authorize(route, headers, self.jwt_secret)
        if refused is not None:
            return refused, "-"
        request_id = new_request_id()
        event = http_event(
            method=method,
            target=target,
            headers=headers,
            body=body,
            route=route,
            path_params=params,
            claims=claims,
            source_ip=source_ip,
            protocol=protocol,
            request_id=request_id,
        )
        try:
            result = self.registry.invoke(route.function, event)
            response = from_lambda_result(result)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: B036 - an injected crash is a BaseException, and Lambda reports it as 500 too
            print(f"ERROR: {route.function} failed for {method} {raw_path}:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            response = aws_internal_error()
        response.headers.append(("apigw-requestid", request_id))
        return response, route.function
