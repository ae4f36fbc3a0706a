// My capabilities (我的能力): the user's own `user:` capabilities, edited as a structure and never as a
// free-text prompt: display name, when-to-use phrases, objective, ordered steps (each a built-in skill or
// one of the capability's declared tool bindings, with its instruction) and completion criteria. The server
// runs its defences on every save and answers with JSON Pointer paths (`details.errors[].path`); each error
// is shown at the field it points to. Bindings carry a JSON Schema (a draft-07 subset) edited as JSON, with
// the refused keywords listed at their path. An active capability is read-only until deactivated.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { del, get, listAll, post, put } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { Empty, ErrorBox, focusAfterRender, formatTime, Loaded, useAction, useLoad } from "../lib/ui.js";

const MAX_CAPABILITIES = 50;
const MAX_BINDINGS = 20;
const MAX_STEPS = 20;
const MAX_TRIGGERS = 10;
const TEXT_MAX = 500;
const DEFAULT_SCHEMA = '{\n  "type": "object",\n  "properties": {},\n  "additionalProperties": false\n}';

register({
  zh: {
    "caps.title": "我的能力",
    "caps.intro": "把你的固定做法教给 Agent：能力以结构保存（目标、步骤、完成条件），由服务器渲染成 Agent 读取的协议，你写的文字只作为带标签的描述出现。",
    "caps.quota": "已用 {n} / {max} 个能力",
    "caps.bindingQuota": "绑定 {n} / {max}",
    "caps.create": "新建能力",
    "caps.empty": "还没有自定义能力。",
    "caps.status.draft": "草稿",
    "caps.status.active": "已启用",
    "caps.version": "版本 {v}",
    "caps.steps": "{n} 个步骤",
    "caps.updated": "更新于",
    "caps.open": "打开",
    "caps.openLabel": "打开“{name}”",
    "caps.close": "关闭",
    "caps.createTitle": "新建能力",
    "caps.editTitle": "编辑“{name}”",
    "caps.viewTitle": "查看“{name}”",
    "caps.name": "名称（英文标识，创建后不能修改）",
    "caps.nameHint": "小写字母开头，3–40 个字符，只用 a–z、0–9 和下划线。",
    "caps.displayName": "显示名称",
    "caps.whenToUse": "何时使用（触发短语）",
    "caps.whenToUseHint": "1–10 条，每条不超过 40 个字。",
    "caps.trigger": "触发短语 {n}",
    "caps.addTrigger": "添加触发短语",
    "caps.removeTrigger": "删除触发短语 {n}",
    "caps.objective": "目标",
    "caps.stepsTitle": "步骤",
    "caps.stepLabel": "第 {n} 步",
    "caps.stepKind": "第 {n} 步的类型",
    "caps.kind.platformCapability": "平台能力",
    "caps.kind.localTool": "工具绑定",
    "caps.stepCapability": "第 {n} 步的平台能力",
    "caps.stepBinding": "第 {n} 步的工具绑定",
    "caps.stepInstruction": "第 {n} 步的说明",
    "caps.noBindings": "这个能力还没有声明工具绑定：先在下方“工具绑定”中添加。",
    "caps.bindingsAfterCreate": "工具绑定在保存草稿后添加。",
    "caps.moveUp": "上移第 {n} 步",
    "caps.moveDown": "下移第 {n} 步",
    "caps.removeStep": "删除第 {n} 步",
    "caps.up": "上移",
    "caps.down": "下移",
    "caps.remove": "删除",
    "caps.addStep": "添加步骤",
    "caps.completion": "完成条件",
    "caps.counter": "{n}/{max} 字",
    "caps.save": "保存草稿",
    "caps.createSubmit": "创建草稿",
    "caps.saving": "正在保存…",
    "caps.created": "已创建“{name}”（草稿）。",
    "caps.saved": "已保存“{name}”，版本 {v}。",
    "caps.conflict": "这个能力已在别处被修改（当前版本 {v}）。重新加载会放弃这里未保存的修改。",
    "caps.reload": "重新加载",
    "caps.readOnly": "这个能力已启用，不能修改：先停用，它回到草稿后才能编辑。",
    "caps.activate": "启用",
    "caps.deactivate": "停用",
    "caps.activated": "已启用“{name}”。",
    "caps.deactivated": "已停用“{name}”，它回到草稿。",
    "caps.unsaved": "有未保存的修改：启用的是已保存的版本。",
    "caps.delete": "删除",
    "caps.deleteLabel": "删除“{name}”",
    "caps.confirmDelete": "确定删除“{name}”吗？它的工具绑定也一起删除。",
    "caps.confirmDeleteYes": "确认删除",
    "caps.confirmDeleteNo": "保留",
    "caps.deleted": "已删除“{name}”。",
    "caps.errorsBelow": "请修改标出的字段。",
    "caps.rule.ignore_rules": "看起来在要求 Agent 忽略它的规则，请换一种说法。",
    "caps.rule.tool_command": "看起来在命令 Agent 调用工具；调用哪些工具由步骤决定，请换一种说法。",
    "caps.rule.role_play": "看起来在冒充系统或开发者消息，请换一种说法。",
    "caps.rule.zero_width": "含有零宽或不可见字符，请删除。",
    "caps.rule.bidi_control": "含有改变文字方向的控制字符，请删除。",
    "caps.rule.control_character": "含有控制字符，请删除。",
    "caps.rule.other": "未通过文字检查（{rule}）。",
    "caps.unknownRef": "引用了不存在或未声明的“{ref}”。",
    "caps.filterNote": "文字检查只是尽力而为的提示，安全由结构保证。",
    "caps.bindings": "工具绑定",
    "caps.bindingsIntro": "绑定描述你自己的 Agent 宿主上的 MCP 工具。平台只保存它，从不注册、代理或运行它。",
    "caps.bindingsEmpty": "还没有工具绑定。",
    "caps.addBinding": "添加工具绑定",
    "caps.editBinding": "编辑",
    "caps.editBindingLabel": "编辑绑定 {name}",
    "caps.removeBinding": "删除",
    "caps.removeBindingLabel": "删除绑定 {name}",
    "caps.bindingFormNew": "新的工具绑定",
    "caps.bindingFormEdit": "编辑绑定 {name}",
    "caps.bindingName": "绑定名称",
    "caps.hostProfile": "宿主配置（hostProfile）",
    "caps.mcpServerId": "MCP 服务器 ID",
    "caps.mcpToolName": "MCP 工具名",
    "caps.confirmEachRun": "每次运行前需要用户确认（requiresUserConfirmation）",
    "caps.confirmYes": "每次确认",
    "caps.confirmNo": "无需确认",
    "caps.inputSchema": "输入 Schema（JSON）",
    "caps.schemaHint": "JSON Schema draft-07 的子集：type、properties、required、additionalProperties、items、enum、const、数值和长度范围、title、description、default、examples。",
    "caps.schemaErrors": "Schema 中不允许的内容",
    "caps.schemaBadJson": "不是有效的 JSON：{message}",
    "caps.schemaNotObject": "Schema 必须是一个 JSON 对象。",
    "caps.schemaKeyword": "不允许的关键字或取值：{keyword}",
    "caps.schemaDepth": "嵌套太深（最多 6 层）。",
    "caps.schemaNodes": "Schema 节点太多（最多 200 个）。",
    "caps.schemaBytes": "Schema 太大（最多 16 KiB）。",
    "caps.root": "（根）",
    "caps.saveBinding": "保存绑定",
    "caps.addBindingSubmit": "添加绑定",
    "caps.cancel": "取消",
    "caps.bindingSaved": "已保存绑定 {name}。",
    "caps.bindingRemoved": "已删除绑定 {name}。",
    "caps.bindingInUse": "第 {steps} 步正在使用这个绑定：先修改或删除这些步骤并保存。",
    "caps.confirmRemoveBinding": "确定删除绑定 {name} 吗？",
    "caps.bindingNeedsSave": "先保存或放弃对能力的修改，再修改绑定。",
    "caps.protocol": "协议预览",
    "caps.protocolIntro": "宿主读取的协议，由服务器根据已保存的结构渲染（原样显示的 Markdown 文本）。",
    "caps.protocolHost": "宿主配置",
    "caps.protocolNoHost": "（不指定）",
    "caps.protocolShow": "显示协议",
    "caps.protocolRefresh": "重新渲染",
    "caps.protocolOf": "版本 {v} 的协议",
    "caps.protocolMissing": "这个宿主缺少的绑定：{names}",
    "caps.protocolUnsaved": "预览的是已保存的版本，不含未保存的修改。",
    "caps.talk": "通过对话创建",
    "caps.talkTitle": "通过对话创建能力",
    "caps.talkIntro": "用自己的话描述这个固定做法。服务器生成一份结构化的提案；缺少的信息会作为问题列出，绝不会替你编造工具绑定或能力。",
    "caps.describe": "描述",
    "caps.describeHint": "例如：名称、触发词、目标、步骤（每步用哪个平台能力或工具）、完成条件。",
    "caps.start": "开始",
    "caps.starting": "正在生成…",
    "caps.revision": "第 {r} 版 · {status} · 有效期至 {at}",
    "caps.draft.open": "进行中",
    "caps.draft.confirmed": "已确认",
    "caps.draft.expired": "已过期",
    "caps.gaps": "还需要你回答的问题",
    "caps.noGaps": "没有待回答的问题：可以确认创建。",
    "caps.answer": "回答",
    "caps.gapBinding": "为这个问题提供工具绑定",
    "caps.generate": "根据回答重新生成",
    "caps.generating": "正在生成…",
    "caps.proposal": "提案",
    "caps.noProposal": "还没有提案。",
    "caps.proposalName": "名称",
    "caps.proposalBindings": "工具绑定",
    "caps.confirm": "确认创建草稿",
    "caps.confirming": "正在创建…",
    "caps.confirmHint": "确认后创建一个草稿能力，启用仍需要你单独操作。",
    "caps.revisionConflict": "这份提案已经变了（当前第 {r} 版）。",
    "caps.regenerate": "获取最新提案",
    "caps.answerFirst": "请至少回答一个问题。",
  },
  en: {
    "caps.title": "My capabilities",
    "caps.intro": "Teach your agents a routine of yours: a capability is stored as a structure (objective, steps, completion criteria) and the server renders the protocol an agent reads; your texts appear there only as labelled descriptions.",
    "caps.quota": "{n} / {max} capabilities used",
    "caps.bindingQuota": "Bindings {n} / {max}",
    "caps.create": "New capability",
    "caps.empty": "No capability of your own yet.",
    "caps.status.draft": "Draft",
    "caps.status.active": "Active",
    "caps.version": "Version {v}",
    "caps.steps": "{n} steps",
    "caps.updated": "Updated",
    "caps.open": "Open",
    "caps.openLabel": "Open “{name}”",
    "caps.close": "Close",
    "caps.createTitle": "New capability",
    "caps.editTitle": "Edit “{name}”",
    "caps.viewTitle": "View “{name}”",
    "caps.name": "Name (identifier, fixed once created)",
    "caps.nameHint": "Starts with a lowercase letter, 3–40 characters: a–z, 0–9 and underscore.",
    "caps.displayName": "Display name",
    "caps.whenToUse": "When to use (trigger phrases)",
    "caps.whenToUseHint": "1–10 phrases of up to 40 characters.",
    "caps.trigger": "Trigger phrase {n}",
    "caps.addTrigger": "Add a trigger phrase",
    "caps.removeTrigger": "Remove trigger phrase {n}",
    "caps.objective": "Objective",
    "caps.stepsTitle": "Steps",
    "caps.stepLabel": "Step {n}",
    "caps.stepKind": "Kind of step {n}",
    "caps.kind.platformCapability": "Platform capability",
    "caps.kind.localTool": "Tool binding",
    "caps.stepCapability": "Platform capability of step {n}",
    "caps.stepBinding": "Tool binding of step {n}",
    "caps.stepInstruction": "Instruction of step {n}",
    "caps.noBindings": "This capability declares no tool binding yet: add one under “Tool bindings” below.",
    "caps.bindingsAfterCreate": "Tool bindings are added once the draft is saved.",
    "caps.moveUp": "Move step {n} up",
    "caps.moveDown": "Move step {n} down",
    "caps.removeStep": "Remove step {n}",
    "caps.up": "Up",
    "caps.down": "Down",
    "caps.remove": "Remove",
    "caps.addStep": "Add a step",
    "caps.completion": "Completion criteria",
    "caps.counter": "{n}/{max} characters",
    "caps.save": "Save draft",
    "caps.createSubmit": "Create draft",
    "caps.saving": "Saving…",
    "caps.created": "Created “{name}” (draft).",
    "caps.saved": "Saved “{name}”, version {v}.",
    "caps.conflict": "This capability was changed elsewhere (now version {v}). Reloading discards the changes not saved here.",
    "caps.reload": "Reload",
    "caps.readOnly": "This capability is active and cannot be changed: deactivate it to edit it as a draft again.",
    "caps.activate": "Activate",
    "caps.deactivate": "Deactivate",
    "caps.activated": "Activated “{name}”.",
    "caps.deactivated": "Deactivated “{name}”: it is a draft again.",
    "caps.unsaved": "There are unsaved changes: activation uses the saved version.",
    "caps.delete": "Delete",
    "caps.deleteLabel": "Delete “{name}”",
    "caps.confirmDelete": "Delete “{name}”? Its tool bindings go with it.",
    "caps.confirmDeleteYes": "Yes, delete",
    "caps.confirmDeleteNo": "Keep it",
    "caps.deleted": "Deleted “{name}”.",
    "caps.errorsBelow": "Please change the marked fields.",
    "caps.rule.ignore_rules": "This reads as telling the agent to ignore its rules; please phrase it differently.",
    "caps.rule.tool_command": "This reads as ordering the agent to call a tool; the steps decide which tools are used. Please phrase it differently.",
    "caps.rule.role_play": "This reads as a system or developer message; please phrase it differently.",
    "caps.rule.zero_width": "Contains zero-width or invisible characters; please remove them.",
    "caps.rule.bidi_control": "Contains text direction control characters; please remove them.",
    "caps.rule.control_character": "Contains control characters; please remove them.",
    "caps.rule.other": "Did not pass the text check ({rule}).",
    "caps.unknownRef": "“{ref}” does not exist or is not declared.",
    "caps.filterNote": "The text check is a best-effort hint; the structure is what keeps agents safe.",
    "caps.bindings": "Tool bindings",
    "caps.bindingsIntro": "A binding describes an MCP tool on your own agent host. The platform only stores it: it never registers, proxies or runs it.",
    "caps.bindingsEmpty": "No tool binding yet.",
    "caps.addBinding": "Add a tool binding",
    "caps.editBinding": "Edit",
    "caps.editBindingLabel": "Edit binding {name}",
    "caps.removeBinding": "Remove",
    "caps.removeBindingLabel": "Remove binding {name}",
    "caps.bindingFormNew": "New tool binding",
    "caps.bindingFormEdit": "Edit binding {name}",
    "caps.bindingName": "Binding name",
    "caps.hostProfile": "Host profile (hostProfile)",
    "caps.mcpServerId": "MCP server id",
    "caps.mcpToolName": "MCP tool name",
    "caps.confirmEachRun": "Ask the user before each run (requiresUserConfirmation)",
    "caps.confirmYes": "Ask each run",
    "caps.confirmNo": "No confirmation",
    "caps.inputSchema": "Input schema (JSON)",
    "caps.schemaHint": "A subset of JSON Schema draft-07: type, properties, required, additionalProperties, items, enum, const, numeric and length bounds, title, description, default, examples.",
    "caps.schemaErrors": "Not allowed in the schema",
    "caps.schemaBadJson": "Not valid JSON: {message}",
    "caps.schemaNotObject": "The schema must be a JSON object.",
    "caps.schemaKeyword": "Keyword or value not allowed: {keyword}",
    "caps.schemaDepth": "Nested too deep (at most 6 levels).",
    "caps.schemaNodes": "Too many schema nodes (at most 200).",
    "caps.schemaBytes": "The schema is too large (at most 16 KiB).",
    "caps.root": "(root)",
    "caps.saveBinding": "Save binding",
    "caps.addBindingSubmit": "Add binding",
    "caps.cancel": "Cancel",
    "caps.bindingSaved": "Saved binding {name}.",
    "caps.bindingRemoved": "Removed binding {name}.",
    "caps.bindingInUse": "Step {steps} uses this binding: change or remove those steps and save first.",
    "caps.confirmRemoveBinding": "Remove binding {name}?",
    "caps.bindingNeedsSave": "Save or discard the changes to the capability before changing its bindings.",
    "caps.protocol": "Protocol preview",
    "caps.protocolIntro": "The protocol a host reads, rendered by the server from the saved structure (the Markdown shown as plain text).",
    "caps.protocolHost": "Host profile",
    "caps.protocolNoHost": "(none)",
    "caps.protocolShow": "Show the protocol",
    "caps.protocolRefresh": "Render again",
    "caps.protocolOf": "Protocol of version {v}",
    "caps.protocolMissing": "Bindings this host lacks: {names}",
    "caps.protocolUnsaved": "The preview is of the saved version, without the unsaved changes.",
    "caps.talk": "Create by conversation",
    "caps.talkTitle": "Create a capability by conversation",
    "caps.talkIntro": "Describe the routine in your own words. The server drafts a structured proposal; what is missing is asked as questions, and no tool binding or capability is ever made up for you.",
    "caps.describe": "Description",
    "caps.describeHint": "For example: a name, trigger phrases, the objective, the steps (which platform capability or tool each uses), the completion criteria.",
    "caps.start": "Start",
    "caps.starting": "Drafting…",
    "caps.revision": "Revision {r} · {status} · valid until {at}",
    "caps.draft.open": "open",
    "caps.draft.confirmed": "confirmed",
    "caps.draft.expired": "expired",
    "caps.gaps": "Questions for you",
    "caps.noGaps": "No open question: the proposal can be confirmed.",
    "caps.answer": "Answer",
    "caps.gapBinding": "Give a tool binding for this question",
    "caps.generate": "Draft again with the answers",
    "caps.generating": "Drafting…",
    "caps.proposal": "Proposal",
    "caps.noProposal": "No proposal yet.",
    "caps.proposalName": "Name",
    "caps.proposalBindings": "Tool bindings",
    "caps.confirm": "Confirm and create the draft",
    "caps.confirming": "Creating…",
    "caps.confirmHint": "Confirming creates a draft capability; activating it stays a separate step.",
    "caps.revisionConflict": "The proposal has changed (now revision {r}).",
    "caps.regenerate": "Get the latest proposal",
    "caps.answerFirst": "Please answer at least one question.",
  },
});

// -- server errors at their fields ------------------------------------------------------------------

// A JSON Pointer ("/workflow/steps/0/instruction") or a validation path ("workflow.steps.0.localTool.instruction")
// as one key ("workflow.steps.0.instruction"). The validation path names the step's kind; the key does not.
export function fieldKey(path) {
  const text = String(path ?? "");
  const pointer = text.startsWith("/") || (text.includes("/") && !text.includes("."));
  const parts = pointer
    ? text.replace(/^\//, "").split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    : text.split(".");
  return parts.filter((p) => p !== "" && p !== "platformCapability" && p !== "localTool").join(".");
}

function ruleMessage(rule) {
  const key = `caps.rule.${rule}`;
  const text = t(key);
  return text === key ? t("caps.rule.other", { rule }) : text;
}

function schemaMessage(keyword) {
  if (keyword === "maxDepth") return t("caps.schemaDepth");
  if (keyword === "maxNodes") return t("caps.schemaNodes");
  if (keyword === "maxBytes") return t("caps.schemaBytes");
  return t("caps.schemaKeyword", { keyword });
}

// {fieldKey: [message]} from an error envelope's details.errors (validation_error, unsafe_text, unknown_reference).
function fieldErrors(error) {
  const byField = {};
  if (!error || !error.details || !Array.isArray(error.details.errors)) return byField;
  if (error.code === "schema_not_allowed") return byField;
  for (const item of error.details.errors) {
    let message = item.message;
    if (error.code === "unsafe_text") message = ruleMessage(item.rule);
    else if (error.code === "unknown_reference") message = t("caps.unknownRef", { ref: item.ref });
    const key = fieldKey(item.path);
    (byField[key] = byField[key] || []).push(message || error.message);
  }
  return byField;
}

function FieldError({ id, messages }) {
  if (!messages || messages.length === 0) return null;
  return html`<p id=${id} class="field-error" data-testid="field-error">${messages.join(" ")}</p>`;
}

// Props that tie a field to its error message (aria-invalid, aria-describedby).
function invalid(errors, key, id, hint) {
  const has = Boolean(errors[key]);
  return {
    "aria-invalid": has ? "true" : undefined,
    "aria-describedby": [hint, has && `${id}-error`].filter(Boolean).join(" ") || undefined,
  };
}

// -- the editor's model -----------------------------------------------------------------------------

let stepSerial = 0;
const withKey = (step) => ({ ...step, key: ++stepSerial });

function formOf(capability, skills) {
  if (!capability) {
    return {
      name: "",
      displayName: "",
      whenToUse: [""],
      objective: "",
      steps: [withKey({ kind: "platformCapability", capabilityId: (skills[0] && skills[0].skillId) || "", instruction: "" })],
      completionCriteria: "",
    };
  }
  return {
    name: capability.name,
    displayName: capability.displayName,
    whenToUse: [...capability.whenToUse],
    objective: capability.workflow.objective,
    steps: capability.workflow.steps.map((s) => withKey({ ...s })),
    completionCriteria: capability.workflow.completionCriteria,
  };
}

function stepBody(step) {
  if (step.kind === "localTool") {
    return { kind: "localTool", toolName: step.toolName, hostProfile: step.hostProfile, instruction: step.instruction };
  }
  return { kind: "platformCapability", capabilityId: step.capabilityId, instruction: step.instruction };
}

// The body's platformCapabilityIds are those the steps use, in order of first use: nothing is declared that no
// step needs (the server would narrow it away from a protocol anyway).
function bodyOf(form) {
  const steps = form.steps.map(stepBody);
  const platformCapabilityIds = [
    ...new Set(steps.filter((s) => s.kind === "platformCapability").map((s) => s.capabilityId)),
  ];
  return {
    displayName: form.displayName,
    whenToUse: form.whenToUse,
    workflow: { objective: form.objective, steps, completionCriteria: form.completionCriteria },
    platformCapabilityIds,
  };
}

// An error at /platformCapabilityIds/i is shown at the first step that uses that id.
function remapDeclared(errors, body) {
  const out = { ...errors };
  for (const key of Object.keys(errors)) {
    const match = /^platformCapabilityIds\.(\d+)$/.exec(key);
    if (!match) continue;
    const id = body.platformCapabilityIds[Number(match[1])];
    const index = body.workflow.steps.findIndex((s) => s.kind === "platformCapability" && s.capabilityId === id);
    if (index >= 0) {
      const target = `workflow.steps.${index}.capabilityId`;
      out[target] = [...(out[target] || []), ...errors[key]];
      delete out[key];
    }
  }
  return out;
}

const sameForm = (a, b) => JSON.stringify(bodyOf(a)) === JSON.stringify(bodyOf(b)) && a.name === b.name;


// -- the editor -------------------------------------------------------------------------------------

function Counter({ id, value }) {
  return html`<p id=${id} class="hint">${t("caps.counter", { n: value.length, max: TEXT_MAX })}</p>`;
}

function StepEditor({ step, index, count, skills, bindings, errors, readOnly, onChange, onMove, onRemove }) {
  const n = index + 1;
  const id = `cap-step-${index}`;
  const key = `workflow.steps.${index}`;
  const setKind = (kind) => {
    if (kind === "localTool") {
      const first = bindings[0];
      onChange({ kind, toolName: first ? first.name : "", hostProfile: first ? first.hostProfile : "", instruction: step.instruction });
    } else {
      onChange({ kind, capabilityId: (skills[0] && skills[0].skillId) || "", instruction: step.instruction });
    }
  };
  const pickBinding = (name) => {
    const binding = bindings.find((b) => b.name === name);
    onChange({ ...step, toolName: name, hostProfile: binding ? binding.hostProfile : step.hostProfile });
  };
  const refErrors = [
    ...(errors[`${key}.capabilityId`] || []),
    ...(errors[`${key}.toolName`] || []),
    ...(errors[`${key}.hostProfile`] || []),
    ...(errors[key] || []),
  ];
  const refAria = {
    "aria-invalid": refErrors.length ? "true" : undefined,
    "aria-describedby": refErrors.length ? `${id}-ref-error` : undefined,
  };
  const known = bindings.some((b) => b.name === step.toolName);
  return html`<li class="step card" data-testid="step" data-step=${index}>
    <div class="row">
      <h4 class="grow" id=${`${id}-title`}>${t("caps.stepLabel", { n })}</h4>
      ${!readOnly &&
      html`<div class="row" role="group" aria-labelledby=${`${id}-title`}>
        <button type="button" class="quiet" id=${`${id}-up`} disabled=${index === 0} aria-label=${t("caps.moveUp", { n })}
          onClick=${() => onMove(index, -1)}>↑ ${t("caps.up")}</button>
        <button type="button" class="quiet" id=${`${id}-down`} disabled=${index === count - 1}
          aria-label=${t("caps.moveDown", { n })} onClick=${() => onMove(index, 1)}>↓ ${t("caps.down")}</button>
        <button type="button" class="danger" disabled=${count === 1} aria-label=${t("caps.removeStep", { n })}
          onClick=${() => onRemove(index)}>${t("caps.remove")}</button>
      </div>`}
    </div>
    <div class="row">
      <div>
        <label for=${`${id}-kind`}>${t("caps.stepKind", { n })}</label>
        <select id=${`${id}-kind`} value=${step.kind} onChange=${(e) => setKind(e.currentTarget.value)}>
          <option value="platformCapability">${t("caps.kind.platformCapability")}</option>
          <option value="localTool" disabled=${bindings.length === 0 && step.kind !== "localTool"}>${t("caps.kind.localTool")}</option>
        </select>
      </div>
      ${step.kind === "localTool"
        ? html`<div class="grow">
            <label for=${`${id}-binding`}>${t("caps.stepBinding", { n })}</label>
            <select id=${`${id}-binding`} value=${step.toolName} ...${refAria} onChange=${(e) => pickBinding(e.currentTarget.value)}>
              ${!known && html`<option value=${step.toolName}>${step.toolName}</option>`}
              ${bindings.map((b) => html`<option value=${b.name}>${b.name} (${b.hostProfile} · ${b.mcpServerId}/${b.mcpToolName})</option>`)}
            </select>
          </div>`
        : html`<div class="grow">
            <label for=${`${id}-capability`}>${t("caps.stepCapability", { n })}</label>
            <select id=${`${id}-capability`} value=${step.capabilityId} ...${refAria}
              onChange=${(e) => onChange({ ...step, capabilityId: e.currentTarget.value })}>
              ${!skills.some((s) => s.skillId === step.capabilityId) && html`<option value=${step.capabilityId}>${step.capabilityId}</option>`}
              ${skills.map((s) => html`<option value=${s.skillId}>${s.name} (${s.skillId})</option>`)}
            </select>
          </div>`}
    </div>
    <${FieldError} id=${`${id}-ref-error`} messages=${refErrors} />
    ${step.kind === "localTool" && bindings.length === 0 && html`<p class="hint">${t("caps.noBindings")}</p>`}
    <label for=${`${id}-instruction`}>${t("caps.stepInstruction", { n })}</label>
    <textarea id=${`${id}-instruction`} maxlength=${TEXT_MAX} value=${step.instruction}
      ...${invalid(errors, `${key}.instruction`, `${id}-instruction`, `${id}-instruction-count`)}
      onInput=${(e) => onChange({ ...step, instruction: e.currentTarget.value })}></textarea>
    <${Counter} id=${`${id}-instruction-count`} value=${step.instruction} />
    <${FieldError} id=${`${id}-instruction-error`} messages=${errors[`${key}.instruction`]} />
  </li>`;
}

function CapabilityForm({ capability, skills, onSaved, onCreated, onDirty, onReload }) {
  const creating = !capability;
  const [form, setForm] = useState(() => formOf(capability, skills));
  const [saved, setSaved] = useState(() => formOf(capability, skills));
  const [notice, setNotice] = useState("");
  const action = useAction();
  const readOnly = capability && capability.status === "active";
  const bindings = capability ? capability.toolBindings : [];
  const body = bodyOf(form);
  const errors = remapDeclared(fieldErrors(action.error), body);
  const conflict = action.error && action.error.code === "version_conflict";
  const hasFieldErrors = Object.keys(errors).length > 0;

  const dirty = !sameForm(form, saved);
  useEffect(() => onDirty(dirty), [dirty]);

  // A capability saved, activated or reloaded elsewhere in the editor: take its stored state.
  useEffect(() => {
    if (!capability) return;
    const fresh = formOf(capability, skills);
    setSaved(fresh);
    setForm((old) => (readOnly || sameForm(old, saved) ? fresh : old));
  }, [capability && capability.version, capability && capability.status]);

  const set = (field) => (value) => setForm((old) => ({ ...old, [field]: value }));
  const setTrigger = (i, value) => set("whenToUse")(form.whenToUse.map((w, j) => (j === i ? value : w)));
  const addTrigger = () => {
    set("whenToUse")([...form.whenToUse, ""]);
    focusAfterRender(`cap-trigger-${form.whenToUse.length}`);
  };
  const removeTrigger = (i) => {
    set("whenToUse")(form.whenToUse.filter((_, j) => j !== i));
    focusAfterRender(`cap-trigger-${Math.max(0, i - 1)}`);
  };
  const setStep = (i, step) => set("steps")(form.steps.map((s, j) => (j === i ? { ...step, key: s.key } : s)));
  const moveStep = (i, delta) => {
    const j = i + delta;
    if (j < 0 || j >= form.steps.length) return;
    const steps = [...form.steps];
    [steps[i], steps[j]] = [steps[j], steps[i]];
    set("steps")(steps);
    // The focus follows the step it moved, onto the same button (or the other one at an end).
    const edge = (delta < 0 && j === 0) || (delta > 0 && j === steps.length - 1);
    focusAfterRender(`cap-step-${j}-${(delta < 0) !== edge ? "up" : "down"}`);
  };
  const removeStep = (i) => {
    set("steps")(form.steps.filter((_, j) => j !== i));
    focusAfterRender("cap-add-step");
  };
  const addStep = () => {
    set("steps")([
      ...form.steps,
      withKey({ kind: "platformCapability", capabilityId: (skills[0] && skills[0].skillId) || "", instruction: "" }),
    ]);
    focusAfterRender(`cap-step-${form.steps.length}-kind`);
  };

  const submit = (event) => {
    event.preventDefault();
    setNotice("");
    action.run(async () => {
      if (creating) {
        const created = await post("/user-capabilities", { name: form.name, ...body });
        onCreated(created, t("caps.created", { name: created.displayName }));
        return;
      }
      const updated = await put(`/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}`, {
        expectedVersion: capability.version,
        ...body,
      });
      setSaved(form);
      setNotice(t("caps.saved", { name: updated.displayName, v: updated.version }));
      onSaved(updated);
    });
  };

  const reload = async () => {
    action.clear();
    const fresh = await onReload();
    if (fresh) {
      setForm(formOf(fresh, skills));
      setSaved(formOf(fresh, skills));
    }
  };

  const fieldset = html`<fieldset class="plain" disabled=${readOnly}>
    ${creating &&
    html`<label for="cap-name">${t("caps.name")}</label>
      <input id="cap-name" value=${form.name} maxlength="40" autocomplete="off" spellcheck="false"
        ...${invalid(errors, "name", "cap-name", "cap-name-hint")} onInput=${(e) => set("name")(e.currentTarget.value)} />
      <p id="cap-name-hint" class="hint">${t("caps.nameHint")}</p>
      <${FieldError} id="cap-name-error" messages=${errors.name} />`}
    <label for="cap-display-name">${t("caps.displayName")}</label>
    <input id="cap-display-name" value=${form.displayName} maxlength="60"
      ...${invalid(errors, "displayName", "cap-display-name")} onInput=${(e) => set("displayName")(e.currentTarget.value)} />
    <${FieldError} id="cap-display-name-error" messages=${errors.displayName} />

    <fieldset class="tools" aria-describedby="cap-triggers-hint">
      <legend>${t("caps.whenToUse")}</legend>
      <p id="cap-triggers-hint" class="hint">${t("caps.whenToUseHint")}</p>
      <ul class="plain">
        ${form.whenToUse.map(
          (value, i) => html`<li class="row">
            <label class="inline" for=${`cap-trigger-${i}`}>${t("caps.trigger", { n: i + 1 })}</label>
            <input id=${`cap-trigger-${i}`} class="grow" value=${value} maxlength="40"
              ...${invalid(errors, `whenToUse.${i}`, `cap-trigger-${i}`)} onInput=${(e) => setTrigger(i, e.currentTarget.value)} />
            ${!readOnly &&
            html`<button type="button" class="quiet" disabled=${form.whenToUse.length === 1}
              aria-label=${t("caps.removeTrigger", { n: i + 1 })} onClick=${() => removeTrigger(i)}>${t("caps.remove")}</button>`}
            <${FieldError} id=${`cap-trigger-${i}-error`} messages=${errors[`whenToUse.${i}`]} />
          </li>`,
        )}
      </ul>
      <${FieldError} id="cap-triggers-error" messages=${errors.whenToUse} />
      ${!readOnly &&
      html`<button type="button" class="quiet" disabled=${form.whenToUse.length >= MAX_TRIGGERS} onClick=${addTrigger}>
        ${t("caps.addTrigger")}
      </button>`}
    </fieldset>

    <label for="cap-objective">${t("caps.objective")}</label>
    <textarea id="cap-objective" maxlength=${TEXT_MAX} value=${form.objective}
      ...${invalid(errors, "workflow.objective", "cap-objective", "cap-objective-count")}
      onInput=${(e) => set("objective")(e.currentTarget.value)}></textarea>
    <${Counter} id="cap-objective-count" value=${form.objective} />
    <${FieldError} id="cap-objective-error" messages=${errors["workflow.objective"]} />

    <h3 id="cap-steps-title">${t("caps.stepsTitle")}</h3>
    ${creating && html`<p class="hint">${t("caps.bindingsAfterCreate")}</p>`}
    <ol class="plain steps" aria-labelledby="cap-steps-title">
      ${form.steps.map(
        (step, i) => html`<${StepEditor} key=${step.key} step=${step} index=${i} count=${form.steps.length} skills=${skills}
          bindings=${bindings} errors=${errors} readOnly=${readOnly}
          onChange=${(s) => setStep(i, s)} onMove=${moveStep} onRemove=${removeStep} />`,
      )}
    </ol>
    <${FieldError} id="cap-steps-error" messages=${errors["workflow.steps"]} />
    ${!readOnly &&
    html`<button type="button" id="cap-add-step" class="quiet" disabled=${form.steps.length >= MAX_STEPS} onClick=${addStep}>
      ${t("caps.addStep")}
    </button>`}

    <label for="cap-completion">${t("caps.completion")}</label>
    <textarea id="cap-completion" maxlength=${TEXT_MAX} value=${form.completionCriteria}
      ...${invalid(errors, "workflow.completionCriteria", "cap-completion", "cap-completion-count")}
      onInput=${(e) => set("completionCriteria")(e.currentTarget.value)}></textarea>
    <${Counter} id="cap-completion-count" value=${form.completionCriteria} />
    <${FieldError} id="cap-completion-error" messages=${errors["workflow.completionCriteria"]} />
  </fieldset>`;

  return html`<form onSubmit=${submit} novalidate data-testid="capability-form">
    ${fieldset}
    ${!readOnly &&
    html`<div class="row actions">
      <button type="submit" disabled=${action.busy}>
        ${action.busy ? t("caps.saving") : creating ? t("caps.createSubmit") : t("caps.save")}
      </button>
    </div>`}
    <p class="hint" role="status" aria-live="polite" data-testid="form-notice">${notice}</p>
    ${hasFieldErrors && html`<p class="field-error">${t("caps.errorsBelow")}</p>`}
    ${action.error && action.error.code === "unsafe_text" && html`<p class="hint">${t("caps.filterNote")}</p>`}
    <${ErrorBox} error=${action.error} />
    ${conflict &&
    html`<div class="notice" data-testid="conflict">
      <p>${t("caps.conflict", { v: action.error.details.currentVersion })}</p>
      <button type="button" onClick=${reload}>${t("caps.reload")}</button>
    </div>`}
  </form>`;
}

// -- bindings ---------------------------------------------------------------------------------------

function parseSchema(text) {
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: t("caps.schemaNotObject") };
    return { value };
  } catch (error) {
    return { error: t("caps.schemaBadJson", { message: error.message }) };
  }
}

function BindingForm({ capability, binding, onDone, onCancel }) {
  const editing = Boolean(binding);
  const [name, setName] = useState(editing ? binding.name : "");
  const [hostProfile, setHostProfile] = useState(editing ? binding.hostProfile : "");
  const [mcpServerId, setMcpServerId] = useState(editing ? binding.mcpServerId : "");
  const [mcpToolName, setMcpToolName] = useState(editing ? binding.mcpToolName : "");
  const [confirmEach, setConfirmEach] = useState(editing ? binding.requiresUserConfirmation : true);
  const [schemaText, setSchemaText] = useState(editing ? JSON.stringify(binding.inputSchema, null, 2) : DEFAULT_SCHEMA);
  const [jsonError, setJsonError] = useState("");
  const action = useAction();
  const prefix = editing ? `binding-${binding.name}` : "binding-new";
  const errors = fieldErrors(action.error);
  const schemaErrors =
    action.error && action.error.code === "schema_not_allowed"
      ? action.error.details.errors.filter((e) => !e.binding || e.binding === name)
      : [];
  const schemaInvalid = Boolean(jsonError) || schemaErrors.length > 0 || Boolean(errors.inputSchema);

  useLayoutEffect(() => focusAfterRender(editing ? `${prefix}-host` : `${prefix}-name`), []);

  const submit = (event) => {
    event.preventDefault();
    const parsed = parseSchema(schemaText);
    setJsonError(parsed.error || "");
    if (parsed.error) {
      action.clear();
      return;
    }
    action.run(async () => {
      const body = {
        expectedVersion: capability.version,
        name,
        hostProfile,
        mcpServerId,
        mcpToolName,
        inputSchema: parsed.value,
        requiresUserConfirmation: confirmEach,
      };
      const base = `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}/tool-bindings`;
      const result = editing ? await put(`${base}/${encodeURIComponent(binding.name)}`, body) : await post(base, body);
      await onDone(result.binding, t("caps.bindingSaved", { name: result.binding.name }));
    });
  };

  const field = (key, label, value, setValue, extra = {}) => {
    const id = `${prefix}-${extra.id || key}`;
    return html`<div>
      <label for=${id}>${label}</label>
      <input id=${id} value=${value} autocomplete="off" spellcheck="false" disabled=${extra.disabled}
        ...${invalid(errors, key, id)} onInput=${(e) => setValue(e.currentTarget.value)} />
      <${FieldError} id=${`${id}-error`} messages=${errors[key]} />
    </div>`;
  };

  return html`<form class="card" onSubmit=${submit} novalidate aria-labelledby=${`${prefix}-title`}>
    <h4 id=${`${prefix}-title`}>${editing ? t("caps.bindingFormEdit", { name: binding.name }) : t("caps.bindingFormNew")}</h4>
    <div class="row">
      ${field("name", t("caps.bindingName"), name, setName, { disabled: editing })}
      ${field("hostProfile", t("caps.hostProfile"), hostProfile, setHostProfile, { id: "host" })}
      ${field("mcpServerId", t("caps.mcpServerId"), mcpServerId, setMcpServerId, { id: "server" })}
      ${field("mcpToolName", t("caps.mcpToolName"), mcpToolName, setMcpToolName, { id: "tool" })}
    </div>
    <label class="check">
      <input type="checkbox" checked=${confirmEach} onChange=${(e) => setConfirmEach(e.currentTarget.checked)} />
      ${t("caps.confirmEachRun")}
    </label>
    <label for=${`${prefix}-schema`}>${t("caps.inputSchema")}</label>
    <textarea id=${`${prefix}-schema`} class="code" rows="10" spellcheck="false" value=${schemaText}
      aria-invalid=${schemaInvalid ? "true" : undefined}
      aria-describedby=${[`${prefix}-schema-hint`, schemaInvalid && `${prefix}-schema-errors`].filter(Boolean).join(" ")}
      onInput=${(e) => setSchemaText(e.currentTarget.value)}></textarea>
    <p id=${`${prefix}-schema-hint`} class="hint">${t("caps.schemaHint")}</p>
    ${schemaInvalid &&
    html`<div id=${`${prefix}-schema-errors`} class="field-error" data-testid="schema-errors">
      ${jsonError && html`<p>${jsonError}</p>`}
      ${errors.inputSchema && html`<p>${errors.inputSchema.join(" ")}</p>`}
      ${schemaErrors.length > 0 &&
      html`<p>${t("caps.schemaErrors")}:</p>
        <ul>
          ${schemaErrors.map(
            (e) => html`<li data-testid="schema-error" data-path=${e.path}>
              <code>${e.path === "" ? t("caps.root") : e.path}</code> — ${schemaMessage(e.keyword)}
            </li>`,
          )}
        </ul>`}
    </div>`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${editing ? t("caps.saveBinding") : t("caps.addBindingSubmit")}</button>
      <button type="button" class="quiet" onClick=${onCancel}>${t("caps.cancel")}</button>
    </div>
    ${!schemaErrors.length && html`<${ErrorBox} error=${action.error} />`}
    ${schemaErrors.length > 0 && html`<p class="hint">${t("error.code")}: <code>schema_not_allowed</code></p>`}
  </form>`;
}

function BindingRow({ capability, binding, readOnly, blocked, onEdit, onRemoved }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const yes = useRef(null);
  useLayoutEffect(() => {
    if (confirming && yes.current) yes.current.focus();
  }, [confirming]);
  const remove = async () => {
    const done = await action.run(async () => {
      await del(
        `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}/tool-bindings/${encodeURIComponent(binding.name)}` +
          `?expectedVersion=${capability.version}`,
      );
      return true;
    });
    // Answered either way: the question closes, and the focus goes back to the button (or the list).
    setConfirming(false);
    if (done) await onRemoved(binding);
    else focusAfterRender(removeId);
  };
  const inUse = action.error && action.error.code === "binding_in_use";
  const removeId = `binding-${binding.name}-remove`;
  return html`<li class="binding" data-binding=${binding.name}>
    <div class="row">
      <span class="grow">
        <code>${binding.name}</code> · ${binding.hostProfile} · <code>${binding.mcpServerId}/${binding.mcpToolName}</code>
        ${binding.requiresUserConfirmation ? ` · ${t("caps.confirmYes")}` : ` · ${t("caps.confirmNo")}`}
      </span>
      ${!readOnly &&
      html`<button type="button" class="quiet" disabled=${blocked} aria-label=${t("caps.editBindingLabel", { name: binding.name })}
          onClick=${() => onEdit(binding)}>${t("caps.editBinding")}</button>
        <button type="button" class="danger" id=${removeId} disabled=${blocked || confirming || action.busy}
          aria-label=${t("caps.removeBindingLabel", { name: binding.name })} onClick=${() => (action.clear(), setConfirming(true))}>
          ${t("caps.removeBinding")}
        </button>`}
    </div>
    ${confirming &&
    html`<div class="confirm" role="alertdialog" aria-labelledby=${`${removeId}-q`}
      onKeyDown=${(e) => e.key === "Escape" && (setConfirming(false), focusAfterRender(removeId))}>
      <p id=${`${removeId}-q`}>${t("caps.confirmRemoveBinding", { name: binding.name })}</p>
      <div class="row">
        <button type="button" class="danger" ref=${yes} disabled=${action.busy} onClick=${remove}>${t("caps.confirmDeleteYes")}</button>
        <button type="button" class="quiet" onClick=${() => (setConfirming(false), focusAfterRender(removeId))}>${t("caps.confirmDeleteNo")}</button>
      </div>
    </div>`}
    ${inUse &&
    html`<p class="field-error" data-testid="binding-in-use">
      ${t("caps.bindingInUse", { steps: (action.error.details.steps || []).map((i) => i + 1).join(", ") })}
    </p>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

function Bindings({ capability, dirty, onChanged }) {
  const [editing, setEditing] = useState(null); // null | "new" | a binding
  const [notice, setNotice] = useState("");
  const readOnly = capability.status === "active";
  const count = capability.toolBindings.length;
  const done = async (binding, message) => {
    setEditing(null);
    await onChanged();
    setNotice(message);
  };
  return html`<section class="card" aria-labelledby="cap-bindings-title" data-testid="bindings">
    <div class="row">
      <h3 id="cap-bindings-title" class="grow">${t("caps.bindings")}</h3>
      <span class="meta" data-testid="binding-quota">${t("caps.bindingQuota", { n: count, max: MAX_BINDINGS })}</span>
    </div>
    <p class="hint">${t("caps.bindingsIntro")}</p>
    ${!readOnly && dirty && html`<p class="notice">${t("caps.bindingNeedsSave")}</p>`}
    ${count === 0
      ? html`<${Empty} text=${t("caps.bindingsEmpty")} />`
      : html`<ul class="plain">
          ${capability.toolBindings.map(
            (b) => html`<${BindingRow} key=${b.name} capability=${capability} binding=${b} readOnly=${readOnly}
              blocked=${dirty || editing !== null} onEdit=${setEditing}
              onRemoved=${(removed) => done(removed, t("caps.bindingRemoved", { name: removed.name }))} />`,
          )}
        </ul>`}
    <p class="hint" role="status" aria-live="polite" data-testid="binding-notice">${notice}</p>
    ${editing !== null &&
    html`<${BindingForm} key=${editing === "new" ? "new" : editing.name} capability=${capability}
      binding=${editing === "new" ? null : editing} onDone=${done} onCancel=${() => setEditing(null)} />`}
    ${!readOnly &&
    editing === null &&
    html`<button type="button" disabled=${dirty || count >= MAX_BINDINGS} onClick=${() => (setNotice(""), setEditing("new"))}>
      ${t("caps.addBinding")}
    </button>`}
  </section>`;
}

// -- the rendered protocol ----------------------------------------------------------------------------

// The protocol exactly as a host reads it. The Markdown holds the user's own texts, so it is shown as text in a
// <pre> (Preact sets text content), never parsed or inserted as HTML.
function ProtocolView({ capability, dirty }) {
  const hosts = [...new Set(capability.toolBindings.map((b) => b.hostProfile))];
  const [host, setHost] = useState(hosts[0] || "");
  const [shown, setShown] = useState(null);
  const action = useAction();
  const render = () =>
    action.run(async () => {
      const query = new URLSearchParams({ capabilityId: capability.capabilityId, preview: "true" });
      if (host) query.set("hostProfile", host);
      setShown(await get(`/capabilities/protocol?${query}`));
    });
  // A new version or another host makes the shown protocol stale: it goes, the button renders it again.
  useEffect(() => setShown(null), [capability.version, host]);
  return html`<section class="card" aria-labelledby="cap-protocol-title" data-testid="protocol">
    <h3 id="cap-protocol-title">${t("caps.protocol")}</h3>
    <p class="hint">${t("caps.protocolIntro")}</p>
    <div class="row toolbar">
      <div>
        <label for="cap-protocol-host">${t("caps.protocolHost")}</label>
        <select id="cap-protocol-host" value=${host} onChange=${(e) => setHost(e.currentTarget.value)}>
          <option value="">${t("caps.protocolNoHost")}</option>
          ${hosts.map((h) => html`<option value=${h}>${h}</option>`)}
        </select>
      </div>
      <button type="button" disabled=${action.busy} onClick=${render}>
        ${shown ? t("caps.protocolRefresh") : t("caps.protocolShow")}
      </button>
    </div>
    ${dirty && html`<p class="hint">${t("caps.protocolUnsaved")}</p>`}
    <${ErrorBox} error=${action.error} />
    ${shown &&
    html`<p class="meta" data-testid="protocol-version">${t("caps.protocolOf", { v: shown.version })}</p>
      ${shown.missingBindings.length > 0 &&
      html`<p class="notice" data-testid="protocol-missing">${t("caps.protocolMissing", { names: shown.missingBindings.join(", ") })}</p>`}
      <pre class="protocol" data-testid="protocol-markdown" tabindex="0" aria-labelledby="cap-protocol-title">${shown.markdown}</pre>`}
  </section>`;
}

// -- one capability open: the editor, its bindings, its status actions ------------------------------

function StatusTag({ status }) {
  return html`<span class="tag status status-${status}" data-status=${status}>${t(`caps.status.${status}`)}</span>`;
}

function CapabilityPanel({ capability, skills, onChange, onCreated, onDeleted, onClose }) {
  const [confirming, setConfirming] = useState(false);
  const [notice, setNotice] = useState("");
  const [dirty, setDirty] = useState(false);
  const action = useAction();
  const heading = useRef(null);
  const yes = useRef(null);
  const creating = !capability;
  const active = capability && capability.status === "active";
  const path = capability && `/user-capabilities/${encodeURIComponent(capability.userCapabilityId)}`;

  useLayoutEffect(() => heading.current && heading.current.focus(), [capability && capability.userCapabilityId]);
  useLayoutEffect(() => {
    if (confirming && yes.current) yes.current.focus();
  }, [confirming]);

  const reload = async () => {
    const fresh = await get(path);
    onChange(fresh);
    return fresh;
  };
  const setStatus = (verb) =>
    action.run(async () => {
      setNotice("");
      const updated = await post(`${path}/${verb}`, { expectedVersion: capability.version });
      onChange(updated);
      setNotice(t(verb === "activate" ? "caps.activated" : "caps.deactivated", { name: updated.displayName }));
      focusAfterRender(verb === "activate" ? "cap-deactivate" : "cap-activate");
    });
  const remove = () =>
    action.run(async () => {
      await del(path);
      onDeleted(capability);
    });

  const title = creating
    ? t("caps.createTitle")
    : t(active ? "caps.viewTitle" : "caps.editTitle", { name: capability.displayName });

  return html`<section class="card editor" aria-labelledby="cap-editor-title" data-testid="capability-editor">
    <div class="row">
      <h2 id="cap-editor-title" class="grow" tabindex="-1" ref=${heading}>${title}</h2>
      ${capability &&
      html`<${StatusTag} status=${capability.status} />
        <span class="meta" data-testid="editor-version">${t("caps.version", { v: capability.version })}</span>
        <code class="meta">${capability.capabilityId}</code>`}
      <button type="button" class="quiet" onClick=${onClose}>${t("caps.close")}</button>
    </div>
    ${active &&
    html`<div class="notice" data-testid="read-only">
      <p id="cap-read-only">${t("caps.readOnly")}</p>
    </div>`}
    ${capability &&
    html`<div class="row actions">
      ${active
        ? html`<button type="button" id="cap-deactivate" disabled=${action.busy} aria-describedby="cap-read-only"
            onClick=${() => setStatus("deactivate")}>${t("caps.deactivate")}</button>`
        : html`<button type="button" id="cap-activate" disabled=${action.busy}
            aria-describedby=${dirty ? "cap-unsaved" : undefined} onClick=${() => setStatus("activate")}>${t("caps.activate")}</button>`}
      ${!active && dirty && html`<span id="cap-unsaved" class="hint">${t("caps.unsaved")}</span>`}
      <button type="button" class="danger" id="cap-delete" disabled=${action.busy || confirming}
        aria-label=${t("caps.deleteLabel", { name: capability.displayName })} onClick=${() => setConfirming(true)}>
        ${t("caps.delete")}
      </button>
    </div>`}
    ${confirming &&
    html`<div class="confirm" role="alertdialog" aria-labelledby="cap-delete-q"
      onKeyDown=${(e) => e.key === "Escape" && (setConfirming(false), focusAfterRender("cap-delete"))}>
      <p id="cap-delete-q">${t("caps.confirmDelete", { name: capability.displayName })}</p>
      <div class="row">
        <button type="button" class="danger" ref=${yes} disabled=${action.busy} onClick=${remove}>${t("caps.confirmDeleteYes")}</button>
        <button type="button" class="quiet" onClick=${() => (setConfirming(false), focusAfterRender("cap-delete"))}>
          ${t("caps.confirmDeleteNo")}
        </button>
      </div>
    </div>`}
    <p class="hint" role="status" aria-live="polite" data-testid="status-notice">${notice}</p>
    <${ErrorBox} error=${action.error} />
    <${CapabilityForm} key=${capability ? capability.userCapabilityId : "new"} capability=${capability} skills=${skills}
      onDirty=${setDirty} onSaved=${onChange} onCreated=${onCreated} onReload=${reload} />
    ${capability && html`<${Bindings} capability=${capability} dirty=${dirty} onChanged=${reload} />`}
    ${capability && html`<${ProtocolView} capability=${capability} dirty=${dirty} />`}
  </section>`;
}

// -- creating by conversation ---------------------------------------------------------------------------

const emptyBinding = () => ({
  name: "",
  hostProfile: "",
  mcpServerId: "",
  mcpToolName: "",
  requiresUserConfirmation: true,
  schemaText: DEFAULT_SCHEMA,
});

// The binding a missing_binding gap asks for, as a small form inside the answer (same fields as a binding).
function GapBinding({ gap, index, value, onChange, errors, schemaErrors }) {
  const id = `gap-${index}-binding`;
  const key = `answers.${index}.binding`;
  const set = (field) => (e) => onChange({ ...value, [field]: e.currentTarget.value });
  const input = (field, label) => html`<div>
    <label for=${`${id}-${field}`}>${label}</label>
    <input id=${`${id}-${field}`} value=${value[field]} autocomplete="off" spellcheck="false"
      ...${invalid(errors, `${key}.${field}`, `${id}-${field}`)} onInput=${set(field)} />
    <${FieldError} id=${`${id}-${field}-error`} messages=${errors[`${key}.${field}`]} />
  </div>`;
  const schemaInvalid = schemaErrors.length > 0 || Boolean(value.jsonError);
  return html`<fieldset class="tools" aria-describedby=${`gap-${index}-question`}>
    <legend>${t("caps.gapBinding")}</legend>
    <div class="row">
      ${input("name", t("caps.bindingName"))} ${input("hostProfile", t("caps.hostProfile"))}
      ${input("mcpServerId", t("caps.mcpServerId"))} ${input("mcpToolName", t("caps.mcpToolName"))}
    </div>
    <label class="check">
      <input type="checkbox" checked=${value.requiresUserConfirmation}
        onChange=${(e) => onChange({ ...value, requiresUserConfirmation: e.currentTarget.checked })} />
      ${t("caps.confirmEachRun")}
    </label>
    <label for=${`${id}-schema`}>${t("caps.inputSchema")}</label>
    <textarea id=${`${id}-schema`} class="code" rows="6" spellcheck="false" value=${value.schemaText}
      aria-invalid=${schemaInvalid ? "true" : undefined} aria-describedby=${schemaInvalid ? `${id}-schema-errors` : undefined}
      onInput=${(e) => onChange({ ...value, schemaText: e.currentTarget.value, jsonError: "" })}></textarea>
    ${schemaInvalid &&
    html`<div id=${`${id}-schema-errors`} class="field-error" data-testid="schema-errors">
      ${value.jsonError && html`<p>${value.jsonError}</p>`}
      <ul>
        ${schemaErrors.map(
          (e) => html`<li data-testid="schema-error" data-path=${e.path}>
            <code>${e.path === "" ? t("caps.root") : e.path}</code> — ${schemaMessage(e.keyword)}
          </li>`,
        )}
      </ul>
    </div>`}
  </fieldset>`;
}

function ProposalView({ proposal, skills }) {
  if (!proposal) return html`<${Empty} text=${t("caps.noProposal")} />`;
  const skillName = (id) => (skills.find((s) => s.skillId === id) || { name: id }).name;
  return html`<section class="card" aria-labelledby="draft-proposal-title" data-testid="proposal">
    <h3 id="draft-proposal-title">${t("caps.proposal")}</h3>
    <dl class="facts">
      <dt>${t("caps.proposalName")}</dt><dd><code>${proposal.name}</code></dd>
      <dt>${t("caps.displayName")}</dt><dd>${proposal.displayName}</dd>
      <dt>${t("caps.whenToUse")}</dt><dd>${proposal.whenToUse.join(" · ")}</dd>
      <dt>${t("caps.objective")}</dt><dd class="prewrap">${proposal.workflow.objective}</dd>
      <dt>${t("caps.stepsTitle")}</dt>
      <dd>
        <ol data-testid="proposal-steps">
          ${proposal.workflow.steps.map(
            (step) => html`<li>
              ${step.kind === "localTool"
                ? html`<span class="tag">${t("caps.kind.localTool")}</span> <code>${step.toolName}</code> (${step.hostProfile})`
                : html`<span class="tag">${t("caps.kind.platformCapability")}</span> ${skillName(step.capabilityId)} <code>${step.capabilityId}</code>`}
              <span class="prewrap"> — ${step.instruction}</span>
            </li>`,
          )}
        </ol>
      </dd>
      <dt>${t("caps.completion")}</dt><dd class="prewrap">${proposal.workflow.completionCriteria}</dd>
      ${proposal.toolBindings.length > 0 &&
      html`<dt>${t("caps.proposalBindings")}</dt>
        <dd>
          ${proposal.toolBindings.map(
            (b) => html`<div><code>${b.name}</code> · ${b.hostProfile} · <code>${b.mcpServerId}/${b.mcpToolName}</code></div>`,
          )}
        </dd>`}
    </dl>
  </section>`;
}

function DraftFlow({ skills, onConfirmed, onClose }) {
  const [description, setDescription] = useState("");
  const [draft, setDraft] = useState(null);
  const [answers, setAnswers] = useState({}); // gapId -> {text} | {binding}
  const [info, setInfo] = useState("");
  const action = useAction();
  const heading = useRef(null);
  useLayoutEffect(() => heading.current && heading.current.focus(), []);

  const errors = fieldErrors(action.error);
  const schemaErrors = action.error && action.error.code === "schema_not_allowed" ? action.error.details.errors : [];
  const conflict = action.error && action.error.code === "draft_revision_conflict";
  const path = draft && `/user-capability-drafts/${encodeURIComponent(draft.draftId)}`;

  const took = (next) => {
    setDraft(next);
    setAnswers({});
    focusAfterRender(next.gaps.length > 0 ? "gap-0-answer" : "draft-confirm");
  };
  const start = (event) => {
    event.preventDefault();
    action.run(async () => took(await post("/user-capability-drafts", { description })));
  };
  const answersBody = () => {
    const out = [];
    let broken = false;
    draft.gaps.forEach((gap) => {
      const answer = answers[gap.gapId];
      if (!answer) return;
      if (gap.kind === "missing_binding") {
        const { schemaText, jsonError, ...binding } = answer;
        const parsed = parseSchema(schemaText);
        if (parsed.error) {
          broken = true;
          setAnswers((old) => ({ ...old, [gap.gapId]: { ...answer, jsonError: parsed.error } }));
          return;
        }
        out.push({ gapId: gap.gapId, binding: { ...binding, inputSchema: parsed.value } });
      } else if (answer.text && answer.text.trim()) {
        out.push({ gapId: gap.gapId, text: answer.text });
      }
    });
    return broken ? null : out;
  };
  const generate = (event) => {
    event.preventDefault();
    setInfo("");
    const body = answersBody();
    if (body === null) return;
    if (body.length === 0 && draft.gaps.length > 0) {
      setInfo(t("caps.answerFirst"));
      return;
    }
    action.run(async () => took(await post(`${path}/generate`, { answers: body })));
  };
  const regenerate = () => action.run(async () => took(await post(`${path}/generate`, { answers: [] })));
  const confirm = () =>
    action.run(async () => onConfirmed(await post(`${path}/confirm`, { revision: draft.revision })));

  // Errors of an answer carry its index in the body sent; the body holds the answered gaps in gap order.
  const answeredIndex = {};
  if (draft) {
    let n = 0;
    for (const gap of draft.gaps) if (answers[gap.gapId]) answeredIndex[gap.gapId] = n++;
  }

  return html`<section class="card editor" aria-labelledby="draft-title" data-testid="draft-flow">
    <div class="row">
      <h2 id="draft-title" class="grow" tabindex="-1" ref=${heading}>${t("caps.talkTitle")}</h2>
      <button type="button" class="quiet" onClick=${onClose}>${t("caps.close")}</button>
    </div>
    <p class="hint">${t("caps.talkIntro")}</p>
    ${!draft &&
    html`<form onSubmit=${start} novalidate>
      <label for="draft-description">${t("caps.describe")}</label>
      <textarea id="draft-description" rows="8" maxlength="2000" value=${description}
        ...${invalid(errors, "description", "draft-description", "draft-description-hint")}
        onInput=${(e) => setDescription(e.currentTarget.value)}></textarea>
      <p id="draft-description-hint" class="hint">${t("caps.describeHint")}</p>
      <${FieldError} id="draft-description-error" messages=${errors.description} />
      <div class="row actions">
        <button type="submit" disabled=${action.busy}>${action.busy ? t("caps.starting") : t("caps.start")}</button>
      </div>
    </form>`}
    ${draft &&
    html`<p class="meta" data-testid="draft-revision">
        ${t("caps.revision", { r: draft.revision, status: t(`caps.draft.${draft.status}`), at: formatTime(draft.expiresAt) })}
      </p>
      <${ProposalView} proposal=${draft.proposal} skills=${skills} />
      ${draft.gaps.length > 0
        ? html`<form onSubmit=${generate} novalidate aria-labelledby="draft-gaps-title" data-testid="gaps">
            <h3 id="draft-gaps-title">${t("caps.gaps")}</h3>
            <ol class="plain">
              ${draft.gaps.map((gap, i) => {
                const answer = answers[gap.gapId];
                const at = answeredIndex[gap.gapId];
                const gapErrors = at === undefined ? {} : errors;
                const setAnswer = (value) => setAnswers((old) => ({ ...old, [gap.gapId]: value }));
                return html`<li class="card" data-gap=${gap.gapId} data-kind=${gap.kind}>
                  <p id=${`gap-${i}-question`} class="prewrap"><strong>${i + 1}.</strong> ${gap.question}
                    <code class="meta">${gap.path}</code></p>
                  ${gap.kind === "missing_binding"
                    ? html`<${GapBinding} gap=${gap} index=${i} value=${answer || emptyBinding()} onChange=${setAnswer}
                        errors=${remapAnswerErrors(gapErrors, at, i)} schemaErrors=${answer ? schemaErrors.filter((e) => e.binding === answer.name) : []} />`
                    : html`<label for=${`gap-${i}-answer`}>${t("caps.answer")}</label>
                        <input id=${`gap-${i}-answer`} maxlength="500" value=${(answer && answer.text) || ""}
                          aria-describedby=${`gap-${i}-question`} onInput=${(e) => setAnswer({ text: e.currentTarget.value })} />
                        <${FieldError} id=${`gap-${i}-answer-error`} messages=${at === undefined ? null : errors[`answers.${at}.text`]} />`}
                </li>`;
              })}
            </ol>
            <div class="row actions">
              <button type="submit" disabled=${action.busy}>${action.busy ? t("caps.generating") : t("caps.generate")}</button>
            </div>
            <p class="hint" role="status" aria-live="polite">${info}</p>
          </form>`
        : html`<p class="hint">${t("caps.noGaps")}</p>`}
      ${draft.status === "open" &&
      draft.gaps.length === 0 &&
      draft.proposal &&
      html`<div class="row actions">
        <button type="button" id="draft-confirm" disabled=${action.busy} aria-describedby="draft-confirm-hint" onClick=${confirm}>
          ${action.busy ? t("caps.confirming") : t("caps.confirm")}
        </button>
        <span id="draft-confirm-hint" class="hint">${t("caps.confirmHint")}</span>
      </div>`}`}
    <${ErrorBox} error=${action.error} />
    ${conflict &&
    html`<div class="notice">
      <p>${t("caps.revisionConflict", { r: action.error.details.currentRevision })}</p>
      <button type="button" onClick=${regenerate}>${t("caps.regenerate")}</button>
    </div>`}
  </section>`;
}

// Errors at answers.<sent index>.binding.* shown at the form of gap <i>.
function remapAnswerErrors(errors, sentIndex, index) {
  if (sentIndex === undefined) return {};
  const out = {};
  const from = `answers.${sentIndex}.binding.`;
  for (const [key, messages] of Object.entries(errors)) {
    if (key.startsWith(from)) out[`answers.${index}.binding.${key.slice(from.length)}`] = messages;
  }
  return out;
}

// -- the section ------------------------------------------------------------------------------------

function CapabilityCard({ capability, open, onOpen }) {
  const headingId = `cap-${capability.userCapabilityId}`;
  return html`<li class="card" aria-labelledby=${headingId} data-capability=${capability.name}>
    <div class="row">
      <h3 id=${headingId} class="grow">${capability.displayName} <code class="meta">${capability.capabilityId}</code></h3>
      <${StatusTag} status=${capability.status} />
    </div>
    <p class="meta">
      <span data-testid="version">${t("caps.version", { v: capability.version })}</span>
      · ${t("caps.steps", { n: capability.workflow.steps.length })}
      · <span data-testid="binding-count">${t("caps.bindingQuota", { n: capability.toolBindings.length, max: MAX_BINDINGS })}</span>
      · ${t("caps.updated")} ${formatTime(capability.updatedAt)}
    </p>
    <button type="button" class="quiet" aria-pressed=${open ? "true" : "false"}
      aria-label=${t("caps.openLabel", { name: capability.displayName })} onClick=${() => onOpen(capability)}>
      ${t("caps.open")}
    </button>
  </li>`;
}

async function loadAll() {
  const [capabilities, skills] = await Promise.all([listAll("/user-capabilities"), listAll("/skills")]);
  return { capabilities, skills };
}

export default function Capabilities() {
  const state = useLoad(loadAll, []);
  const [openId, setOpenId] = useState(null); // null | "new" | a userCapabilityId
  const [notice, setNotice] = useState("");

  const replace = (capability) =>
    state.setData((data) => ({
      ...data,
      capabilities: data.capabilities.map((c) => (c.userCapabilityId === capability.userCapabilityId ? capability : c)),
    }));
  const created = (capability, message) => {
    state.setData((data) => ({ ...data, capabilities: [...data.capabilities, capability] }));
    setOpenId(capability.userCapabilityId);
    setNotice(message);
  };
  const deleted = (capability) => {
    state.setData((data) => ({
      ...data,
      capabilities: data.capabilities.filter((c) => c.userCapabilityId !== capability.userCapabilityId),
    }));
    setOpenId(null);
    setNotice(t("caps.deleted", { name: capability.displayName }));
    focusAfterRender("caps-title");
  };

  return html`<section aria-labelledby="caps-title">
    <div class="row">
      <h1 id="caps-title" class="grow" tabindex="-1">${t("caps.title")}</h1>
      ${state.data &&
      html`<span class="meta" data-testid="quota">${t("caps.quota", { n: state.data.capabilities.length, max: MAX_CAPABILITIES })}</span>
        <button type="button" disabled=${openId === "new" || state.data.capabilities.length >= MAX_CAPABILITIES}
          onClick=${() => (setNotice(""), setOpenId("new"))}>${t("caps.create")}</button>
        <button type="button" disabled=${openId === "talk" || state.data.capabilities.length >= MAX_CAPABILITIES}
          onClick=${() => (setNotice(""), setOpenId("talk"))}>${t("caps.talk")}</button>`}
    </div>
    <p class="hint">${t("caps.intro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="caps-notice">${notice}</p>
    <${Loaded} state=${state}>
      ${({ capabilities, skills }) => {
        const open = openId === "new" ? null : capabilities.find((c) => c.userCapabilityId === openId);
        return html`
          ${capabilities.length === 0
            ? html`<${Empty} text=${t("caps.empty")} />`
            : html`<ul class="plain" aria-labelledby="caps-title">
                ${capabilities.map(
                  (c) => html`<${CapabilityCard} key=${c.userCapabilityId} capability=${c} open=${c.userCapabilityId === openId}
                    onOpen=${(picked) => (setNotice(""), setOpenId(picked.userCapabilityId))} />`,
                )}
              </ul>`}
          ${openId === "talk" &&
          html`<${DraftFlow} skills=${skills} onClose=${() => setOpenId(null)}
            onConfirmed=${(capability) => created(capability, t("caps.created", { name: capability.displayName }))} />`}
          ${(openId === "new" || open) &&
          html`<${CapabilityPanel} key=${openId} capability=${open || null} skills=${skills} onChange=${replace}
            onCreated=${created} onDeleted=${deleted} onClose=${() => setOpenId(null)} />`}
        `;
      }}
    <//>
  </section>`;
}
