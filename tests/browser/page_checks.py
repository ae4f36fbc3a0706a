"""Checks run on whatever a section shows: axe-core's rules (accessibility) and the one-language detector.

axe-core is an npm dependency of the repository (`package.json`, `make node` installs it); it is evaluated in the
page through the DevTools protocol, which the page's Content-Security-Policy does not govern, and never served
to a person. A missing axe-core is an error, never a skip.

The language detector reads every text a person meets (text nodes, and the names and hints in `aria-label`,
`title`, `placeholder`, `alt` and the values of buttons), outside code spans (`<code>`, `<pre>`, `<kbd>`), elements
marked as user content (`data-user-content`), and elements marked with a language of their own (`lang`: the
language switch's 中文 / English). What it is given as user content (names the user chose, ids) is taken out of
the text first. Then, in the English page, any CJK character is a finding; in the Chinese page, any Latin word
not in ZH_LATIN_WORDS (names of the product, protocols and units that the Chinese page uses as they are).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


@cache
def _axe_source() -> str:
    if not AXE.is_file():
        raise RuntimeError(f"axe-core is missing ({AXE}): run `make node` (npm install)")
    return AXE.read_text(encoding="utf-8")


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it stands (every rule axe runs by default, any impact)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    result = page.evaluate(
        """async () => {
          const found = await window.axe.run(document, {resultTypes: ["violations"]});
          return found.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => ({target: n.target.join(" "), summary: n.failureSummary}))}));
        }"""
    )
    return list(result)


def describe(violations: list[dict[str, Any]]) -> str:
    return "\n".join(f"{v['id']} ({v['impact']}): {v['help']}\n" + "\n".join(
        f"    {n['target']}: {n['summary']}" for n in v["nodes"]) for v in violations)


def switch_names(page: Page) -> list[str]:
    """The accessible name of every switch (aria-labelledby, else aria-label, else its text)."""
    return list(page.evaluate(
        """() => [...document.querySelectorAll('[role="switch"]')].map((el) => {
          const by = el.getAttribute("aria-labelledby");
          if (by) return by.split(/\\s+/).map((id) => document.getElementById(id)?.textContent.trim() || "").join(" ");
          return (el.getAttribute("aria-label") || el.textContent || "").trim();
        })"""
    ))


# Latin words the Chinese page uses as they are: product and protocol names, units, formats.
ZH_LATIN_WORDS = frozenset({
    "agent", "agents", "skills", "skill", "mcp", "url", "json", "token", "tokens", "utc", "gmt", "api", "https", "id",
    "ip", "dify", "claude", "code", "cursor", "markdown", "schema", "ulid", "make", "evals", "l0", "l1", "l2", "l3",
    "l4", "ok", "english", "pm", "am", "ms", "skillcore", "bearer", "shift", "enter",
})

_TEXTS = """(root) => {
  const docLang = (document.documentElement.lang || "").slice(0, 2);
  const skip = (el) => {
    for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
      if (node.matches("code, pre, kbd, script, style, template, noscript, [data-user-content]")) return true;
      if (node.hasAttribute("lang") && node.getAttribute("lang").slice(0, 2) !== docLang) return true;
      if (node.hidden) return true;
    }
    return false;
  };
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (text && !skip(node.parentElement)) out.push(text);
  }
  for (const el of root.querySelectorAll("[aria-label], [title], [placeholder], [alt], input[type=submit], input[type=button]")) {
    if (skip(el)) continue;
    for (const name of ["aria-label", "title", "placeholder", "alt"]) {
      const value = el.getAttribute(name);
      if (value && value.trim()) out.push(value.trim());
    }
    if (el.matches("input[type=submit], input[type=button]") && el.value) out.push(el.value);
  }
  return out;
}"""

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
# Identifiers a person may meet as they are: IANA time zones (Asia/Shanghai, UTC) and permission codes
# (memory:read), which the page always shows beside their name.
ZONE = re.compile(r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)/[A-Za-z_+\-/0-9]+")
PERMISSION_CODE = re.compile(r"\b[a-z_]+:[a-z_]+\b")


def page_texts(page: Page, selector: str = "body") -> list[str]:
    return list(page.locator(selector).first.evaluate(_TEXTS))


def foreign_texts(texts: Iterable[str], lang: str, user_content: Iterable[str] = ()) -> list[str]:
    """The texts (with user content and ids taken out) that show the other language."""
    own = sorted({u for u in user_content if u}, key=len, reverse=True)
    found = []
    for text in texts:
        rest = PERMISSION_CODE.sub(" ", ZONE.sub(" ", ULID.sub(" ", text)))
        for value in own:  # whole words only: a one-letter argument name must not eat letters out of words
            rest = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", " ", rest)
        if lang == "en":
            if CJK.search(rest):
                found.append(text)
        else:
            words = [w for w in LATIN_WORD.findall(rest) if len(w) > 1 or w in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
            stray = [w for w in words if w.lower() not in ZH_LATIN_WORDS and not re.fullmatch(r"[A-Z]", w)]
            if stray:
                found.append(f"{text}  [{', '.join(stray)}]")
    return sorted(set(found))
