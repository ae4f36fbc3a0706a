"""The offline draft generator: a deterministic stand-in for the model in the creation flow, used locally and
in tests (wherever SKILLS_MODEL=offline). It is the OfflineModel's tool planner for `propose_capability`:
it reads the user's JSON document (capabilities/drafter.py `user_document`) and calls the tool with what
these phrasings say. Its answer then goes through the same enforcement as a real model's.

What it understands, one labelled line each (a full-width or ASCII colon; labels are case-insensitive):
- `名称：` / `name:`                         → name (snake_case)
- `显示名称：` `显示名：` / `display name:`  → displayName (default: the name)
- `触发词：` `触发：` / `when to use:` `triggers:` → whenToUse, split on commas, `、` and semicolons
- `目标：` / `objective:` `goal:`            → objective (default: the first unlabelled line, if any)
- `步骤：` / `steps:`                        → steps numbered `1.` `2、` `3)` (counting up from 1) on that line or
  the lines below, else one per line (a leading `-`, `*` or `•` dropped)
- `完成条件：` / `done when:` `completion criteria:` → completionCriteria
A step is
- `use tool <name> on <hostProfile>: <what to do>` (also `tool <name>@<hostProfile>: …`, `工具 <name>@<hostProfile>：…`)
  → a localTool step on that binding (which the user must then give: otherwise a missing_binding gap);
- `<capability-id>: <what to do>`, the id of a built-in skill (lowercase words joined by hyphens)
  → a platformCapability step (an id the registry does not have becomes an unknown_capability gap);
- anything else → no step, and a missing_info gap asking which capability or tool that step uses.
What it asks otherwise: a missing_info gap for a missing name, triggers, objective, steps or completion
criteria. Answers: a text answer sets the field its gap's path names; a text answer to a step's gap is read as
that step's reference (`use tool <name> on <host>` or a capability id, optionally followed by `: <what to do>`);
a binding answer to a step's gap makes that step use the given binding; a `drop` answer removes that step.
A step that names neither a capability nor a tool is asked about in a gap that carries its description
(`instruction`), so the steps listed are kept as they were written. Without a display name, the proposal's is
readable (capabilities/drafter.py `readable_name`), never the snake_case name.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillcore.model.port import ModelRequest, ToolCall

_COLON = r"\s*[:：]\s*"
_LABELS: tuple[tuple[str, str], ...] = (
    ("displayName", r"显示名称|显示名|display\s+name"),
    ("name", r"名称|name"),
    ("whenToUse", r"触发词|触发|when\s+to\s+use|triggers"),
    ("objective", r"目标|objective|goal"),
    ("steps", r"步骤|steps"),
    ("completionCriteria", r"完成条件|done\s+when|completion\s+criteria"),
)
_LABEL_LINE = re.compile(r"^\s*(?:" + "|".join(f"(?P<{f}>{p})" for f, p in _LABELS) + r")" + _COLON + r"(?P<rest>.*)$",
                         re.IGNORECASE)
# A step number: at the start, after white space or after CJK text or punctuation (`…上周2. 列出…`), followed by
# `.`, `、` or `)` but not by a digit (`1.5 小时` is no step number).
_NUMBERED = re.compile(r"(?:^|(?<=[\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef]))(\d{1,2})\s*[.、)）](?!\d)\s*")
_BULLET = re.compile(r"^\s*[-*•·]\s+")
_TOOL = re.compile(r"^\s*(?:use\s+tool|tool|用工具|工具)\s+(?P<name>[a-z][a-z0-9_]{1,39})\s*(?:\s+on\s+|@|\s+在\s*)"
                   r"(?P<host>[a-z0-9][a-z0-9._-]{0,39})\s*(?:[:：,，]\s*(?P<rest>.*))?$", re.IGNORECASE | re.DOTALL)
_CAPABILITY = re.compile(r"^\s*(?P<id>[a-z0-9]+(?:-[a-z0-9]+)+)\s*(?:[:：]\s*(?P<rest>.*))?$", re.DOTALL)
_SPLIT = re.compile(r"\s*[,，、;；]\s*")


def plan(request: ModelRequest) -> tuple[ToolCall, ...]:
    """The OfflineModel's ToolPlanner: a `propose_capability` call when that tool is offered, else none."""
    from skillcore.capabilities.drafter import PROPOSE_TOOL

    if not any(tool.name == PROPOSE_TOOL for tool in request.tools):
        return ()
    text = next((m.text for m in reversed(request.messages) if m.role == "user" and m.text), "{}")
    try:
        document = json.loads(text)
    except ValueError:
        document = {}
    return (ToolCall(call_id="offline-draft", name=PROPOSE_TOOL, input=propose(document)),)


def _sections(description: str) -> tuple[dict[str, str], list[str]]:
    fields: dict[str, str] = {}
    unlabelled: list[str] = []
    current: str | None = None
    for line in description.splitlines():
        match = _LABEL_LINE.match(line)
        if match:
            current = next(f for f, _ in _LABELS if match.group(f))
            fields[current] = match.group("rest").strip()
        elif current == "steps" and line.strip():
            fields["steps"] += "\n" + line.strip()
        elif line.strip():
            current = None
            unlabelled.append(line.strip())
    return fields, unlabelled


def split_steps(text: str) -> list[str]:
    """The steps of a steps text: numbered items counting up from 1 (inline or one per line; text before the
    first number is no step), else one step per non-empty line."""
    marks = list(_NUMBERED.finditer(text))
    if marks and [int(m.group(1)) for m in marks] == list(range(1, len(marks) + 1)):
        ends = [m.start() for m in marks[1:]] + [len(text)]
        return [item for m, end in zip(marks, ends, strict=True) if (item := text[m.end():end].strip())]
    return [_BULLET.sub("", line).strip() for line in text.splitlines() if _BULLET.sub("", line).strip()]


def parse_step(text: str, instruction: str | None = None) -> dict[str, Any] | None:
    """A step from its text (`instruction` replaces the text's own description when given), or None."""
    if match := _TOOL.match(text):
        what = (match.group("rest") or "").strip() or instruction or ""
        return {"kind": "localTool", "toolName": match.group("name"), "hostProfile": match.group("host"),
                "instruction": what}
    if match := _CAPABILITY.match(text):
        what = (match.group("rest") or "").strip() or instruction or ""
        return {"kind": "platformCapability", "capabilityId": match.group("id"), "instruction": what}
    return None


def _gap(path: str, kind: str = "missing_info", instruction: str | None = None) -> dict[str, str]:
    # The question is the server's (drafter.question), which replaces an empty one: the planner leaves it blank.
    gap = {"path": path, "kind": kind, "question": ""}
    return {**gap, "instruction": instruction} if instruction else gap


def _readable_name(name: str, objective: str) -> str:
    from skillcore.capabilities.drafter import readable_name

    return readable_name(name, objective)


def propose(document: dict[str, Any]) -> dict[str, Any]:
    description = str(document.get("description", ""))
    answers: dict[str, dict[str, Any]] = {}
    for answer in document.get("answers", []) if isinstance(document.get("answers"), list) else []:
        if isinstance(answer, dict) and isinstance(answer.get("path"), str):
            answers[answer["path"]] = answer  # the latest answer to a path wins
    bindings = {b["name"]: b for b in document.get("bindings", []) if isinstance(b, dict) and "name" in b}
    fields, unlabelled = _sections(description)
    for field in ("name", "displayName", "whenToUse", "completionCriteria"):
        if text := (answers.get(f"/{field}") or {}).get("text"):
            fields[field] = text.strip()
    for field in ("objective", "completionCriteria"):
        if text := (answers.get(f"/workflow/{field}") or {}).get("text"):
            fields[field] = text.strip()
    if "objective" not in fields and unlabelled:
        fields["objective"] = unlabelled[0][:500]
    if not fields.get("steps") and (text := (answers.get("/workflow/steps") or {}).get("text")):
        fields["steps"] = text

    gaps: list[dict[str, str]] = []
    steps: list[dict[str, Any]] = []
    steps_at: list[dict[str, Any] | None] = []  # by the description's step index
    dropped = {path for path, answer in answers.items() if answer.get("drop")}
    listed = split_steps(fields.get("steps", ""))
    for i, text in enumerate(listed):
        if any(path == f"/workflow/steps/{i}" or path.startswith(f"/workflow/steps/{i}/") for path in dropped):
            steps_at.append(None)  # the person removed it: neither a step nor a question
            continue
        step = parse_step(text)
        for path, answer in answers.items():
            if not path.startswith(f"/workflow/steps/{i}") or path[len(f"/workflow/steps/{i}"):][:1] not in ("", "/"):
                continue
            given = bindings.get(answer.get("bindingName") or "")
            instruction = step["instruction"] if step else text
            if given:
                step = {"kind": "localTool", "toolName": given["name"], "hostProfile": given["hostProfile"],
                        "instruction": instruction}
            elif answer.get("text"):
                step = parse_step(answer["text"], instruction) or step
        if step is None or not step["instruction"]:
            gaps.append(_gap(f"/workflow/steps/{i}", instruction=text))
            steps_at.append(None)
        else:
            steps.append(step)
            steps_at.append(step)
    for field, path in (("name", "/name"), ("whenToUse", "/whenToUse"), ("objective", "/workflow/objective"),
                        ("completionCriteria", "/workflow/completionCriteria")):
        if not fields.get(field):
            gaps.append(_gap(path))
    every_step_dropped = bool(listed) and not steps and not any(g["path"].startswith("/workflow/steps/") for g in gaps)
    if not listed or every_step_dropped:
        gaps.append(_gap("/workflow/steps"))
    if gaps and not steps or any(g["path"] in {"/name", "/whenToUse", "/workflow/objective",
                                              "/workflow/completionCriteria", "/workflow/steps"} for g in gaps):
        # No proposal yet, so the server cannot see the steps: ask for the undeclared bindings now as well.
        gaps += [_gap(f"/workflow/steps/{i}", "missing_binding", s["instruction"]) for i, s in enumerate(steps_at)
                 if s and s["kind"] == "localTool" and (bindings.get(s["toolName"]) or {}).get("hostProfile")
                 != s["hostProfile"]]
        return {"gaps": gaps}
    ids = list(dict.fromkeys(s["capabilityId"] for s in steps if s["kind"] == "platformCapability"))
    proposal = {
        "name": fields["name"],
        "displayName": fields.get("displayName") or _readable_name(fields["name"], fields["objective"]),
        "whenToUse": [t for t in _SPLIT.split(fields["whenToUse"]) if t][:10],
        "workflow": {"objective": fields["objective"], "steps": steps, "completionCriteria": fields["completionCriteria"]},
        "platformCapabilityIds": ids,
    }
    return {"proposal": proposal, "gaps": gaps}
