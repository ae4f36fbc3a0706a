"""The Skills page on the local stack: `/skills/` from `web/`, its vendor modules, and the local sign-in.

- `/skills/...` serves the files under `web/` (GET and HEAD; a name is checked segment by segment, so no path
  climbs out), `/skills/vendor/<name>` the npm modules `web/vendor.json` names (from node_modules: no CDN), and
  `/skills/config.json` the page's sign-in settings, which here say "local".
- `GET /_local/login` is a small form (user name, an admin box) whose script calls `POST /_local/token` and
  keeps the token in the tab's session storage, where the page reads it. In AWS the page signs in with the
  Cognito managed login instead (`web/lib/auth.js`); none of this is deployed.

Every page response carries the Content-Security-Policy the CloudFront distribution sends in AWS
(`content_security_policy`): scripts from this origin plus the one inline import map, by its hash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcore_local.jwt_local import KINDS, issue_token
from skillcore_local.responses import HttpResponse, error_response, json_response, method_not_allowed
from skillcore_local.template import ROOT

PAGE_PREFIX = "/skills"
LOGIN_PATH = "/_local/login"
LOGIN_SCRIPT_PATH = "/_local/login.js"
TOKEN_PATH = "/_local/token"
READ_METHODS = ("GET", "HEAD")
WEB_ROOT = ROOT / "web"
NODE_MODULES = ROOT / "node_modules"
TOKEN_STORAGE_KEY = "skillcore.token"
NOTICE_STORAGE_KEY = "skillcore.notice"
MAX_USER_LENGTH = 128

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
_SEGMENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_IMPORT_MAP = re.compile(r'<script type="importmap">(.*?)</script>', re.S)
_USER = re.compile(r"^[A-Za-z0-9._@+-]+$")


def import_map_hash(index_html: str) -> str:
    """The CSP source of the page's inline import map (`'sha256-...'`), the only inline script it has."""
    found = _IMPORT_MAP.search(index_html)
    if found is None:
        raise ValueError("web/index.html has no inline import map")
    digest = hashlib.sha256(found.group(1).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(index_html: str, connect: tuple[str, ...] = ()) -> str:
    """The page's policy; `connect` adds origins the page may call besides its own (Cognito's token URL)."""
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {import_map_hash(index_html)}",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src " + " ".join(("'self'", *connect)),
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "object-src 'none'",
        ]
    )


def vendor_files(web_root: Path = WEB_ROOT) -> dict[str, str]:
    """URL name under /skills/vendor/ -> path inside node_modules (web/vendor.json, keys without `_`)."""
    names = json.loads((web_root / "vendor.json").read_text(encoding="utf-8"))
    return {name: path for name, path in names.items() if not name.startswith("_")}


def local_config() -> dict[str, Any]:
    return {"auth": {"type": "local", "loginUrl": LOGIN_PATH}}


def handles(path: str) -> bool:
    return path == PAGE_PREFIX or path.startswith(PAGE_PREFIX + "/")


def handles_local(path: str) -> bool:
    return path in (LOGIN_PATH, LOGIN_SCRIPT_PATH, TOKEN_PATH)


ROOT_PATHS = ("/", "/favicon.ico")
FAVICON = "favicon.svg"  # web/favicon.svg, also linked by the page as /skills/favicon.svg


def handles_root(path: str) -> bool:
    """`/` (a redirect to the page) and `/favicon.ico` (the page's icon, for the pages that link none)."""
    return path in ROOT_PATHS


@dataclass
class PageFiles:
    web_root: Path = WEB_ROOT
    node_modules: Path = NODE_MODULES
    jwt_secret: str | None = None
    # What `/skills/config.json` says (default: the local sign-in) and the origins connect-src adds. Only the
    # browser test of the Cognito code flow sets them, to point the page at its fake authorization server.
    auth_config: dict[str, Any] | None = None
    connect: tuple[str, ...] = ()
    _csp: str | None = field(default=None, init=False, repr=False)

    def csp(self) -> str:
        # Read on each request, like the files: an edited index.html shows without a restart.
        index_html = (self.web_root / "index.html").read_text(encoding="utf-8")
        return content_security_policy(index_html, connect=self.connect)

    def config(self) -> dict[str, Any]:
        return {"auth": self.auth_config} if self.auth_config is not None else local_config()

    def serve(self, method: str, path: str) -> HttpResponse:
        if method not in READ_METHODS:
            return method_not_allowed(method, path, READ_METHODS)
        if path == PAGE_PREFIX:
            return HttpResponse(308, [("location", PAGE_PREFIX + "/")])
        name = path[len(PAGE_PREFIX) + 1 :]
        if name in ("", "index.html"):
            return self._file(self.web_root / "index.html")
        if name == "config.json":
            return self._bytes(json.dumps(self.config()).encode("utf-8"), CONTENT_TYPES[".json"])
        segments = name.split("/")
        if not all(_SEGMENT.match(s) for s in segments):
            return _not_found()
        if segments[0] == "vendor" and len(segments) == 2:
            module = vendor_files(self.web_root).get(segments[1])
            if module is None:
                return _not_found()
            if not self.node_modules.is_dir():
                return error_response(404, "not_found", "the page's modules are not installed: run `make node`")
            return self._file(self.node_modules / module)
        if segments[0] == "vendor" or name == "vendor.json":
            return _not_found()
        return self._file(self.web_root.joinpath(*segments))

    def root(self, method: str, path: str) -> HttpResponse:
        if method not in READ_METHODS:
            return method_not_allowed(method, path, READ_METHODS)
        if path == "/":
            return HttpResponse(302, [("location", PAGE_PREFIX + "/"), ("cache-control", "no-cache")])
        return self._file(self.web_root / FAVICON)

    def local(self, method: str, path: str, body: bytes) -> HttpResponse:
        if path in (LOGIN_PATH, LOGIN_SCRIPT_PATH):
            if method not in READ_METHODS:
                return method_not_allowed(method, path, READ_METHODS)
            if path == LOGIN_PATH:
                return self._bytes(LOGIN_HTML.encode("utf-8"), CONTENT_TYPES[".html"], csp=LOGIN_CSP)
            return self._bytes(LOGIN_JS.encode("utf-8"), CONTENT_TYPES[".js"])
        if method != "POST":
            return method_not_allowed(method, path, ("POST",))
        return self._token(body)

    def _token(self, body: bytes) -> HttpResponse:
        try:
            payload = json.loads(body.decode("utf-8")) if body.strip() else None
        except (ValueError, RecursionError):
            return error_response(400, "bad_request", "body is not valid JSON")
        if not isinstance(payload, dict):
            return error_response(400, "bad_request", "body must be a JSON object")
        errors = []
        unknown = sorted(set(payload) - {"user", "admin", "kind"})
        errors += [{"path": key, "message": "unknown field"} for key in unknown]
        user = payload.get("user")
        if not isinstance(user, str) or not user or len(user) > MAX_USER_LENGTH or not _USER.match(user):
            errors.append(
                {
                    "path": "user",
                    "message": f"1..{MAX_USER_LENGTH} characters of letters, digits and . _ @ + -",
                }
            )
        admin = payload.get("admin", False)
        if not isinstance(admin, bool):
            errors.append({"path": "admin", "message": "must be a boolean"})
        kind = payload.get("kind", "person")
        if kind not in KINDS:
            errors.append({"path": "kind", "message": f"one of {list(KINDS)}"})
        if errors:
            return error_response(422, "validation_error", "the sign-in request is invalid", {"errors": errors})
        return json_response(200, {"token": issue_token(user, admin=admin, kind=kind, secret=self.jwt_secret)})

    def _file(self, path: Path) -> HttpResponse:
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None:
            return _not_found()
        try:
            body = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return _not_found()
        return self._bytes(body, content_type)

    def _bytes(self, body: bytes, content_type: str, csp: str | None = None) -> HttpResponse:
        headers = [
            ("content-type", content_type),
            # The files change under `make dev` as they are edited: revalidate every time.
            ("cache-control", "no-cache"),
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
            ("content-security-policy", csp or self.csp()),
        ]
        return HttpResponse(200, headers, body)


def _not_found() -> HttpResponse:
    return error_response(404, "not_found", f"no such file under {PAGE_PREFIX}/")


LOGIN_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)

LOGIN_HTML = """<!DOCTYPE html>
<html lang="zh-CN">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>本地登录 · skillcore</title>
    <link rel="stylesheet" href="/skills/styles.css">
    <link rel="icon" href="/skills/favicon.svg" type="image/svg+xml">
  </head>
  <body class="login">
    <main class="login-card">
      <h1>skillcore 本地登录 <span lang="en">/ Local sign-in</span></h1>
      <p id="login-notice" class="notice" role="status" hidden></p>
      <p>本地开发栈：输入任意用户名即可登录。<span lang="en">Local stack: any user name signs in.</span></p>
      <form id="login-form">
        <label for="user">用户名 <span lang="en">/ User name</span></label>
        <input id="user" name="user" autocomplete="username" required maxlength="128"
               pattern="[A-Za-z0-9._@+\\-]+" aria-describedby="user-hint">
        <p id="user-hint" class="hint">字母、数字和 . _ @ + - <span lang="en">/ letters, digits and . _ @ + -</span></p>
        <label class="check"><input id="admin" name="admin" type="checkbox"> 管理员 <span lang="en">/ Admin</span></label>
        <button type="submit">登录 <span lang="en">/ Sign in</span></button>
        <p id="login-error" class="error" role="alert" hidden></p>
      </form>
    </main>
    <script src="/_local/login.js"></script>
  </body>
</html>
"""

LOGIN_JS = f"""// Local sign-in: mint a local token and hand it to the page through this tab's session storage.
(function () {{
  var form = document.getElementById("login-form");
  var failure = document.getElementById("login-error");
  // A notice the page left before sending here (e.g. the session ended), shown once.
  var notice = document.getElementById("login-notice");
  var text = sessionStorage.getItem("{NOTICE_STORAGE_KEY}");
  if (text) {{
    sessionStorage.removeItem("{NOTICE_STORAGE_KEY}");
    notice.textContent = text;
    notice.hidden = false;
  }}
  var next = new URLSearchParams(location.search).get("next") || "";
  // Only a path on this page: never a redirect to another origin.
  if (!/^\\/skills\\/[^\\/\\\\]*$/.test(next.split("#")[0].split("?")[0])) next = "/skills/";
  form.addEventListener("submit", function (event) {{
    event.preventDefault();
    failure.hidden = true;
    var body = {{user: form.user.value.trim(), admin: form.admin.checked}};
    fetch("{TOKEN_PATH}", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(body)}})
      .then(function (response) {{
        return response.json().then(function (data) {{
          if (!response.ok) throw new Error((data.error && data.error.message) || response.statusText);
          sessionStorage.setItem("{TOKEN_STORAGE_KEY}", data.token);
          location.assign(next);
        }});
      }})
      .catch(function (error) {{
        failure.textContent = error.message;
        failure.hidden = false;
      }});
  }});
  form.user.focus();
}})();
"""
