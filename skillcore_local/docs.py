"""The API contract, served by the local stack only: `GET /rpc/openapi.json` and the `/docs` viewer.

The document is the checked-in `openapi.json` at the repository root (`make openapi` writes it), read on each
request so a regenerated document shows without a restart. The viewer is Swagger UI from the npm package
`swagger-ui-dist` (`make node` installs it), served from node_modules: nothing is fetched from a CDN, and the
initializer turns off the online validator, which would send the document to an outside service.
None of this is deployed: the RpcFunction has no such routes, so API Gateway answers 404 for them in AWS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from skillcore_local.responses import HttpResponse, error_response, method_not_allowed
from skillcore_local.template import ROOT

OPENAPI_PATH = "/rpc/openapi.json"
DOCS_PATH = "/docs"
READ_METHODS = ("GET", "HEAD")

# The dist folder is flat; a name is one segment of these characters, so no path can climb out of it.
_ASSET_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".map": "application/json; charset=utf-8",
    ".png": "image/png",
}

INDEX_HTML = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>skillcore API (local)</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="utf-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="utf-8"></script>
    <script src="/docs/swagger-initializer.js" charset="utf-8"></script>
  </body>
</html>
"""

# Replaces the package's own initializer, which points at the public Petstore example.
INITIALIZER_JS = f"""window.onload = function () {{
  window.ui = SwaggerUIBundle({{
    url: "{OPENAPI_PATH}",
    dom_id: "#swagger-ui",
    deepLinking: true,
    // The validator badge sends the document to validator.swagger.io: the local viewer calls nothing outside.
    validatorUrl: null,
    // "Authorize" once with a token from `make token USER=alice`; it survives a reload.
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
  }});
}};
"""


def handles(path: str) -> bool:
    return path in (OPENAPI_PATH, DOCS_PATH) or path.startswith(DOCS_PATH + "/")


@dataclass(frozen=True)
class ContractFiles:
    openapi: Path = ROOT / "openapi.json"
    viewer: Path = ROOT / "node_modules" / "swagger-ui-dist"

    def serve(self, method: str, path: str) -> HttpResponse:
        if method not in READ_METHODS:
            return method_not_allowed(method, path, READ_METHODS)
        if path == OPENAPI_PATH:
            return self._document()
        name = path[len(DOCS_PATH) :].lstrip("/")
        if not self.viewer.is_dir():
            return error_response(404, "not_found", "the viewer is not installed: run `make node`")
        if name in ("", "index.html"):
            return _text(INDEX_HTML, "text/html; charset=utf-8")
        if name == "swagger-initializer.js":
            return _text(INITIALIZER_JS, _ASSET_TYPES[".js"])
        return self._asset(name)

    def _document(self) -> HttpResponse:
        try:
            body = self.openapi.read_bytes()
        except FileNotFoundError:
            return error_response(404, "not_found", "openapi.json is missing: `make openapi` writes it")
        # Regenerated between requests: a browser must not keep an old copy.
        return HttpResponse(
            200, [("content-type", "application/json; charset=utf-8"), ("cache-control", "no-cache")], body
        )

    def _asset(self, name: str) -> HttpResponse:
        suffix = Path(name).suffix
        if not _ASSET_NAME.match(name) or suffix not in _ASSET_TYPES:
            return error_response(404, "not_found", f"no such file under {DOCS_PATH}")
        try:
            body = (self.viewer / name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return error_response(404, "not_found", f"no such file under {DOCS_PATH}")
        return HttpResponse(200, [("content-type", _ASSET_TYPES[suffix])], body)


def _text(text: str, content_type: str) -> HttpResponse:
    return HttpResponse(200, [("content-type", content_type)], text.encode("utf-8"))
