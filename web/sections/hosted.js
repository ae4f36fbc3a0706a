// Hosted workflows (托管工作流): remote MCP endpoints the user registers (for example a Dify workflow published
// as an MCP server). skillcore proxies every call, so the page shows what the server pinned: the host and a
// masked URL (never the URL, never the token), the status, and the snapshot's tools, each with an enable switch
// and a requires-approval switch (PATCH under expectedVersion; a conflict re-reads and says so). A refresh that
// finds a changed tool list shows the diff and waits for the owner to accept it. A try-it form is built from a
// tool's snapshot inputSchema; a call that needs consent links to its pending approval, which is decided here.
// `#/hosted?approval=<approvalId>` brings that approval into view and focuses it.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { del, get, listAll, patch, post } from "../lib/api.js";
import { html } from "../lib/html.js";
import { register, t } from "../lib/i18n.js";
import { browserZone, Empty, ErrorBox, focusAfterRender, formatTime, Loaded, newClientId, Switch, useAction, useLoad } from "../lib/ui.js";

const MAX_ENDPOINTS = 10;

register({
  zh: {
    "hosted.title": "托管工作流",
    "hosted.intro": "连接发布在其他平台上的工作流（例如以 MCP 服务器形式发布的 Dify 工作流）。每次调用都经过 skillcore：它检查地址、固定它看到的工具列表，并校验每一次调用。",
    "hosted.quota": "已登记 {n} / {max} 个端点",
    "hosted.register": "登记端点",
    "hosted.name": "名称（英文标识）",
    "hosted.nameHint": "小写字母开头，3–40 个字符，只用 a–z、0–9 和下划线。",
    "hosted.displayName": "显示名称",
    "hosted.url": "地址（URL）",
    "hosted.urlHint": "必须是 https、端口 443，不含用户信息、查询参数或片段，域名在运营方的允许列表中。地址和令牌加密保存，之后不再显示。",
    "hosted.token": "访问令牌（可选）",
    "hosted.tokenHint": "以 Bearer 方式发送给端点。保存后不会再显示。",
    "hosted.registerSubmit": "登记",
    "hosted.registering": "正在连接并读取工具列表…",
    "hosted.registered": "已登记“{name}”，读取到 {n} 个工具。",
    "hosted.errorsBelow": "请修改标出的字段。",
    "hosted.nameTaken": "你已经有一个同名的端点。",
    "hosted.quotaFull": "最多登记 {max} 个端点：先删除一个。",
    "hosted.reason.scheme_not_https": "地址必须以 https:// 开头。",
    "hosted.reason.port_not_443": "只允许端口 443。",
    "hosted.reason.userinfo": "地址不能包含用户名或密码。",
    "hosted.reason.query": "地址不能包含查询参数（?…）。",
    "hosted.reason.fragment": "地址不能包含片段（#…）。",
    "hosted.reason.domain_not_allowed": "这个域名不在运营方允许的域名列表中。",
    "hosted.reason.ip_literal": "不能直接使用 IP 地址，请使用域名。",
    "hosted.reason.idn_host": "域名必须是 ASCII 形式（国际化域名请使用 punycode）。",
    "hosted.reason.not_ascii": "地址只能包含 ASCII 字符。",
    "hosted.reason.invalid_characters": "地址包含不允许的字符。",
    "hosted.reason.too_long": "地址太长（最多 2048 个字符）。",
    "hosted.reason.malformed": "这不是一个有效的地址。",
    "hosted.reason.no_host": "地址缺少主机名。",
    "hosted.reason.host_syntax": "主机名的格式不正确。",
    "hosted.reason.not_a_string": "地址必须是文本。",
    "hosted.reason.unresolvable": "无法解析这个域名。",
    "hosted.reason.other_destination": "连接被引向了其他目的地，已拒绝。",
    "hosted.reason.address_loopback": "这个域名解析到本机回环地址，不允许连接。",
    "hosted.reason.address_private": "这个域名解析到内网地址，不允许连接。",
    "hosted.reason.address_link_local": "这个域名解析到链路本地地址，不允许连接。",
    "hosted.reason.address_metadata": "这个域名解析到云元数据地址，不允许连接。",
    "hosted.reason.address_shared": "这个域名解析到运营商共享地址（CGNAT），不允许连接。",
    "hosted.reason.address_multicast": "这个域名解析到组播地址，不允许连接。",
    "hosted.reason.address_reserved": "这个域名解析到保留地址，不允许连接。",
    "hosted.reason.address_unspecified": "这个域名解析到未指定地址，不允许连接。",
    "hosted.reason.address_documentation": "这个域名解析到文档示例地址，不允许连接。",
    "hosted.reason.address_benchmarking": "这个域名解析到测试专用地址，不允许连接。",
    "hosted.reason.address_not_global": "这个域名解析到非公网地址，不允许连接。",
    "hosted.reason.other": "地址不被允许（{reason}）。",
    "hosted.list": "已登记的端点",
    "hosted.empty": "还没有登记托管工作流。",
    "hosted.status.active": "已启用",
    "hosted.status.disabled": "已停用",
    "hosted.status.drift_pending": "工具列表有变化，待确认",
    "hosted.host": "主机",
    "hosted.urlMasked": "地址（已遮盖）",
    "hosted.version": "版本 {v}",
    "hosted.snapshotAt": "工具列表读取于",
    "hosted.fingerprint": "指纹",
    "hosted.enable": "启用端点",
    "hosted.disable": "停用端点",
    "hosted.enabledNow": "已启用“{name}”。",
    "hosted.disabledNow": "已停用“{name}”：它的工具都不能调用。",
    "hosted.refresh": "检查工具列表",
    "hosted.refreshing": "正在检查…",
    "hosted.unchanged": "工具列表没有变化。",
    "hosted.changed": "工具列表有变化：确认前，新增和改变的工具不能调用，其余照常可用。",
    "hosted.delete": "删除",
    "hosted.deleteLabel": "删除端点“{name}”",
    "hosted.confirmDelete": "确定删除端点“{name}”吗？它的地址和令牌会一起删除。",
    "hosted.confirmDeleteYes": "确认删除",
    "hosted.confirmDeleteNo": "保留",
    "hosted.deleted": "已删除“{name}”。",
    "hosted.tools": "工具",
    "hosted.noTools": "这个端点没有提供工具。",
    "hosted.toolName": "工具",
    "hosted.toolDescription": "说明",
    "hosted.toolEnabled": "启用",
    "hosted.toolApproval": "每次调用需要审批",
    "hosted.toolTry": "试用",
    "hosted.enableTool": "启用工具 {tool}（{endpoint}）",
    "hosted.approvalTool": "工具 {tool}（{endpoint}）每次调用需要审批",
    "hosted.tryLabel": "试用工具 {tool}",
    "hosted.drifted": "待确认",
    "hosted.removed": "将移除",
    "hosted.toolSaved": "已保存工具 {tool} 的设置。",
    "hosted.conflict": "这个端点已在别处被修改，已重新读取最新状态（版本 {v}），请再操作一次。",
    "hosted.diff": "工具列表的变化",
    "hosted.diffAdded": "新增",
    "hosted.diffRemoved": "移除",
    "hosted.diffChanged": "说明或输入变化",
    "hosted.diffNone": "无",
    "hosted.accept": "接受新的工具列表",
    "hosted.accepting": "正在接受…",
    "hosted.acceptHint": "接受后，新增的工具默认停用，需要时再单独启用。",
    "hosted.accepted": "已接受新的工具列表。",
    "hosted.noFingerprint": "缺少待确认列表的指纹：请先重新检查工具列表。",
    "hosted.tryTitle": "试用 {tool}",
    "hosted.tryIntro": "根据工具列表中的输入 Schema 生成的表单。调用会真正发送到端点。",
    "hosted.required": "（必填）",
    "hosted.requiredMark": "必填",
    "hosted.jsonField": "JSON",
    "hosted.jsonHint": "以 JSON 填写（对象或数组）。",
    "hosted.argumentsJson": "参数（JSON 对象）",
    "hosted.argumentsHint": "这个工具的输入没有可以逐项填写的字段，请直接填写 JSON 对象。",
    "hosted.badJson": "不是有效的 JSON：{message}",
    "hosted.notObject": "参数必须是一个 JSON 对象。",
    "hosted.notNumber": "请填写数字。",
    "hosted.notInteger": "请填写整数。",
    "hosted.missing": "这是必填项。",
    "hosted.choose": "（请选择）",
    "hosted.send": "发送调用",
    "hosted.sending": "正在调用…",
    "hosted.sendApproved": "使用已批准的审批重新发送",
    "hosted.close": "关闭",
    "hosted.result": "结果",
    "hosted.resultOk": "调用成功",
    "hosted.resultError": "工具返回了错误（isError）",
    "hosted.duration": "耗时 {ms} 毫秒",
    "hosted.callId": "调用 ID",
    "hosted.structured": "结构化结果",
    "hosted.needsApproval": "这次调用需要你的审批。",
    "hosted.goApproval": "查看待审批的请求",
    "hosted.needsGrant": "还没有授予“调用托管工作流”权限。",
    "hosted.grantLink": "前往执行权限授权",
    "hosted.approvals": "待审批",
    "hosted.approvalsIntro": "每次需要审批的调用都会在这里等待你的决定；审批只对这一组参数有效，只能使用一次，10 分钟后过期。",
    "hosted.approvalsEmpty": "没有待审批的调用。",
    "hosted.approvalsReload": "刷新待审批列表",
    "hosted.approvalTool2": "工具",
    "hosted.approvalEndpoint": "端点",
    "hosted.approvalArgs": "参数预览",
    "hosted.approvalExpires": "过期时间",
    "hosted.approvalAsked": "请求时间",
    "hosted.approve": "批准",
    "hosted.deny": "拒绝",
    "hosted.approveLabel": "批准调用 {tool}（{endpoint}）",
    "hosted.denyLabel": "拒绝调用 {tool}（{endpoint}）",
    "hosted.approvedNow": "已批准调用 {tool}：回到试用表单重新发送即可使用。",
    "hosted.deniedNow": "已拒绝调用 {tool}。",
    "hosted.notPending": "这个请求已经不是待审批状态（{status}），列表已刷新。",
    "hosted.approvalStatus.approved": "已批准",
    "hosted.approvalStatus.denied": "已拒绝",
    "hosted.approvalStatus.used": "已使用",
    "hosted.approvalStatus.expired": "已过期",
    "hosted.approvalStatus.pending": "待审批",
    "hosted.unknownEndpoint": "（已删除的端点）",
    "hosted.pendingCount": "{n} 个待审批",
  },
  en: {
    "hosted.title": "Hosted workflows",
    "hosted.intro": "Connect a workflow published on another platform (for example a Dify workflow exposed as an MCP server). Every call goes through skillcore: it checks the address, pins the tool list it saw, and validates every call.",
    "hosted.quota": "{n} / {max} endpoints registered",
    "hosted.register": "Register an endpoint",
    "hosted.name": "Name (identifier)",
    "hosted.nameHint": "Starts with a lowercase letter, 3–40 characters: a–z, 0–9 and underscore.",
    "hosted.displayName": "Display name",
    "hosted.url": "URL",
    "hosted.urlHint": "https on port 443, with no user info, query or fragment, on a domain the operator allows. The URL and the token are stored encrypted and never shown again.",
    "hosted.token": "Access token (optional)",
    "hosted.tokenHint": "Sent to the endpoint as a bearer token. It is never shown again once saved.",
    "hosted.registerSubmit": "Register",
    "hosted.registering": "Connecting and listing the tools…",
    "hosted.registered": "Registered “{name}” with {n} tools.",
    "hosted.errorsBelow": "Please correct the marked fields.",
    "hosted.nameTaken": "You already have an endpoint with this name.",
    "hosted.quotaFull": "At most {max} endpoints: delete one first.",
    "hosted.reason.scheme_not_https": "The URL must start with https://.",
    "hosted.reason.port_not_443": "Only port 443 is allowed.",
    "hosted.reason.userinfo": "The URL must not carry a user name or password.",
    "hosted.reason.query": "The URL must not have a query (?…).",
    "hosted.reason.fragment": "The URL must not have a fragment (#…).",
    "hosted.reason.domain_not_allowed": "This domain is not on the operator's list of allowed domains.",
    "hosted.reason.ip_literal": "An IP address cannot be used; use a domain name.",
    "hosted.reason.idn_host": "The host must be in ASCII form (punycode for an internationalised name).",
    "hosted.reason.not_ascii": "The URL may only contain ASCII characters.",
    "hosted.reason.invalid_characters": "The URL contains characters that are not allowed.",
    "hosted.reason.too_long": "The URL is too long (at most 2048 characters).",
    "hosted.reason.malformed": "This is not a valid URL.",
    "hosted.reason.no_host": "The URL has no host.",
    "hosted.reason.host_syntax": "The host name is not well formed.",
    "hosted.reason.not_a_string": "The URL must be text.",
    "hosted.reason.unresolvable": "The domain name could not be resolved.",
    "hosted.reason.other_destination": "The connection was led to another destination and refused.",
    "hosted.reason.address_loopback": "The domain resolves to a loopback address, which is never connected to.",
    "hosted.reason.address_private": "The domain resolves to a private network address, which is never connected to.",
    "hosted.reason.address_link_local": "The domain resolves to a link-local address, which is never connected to.",
    "hosted.reason.address_metadata": "The domain resolves to a cloud metadata address, which is never connected to.",
    "hosted.reason.address_shared": "The domain resolves to a shared (CGNAT) address, which is never connected to.",
    "hosted.reason.address_multicast": "The domain resolves to a multicast address, which is never connected to.",
    "hosted.reason.address_reserved": "The domain resolves to a reserved address, which is never connected to.",
    "hosted.reason.address_unspecified": "The domain resolves to an unspecified address, which is never connected to.",
    "hosted.reason.address_documentation": "The domain resolves to a documentation address, which is never connected to.",
    "hosted.reason.address_benchmarking": "The domain resolves to a benchmarking address, which is never connected to.",
    "hosted.reason.address_not_global": "The domain resolves to an address that is not public, which is never connected to.",
    "hosted.reason.other": "The URL is not allowed ({reason}).",
    "hosted.list": "Registered endpoints",
    "hosted.empty": "No hosted workflow registered yet.",
    "hosted.status.active": "Active",
    "hosted.status.disabled": "Disabled",
    "hosted.status.drift_pending": "Tool list changed, waiting for you",
    "hosted.host": "Host",
    "hosted.urlMasked": "URL (masked)",
    "hosted.version": "Version {v}",
    "hosted.snapshotAt": "Tool list taken",
    "hosted.fingerprint": "Fingerprint",
    "hosted.enable": "Enable the endpoint",
    "hosted.disable": "Disable the endpoint",
    "hosted.enabledNow": "Enabled “{name}”.",
    "hosted.disabledNow": "Disabled “{name}”: none of its tools can be called.",
    "hosted.refresh": "Check the tool list",
    "hosted.refreshing": "Checking…",
    "hosted.unchanged": "The tool list has not changed.",
    "hosted.changed": "The tool list has changed: until you accept it, added and changed tools are refused; the others keep working.",
    "hosted.delete": "Delete",
    "hosted.deleteLabel": "Delete the endpoint “{name}”",
    "hosted.confirmDelete": "Delete the endpoint “{name}”? Its URL and token are deleted with it.",
    "hosted.confirmDeleteYes": "Delete",
    "hosted.confirmDeleteNo": "Keep",
    "hosted.deleted": "Deleted “{name}”.",
    "hosted.tools": "Tools",
    "hosted.noTools": "This endpoint offers no tools.",
    "hosted.toolName": "Tool",
    "hosted.toolDescription": "Description",
    "hosted.toolEnabled": "Enabled",
    "hosted.toolApproval": "Each call needs approval",
    "hosted.toolTry": "Try it",
    "hosted.enableTool": "Enable the tool {tool} ({endpoint})",
    "hosted.approvalTool": "The tool {tool} ({endpoint}) needs approval for each call",
    "hosted.tryLabel": "Try the tool {tool}",
    "hosted.drifted": "waiting",
    "hosted.removed": "to be removed",
    "hosted.toolSaved": "Saved the settings of {tool}.",
    "hosted.conflict": "This endpoint was changed elsewhere; its latest state (version {v}) has been read again. Please try once more.",
    "hosted.diff": "Changes in the tool list",
    "hosted.diffAdded": "Added",
    "hosted.diffRemoved": "Removed",
    "hosted.diffChanged": "Description or input changed",
    "hosted.diffNone": "none",
    "hosted.accept": "Accept the new tool list",
    "hosted.accepting": "Accepting…",
    "hosted.acceptHint": "Once accepted, added tools start disabled; enable them when you need them.",
    "hosted.accepted": "Accepted the new tool list.",
    "hosted.noFingerprint": "The pending list's fingerprint is missing: check the tool list again first.",
    "hosted.tryTitle": "Try {tool}",
    "hosted.tryIntro": "A form built from the tool's input schema in the pinned tool list. The call really goes to the endpoint.",
    "hosted.required": "(required)",
    "hosted.requiredMark": "required",
    "hosted.jsonField": "JSON",
    "hosted.jsonHint": "Write it as JSON (an object or an array).",
    "hosted.argumentsJson": "Arguments (a JSON object)",
    "hosted.argumentsHint": "This tool's input has no fields to fill one by one: write the JSON object itself.",
    "hosted.badJson": "Not valid JSON: {message}",
    "hosted.notObject": "The arguments must be a JSON object.",
    "hosted.notNumber": "Enter a number.",
    "hosted.notInteger": "Enter a whole number.",
    "hosted.missing": "This is required.",
    "hosted.choose": "(choose)",
    "hosted.send": "Send the call",
    "hosted.sending": "Calling…",
    "hosted.sendApproved": "Send again with the approval",
    "hosted.close": "Close",
    "hosted.result": "Result",
    "hosted.resultOk": "The call succeeded",
    "hosted.resultError": "The tool answered with an error (isError)",
    "hosted.duration": "{ms} ms",
    "hosted.callId": "Call id",
    "hosted.structured": "Structured result",
    "hosted.needsApproval": "This call needs your approval.",
    "hosted.goApproval": "See the pending approval",
    "hosted.needsGrant": "The permission to call hosted workflows is not granted yet.",
    "hosted.grantLink": "Grant it under Permissions",
    "hosted.approvals": "Pending approvals",
    "hosted.approvalsIntro": "Every call that needs approval waits here for your decision. An approval holds for these exact arguments, once, and expires after 10 minutes.",
    "hosted.approvalsEmpty": "No call is waiting for approval.",
    "hosted.approvalsReload": "Reload the pending approvals",
    "hosted.approvalTool2": "Tool",
    "hosted.approvalEndpoint": "Endpoint",
    "hosted.approvalArgs": "Arguments preview",
    "hosted.approvalExpires": "Expires",
    "hosted.approvalAsked": "Asked",
    "hosted.approve": "Approve",
    "hosted.deny": "Deny",
    "hosted.approveLabel": "Approve the call of {tool} ({endpoint})",
    "hosted.denyLabel": "Deny the call of {tool} ({endpoint})",
    "hosted.approvedNow": "Approved the call of {tool}: send it again from the try-it form to use it.",
    "hosted.deniedNow": "Denied the call of {tool}.",
    "hosted.notPending": "This request is no longer pending ({status}); the list has been reloaded.",
    "hosted.approvalStatus.approved": "approved",
    "hosted.approvalStatus.denied": "denied",
    "hosted.approvalStatus.used": "used",
    "hosted.approvalStatus.expired": "expired",
    "hosted.approvalStatus.pending": "pending",
    "hosted.unknownEndpoint": "(a deleted endpoint)",
    "hosted.pendingCount": "{n} pending",
  },
});

const endpointPath = (endpoint) => `/hosted-endpoints/${encodeURIComponent(endpoint.endpointId)}`;

function domId(...parts) {
  return parts.join("-").replace(/[^A-Za-z0-9_-]/g, "_");
}


function reasonText(reason) {
  const key = `hosted.reason.${reason}`;
  const text = t(key);
  return text === key ? t("hosted.reason.other", { reason }) : text;
}

// "/url", "url", "body.url", "arguments/a" -> the first segment a field is named by.
function fieldOf(path) {
  const parts = String(path ?? "").replace(/^\//, "").split(/[./]/).filter((p) => p && p !== "body");
  return parts[0] || "";
}

function FieldError({ id, messages }) {
  if (!messages || messages.length === 0) return null;
  return html`<p id=${id} class="field-error" data-testid="field-error">${messages.join(" ")}</p>`;
}

function invalidProps(messages, id, hint) {
  const has = Boolean(messages && messages.length);
  return {
    "aria-invalid": has ? "true" : undefined,
    "aria-describedby": [hint, has && `${id}-error`].filter(Boolean).join(" ") || undefined,
  };
}

// -- registering ------------------------------------------------------------------------------------

// {field: [message]} for the registration form; what no field owns stays in the error box.
function registerErrors(error) {
  const byField = {};
  if (!error) return byField;
  const add = (field, message) => (byField[field] = byField[field] || []).push(message);
  if (error.code === "url_not_allowed") add("url", reasonText(error.details.reason));
  else if (error.code === "endpoint_name_taken") add("name", t("hosted.nameTaken"));
  else if (error.code === "validation_error" && Array.isArray(error.details.errors)) {
    for (const item of error.details.errors) {
      const field = fieldOf(item.path);
      add(["name", "displayName", "url", "authToken"].includes(field) ? field : "", item.message || error.message);
    }
  }
  return byField;
}

function RegisterForm({ count, onRegistered }) {
  const [form, setForm] = useState({ name: "", displayName: "", url: "", authToken: "" });
  const [notice, setNotice] = useState("");
  const action = useAction();
  const errors = registerErrors(action.error);
  const fieldsOwn = Object.keys(errors).some((k) => k !== "");
  const full = count >= MAX_ENDPOINTS;
  const set = (key) => (e) => setForm({ ...form, [key]: e.currentTarget.value });

  const submit = (e) => {
    e.preventDefault();
    setNotice("");
    action.run(async () => {
      const body = { name: form.name, displayName: form.displayName, url: form.url };
      if (form.authToken) body.authToken = form.authToken;
      const created = await post("/hosted-endpoints", body);
      // The token leaves the page's memory as soon as the server has it; the URL too.
      setForm({ name: "", displayName: "", url: "", authToken: "" });
      setNotice(t("hosted.registered", { name: created.displayName, n: created.snapshot.tools.length }));
      onRegistered(created);
    });
  };
  useLayoutEffect(() => {
    // A refusal moves the focus to the first field it names, where its reason is read.
    const first = ["name", "displayName", "url", "authToken"].find((k) => errors[k]);
    if (first) focusAfterRender(`hosted-${first}`);
  }, [action.error]);

  const field = (key, input) => html`${input}
    <${FieldError} id=${`hosted-${key}-error`} messages=${errors[key]} />`;

  const otherError = action.error && !fieldsOwn ? action.error : null;
  const quotaError = action.error && action.error.code === "quota_exceeded";

  return html`<form class="card" onSubmit=${submit} novalidate aria-labelledby="hosted-register-title" data-testid="register-form">
    <h2 id="hosted-register-title">${t("hosted.register")}</h2>
    <p class="hint" data-testid="quota">${t("hosted.quota", { n: count, max: MAX_ENDPOINTS })}</p>
    <label for="hosted-name">${t("hosted.name")}</label>
    ${field("name", html`<input id="hosted-name" value=${form.name} onInput=${set("name")} required autocomplete="off"
      spellcheck=${false} maxlength="40" ...${invalidProps(errors.name, "hosted-name", "hosted-name-hint")} />`)}
    <p class="hint" id="hosted-name-hint">${t("hosted.nameHint")}</p>
    <label for="hosted-displayName">${t("hosted.displayName")}</label>
    ${field("displayName", html`<input id="hosted-displayName" value=${form.displayName} onInput=${set("displayName")}
      required maxlength="60" ...${invalidProps(errors.displayName, "hosted-displayName")} />`)}
    <label for="hosted-url">${t("hosted.url")}</label>
    ${field("url", html`<input id="hosted-url" type="url" value=${form.url} onInput=${set("url")} required autocomplete="off"
      spellcheck=${false} maxlength="2048" placeholder="https://" size="60"
      ...${invalidProps(errors.url, "hosted-url", "hosted-url-hint")} />`)}
    <p class="hint" id="hosted-url-hint">${t("hosted.urlHint")}</p>
    <label for="hosted-authToken">${t("hosted.token")}</label>
    ${field("authToken", html`<input id="hosted-authToken" type="password" value=${form.authToken} onInput=${set("authToken")}
      autocomplete="new-password" maxlength="4096" ...${invalidProps(errors.authToken, "hosted-authToken", "hosted-token-hint")} />`)}
    <p class="hint" id="hosted-token-hint">${t("hosted.tokenHint")}</p>
    ${fieldsOwn && html`<p class="field-error">${t("hosted.errorsBelow")}</p>`}
    ${errors[""] && html`<${FieldError} id="hosted-form-error" messages=${errors[""]} />`}
    ${quotaError && html`<p class="notice">${t("hosted.quotaFull", { max: MAX_ENDPOINTS })}</p>`}
    <${ErrorBox} error=${otherError} />
    <div class="row actions">
      <button type="submit" disabled=${action.busy || full} aria-describedby=${full ? "hosted-full" : undefined}>
        ${action.busy ? t("hosted.registering") : t("hosted.registerSubmit")}
      </button>
      ${full && html`<span class="hint" id="hosted-full">${t("hosted.quotaFull", { max: MAX_ENDPOINTS })}</span>`}
    </div>
    <p class="hint" role="status" aria-live="polite" data-testid="register-notice">${notice}</p>
  </form>`;
}

// -- the try-it form --------------------------------------------------------------------------------

function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== "null") : schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  if (["string", "number", "integer", "boolean"].includes(type)) return type;
  return "json";
}

// The fields of an object schema, or null when the whole arguments are edited as JSON.
function fieldsOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  const properties = schema.properties;
  if (!properties || typeof properties !== "object" || Object.keys(properties).length === 0) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties).map(([name, prop]) => ({
    name,
    schema: prop && typeof prop === "object" ? prop : {},
    kind: typeOf(prop && typeof prop === "object" ? prop : {}),
    required: required.has(name),
  }));
}

function initialValue(field) {
  if (field.kind === "boolean") return field.schema.default === true;
  if (field.schema.default !== undefined) {
    return field.kind === "json" ? JSON.stringify(field.schema.default, null, 2) : String(field.schema.default);
  }
  return "";
}

// {arguments} or {errors: {field: message}} from the form's values.
function argumentsOf(fields, values, raw) {
  if (!fields) {
    try {
      const parsed = JSON.parse(raw || "{}");
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { errors: { "": t("hosted.notObject") } };
      return { arguments: parsed };
    } catch (failure) {
      return { errors: { "": t("hosted.badJson", { message: failure.message }) } };
    }
  }
  const out = {};
  const errors = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === "boolean") {
      out[field.name] = Boolean(value);
      continue;
    }
    if (value === "" || value === undefined) {
      if (field.required) errors[field.name] = t("hosted.missing");
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") {
      const number = Number(value);
      if (!Number.isFinite(number)) errors[field.name] = t("hosted.notNumber");
      else if (field.kind === "integer" && !Number.isInteger(number)) errors[field.name] = t("hosted.notInteger");
      else out[field.name] = number;
    } else if (field.kind === "enum") {
      const match = field.schema.enum.find((option) => String(option) === value);
      out[field.name] = match === undefined ? value : match;
    } else if (field.kind === "json") {
      try {
        out[field.name] = JSON.parse(value);
      } catch (failure) {
        errors[field.name] = t("hosted.badJson", { message: failure.message });
      }
    } else {
      out[field.name] = value;
    }
  }
  return Object.keys(errors).length ? { errors } : { arguments: out };
}

function ArgumentField({ field, value, onValue, error, prefix }) {
  const id = `${prefix}-arg-${domId(field.name)}`;
  const description = field.schema.description || field.schema.title;
  const hint = description || field.kind === "json" ? `${id}-hint` : undefined;
  const props = invalidProps(error ? [error] : null, id, hint);
  const label = html`${field.name}${field.required && html` <span class="required" aria-hidden="true">*</span><span class="visually-hidden">${t("hosted.required")}</span>`}`;
  let input;
  if (field.kind === "boolean") {
    return html`<label class="check" for=${id}>
        <input type="checkbox" id=${id} checked=${value} onChange=${(e) => onValue(e.currentTarget.checked)} ...${props} />
        ${label}
      </label>
      ${hint && html`<p class="hint" id=${hint}>${description}</p>`}
      <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
  }
  if (field.kind === "enum") {
    input = html`<select id=${id} value=${value} onChange=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props}>
      <option value="">${t("hosted.choose")}</option>
      ${field.schema.enum.map((option) => html`<option value=${String(option)}>${String(option)}</option>`)}
    </select>`;
  } else if (field.kind === "json") {
    input = html`<textarea id=${id} class="code" value=${value} onInput=${(e) => onValue(e.currentTarget.value)} spellcheck=${false}
      aria-required=${field.required ? "true" : undefined} ...${props}></textarea>`;
  } else {
    const numeric = field.kind === "number" || field.kind === "integer";
    input = html`<input id=${id} type=${numeric ? "number" : "text"} step=${field.kind === "integer" ? "1" : numeric ? "any" : undefined}
      inputmode=${field.kind === "integer" ? "numeric" : numeric ? "decimal" : undefined} value=${value}
      onInput=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props} />`;
  }
  return html`<label for=${id}>${label}${field.kind === "json" && html` <span class="meta">(${t("hosted.jsonField")})</span>`}</label>
    ${input}
    ${hint && html`<p class="hint" id=${hint}>${[description, field.kind === "json" && t("hosted.jsonHint")].filter(Boolean).join(" ")}</p>`}
    <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
}

function CallResult({ result }) {
  return html`<div class=${`card call-result${result.isError ? " is-error" : ""}`} data-testid="call-result"
    data-is-error=${result.isError ? "true" : "false"}>
    <h4>${t("hosted.result")}</h4>
    <p class=${`status ${result.isError ? "status-failed" : "status-succeeded"}`} data-testid="call-status">
      ${result.isError ? t("hosted.resultError") : t("hosted.resultOk")}
    </p>
    <p class="meta"><span data-testid="call-duration">${t("hosted.duration", { ms: result.durationMs })}</span>
      ${" · "}${t("hosted.callId")}: <code>${result.callId}</code></p>
    <pre class="protocol" data-testid="call-content" tabindex="0">${result.content}</pre>
    ${result.structuredContent !== undefined && result.structuredContent !== null &&
    html`<details><summary>${t("hosted.structured")}</summary>
      <pre class="protocol" data-testid="call-structured">${JSON.stringify(result.structuredContent, null, 2)}</pre></details>`}
  </div>`;
}

function TryIt({ endpoint, tool, onClose, onApprovalAsked }) {
  const prefix = domId("try", endpoint.endpointId, tool.name);
  const fields = fieldsOf(tool.inputSchema);
  const [values, setValues] = useState(() =>
    Object.fromEntries((fields || []).map((field) => [field.name, initialValue(field)])),
  );
  const [raw, setRaw] = useState("{}");
  const [localErrors, setLocalErrors] = useState({});
  const [result, setResult] = useState(null);
  const [approvalId, setApprovalId] = useState(null);
  const action = useAction();
  const heading = useRef(null);
  useLayoutEffect(() => heading.current && heading.current.focus(), []);

  const serverErrors = {};
  if (action.error && action.error.code === "validation_error" && Array.isArray(action.error.details.errors)) {
    for (const item of action.error.details.errors) {
      const path = String(item.path ?? "").replace(/^\/?(arguments[./])?/, "");
      const name = fields && fields.some((f) => f.name === fieldOf(path)) ? fieldOf(path) : "";
      serverErrors[name] = [serverErrors[name], item.message || `${item.keyword || ""} ${path}`.trim()].filter(Boolean).join(" ");
    }
  }
  const errors = { ...serverErrors, ...localErrors };
  const needsApproval = action.error && action.error.code === "approval_required";
  const needsGrant = action.error && action.error.code === "permission_required";

  const send = (withApproval) => {
    const built = argumentsOf(fields, values, raw);
    setLocalErrors(built.errors || {});
    if (built.errors) {
      const first = Object.keys(built.errors)[0];
      focusAfterRender(first ? `${prefix}-arg-${domId(first)}` : `${prefix}-raw`);
      return;
    }
    setResult(null);
    action.run(async () => {
      const body = { toolName: tool.name, arguments: built.arguments, clientCallId: newClientId() };
      if (withApproval && approvalId) body.approvalId = approvalId;
      const answer = await post(`${endpointPath(endpoint)}/calls`, body);
      setResult(answer);
      setApprovalId(null);
    });
  };
  useEffect(() => {
    if (needsApproval && action.error.details.approvalId) {
      setApprovalId(action.error.details.approvalId);
      onApprovalAsked(action.error.details.approvalId);
    }
  }, [action.error]);

  const submit = (e) => {
    e.preventDefault();
    send(false);
  };

  return html`<form class="card try-it" onSubmit=${submit} novalidate aria-labelledby=${`${prefix}-title`} data-testid="try-it"
    data-tool=${tool.name}>
    <div class="row">
      <h4 id=${`${prefix}-title`} class="grow" tabindex="-1" ref=${heading}>${t("hosted.tryTitle", { tool: tool.name })}</h4>
      <button type="button" class="quiet" onClick=${onClose}>${t("hosted.close")}</button>
    </div>
    <p class="hint">${t("hosted.tryIntro")}</p>
    ${fields
      ? fields.map(
          (field) => html`<${ArgumentField} key=${field.name} field=${field} prefix=${prefix} value=${values[field.name]}
            error=${errors[field.name]} onValue=${(v) => setValues((old) => ({ ...old, [field.name]: v }))} />`,
        )
      : html`<label for=${`${prefix}-raw`}>${t("hosted.argumentsJson")}</label>
          <textarea id=${`${prefix}-raw`} class="code" value=${raw} onInput=${(e) => setRaw(e.currentTarget.value)} spellcheck=${false}
            ...${invalidProps(errors[""] ? [errors[""]] : null, `${prefix}-raw`, `${prefix}-raw-hint`)}></textarea>
          <p class="hint" id=${`${prefix}-raw-hint`}>${t("hosted.argumentsHint")}</p>`}
    ${fields && errors[""] ? html`<${FieldError} id=${`${prefix}-form-error`} messages=${[errors[""]]} />` : null}
    ${!fields && html`<${FieldError} id=${`${prefix}-raw-error`} messages=${errors[""] ? [errors[""]] : null} />`}
    ${needsApproval &&
    html`<div class="notice" data-testid="approval-required">
      <p>${t("hosted.needsApproval")}
        ${action.error.details.approvalId &&
        html` <a href=${`#/hosted?approval=${encodeURIComponent(action.error.details.approvalId)}`} data-testid="approval-link">${t("hosted.goApproval")}</a>`}</p>
    </div>`}
    ${needsGrant &&
    html`<p class="notice" data-testid="grant-required">${t("hosted.needsGrant")}
      <a href="#/permissions?skill=hosted-workflows&permission=hosted_workflow%3Ainvoke">${t("hosted.grantLink")}</a></p>`}
    <${ErrorBox} error=${action.error && !needsApproval && action.error.code !== "validation_error" ? action.error : null} />
    ${action.error && action.error.code === "validation_error" && !Object.keys(serverErrors).length &&
    html`<${ErrorBox} error=${action.error} />`}
    <div class="row actions">
      <button type="submit" disabled=${action.busy}>${action.busy ? t("hosted.sending") : t("hosted.send")}</button>
      ${approvalId &&
      html`<button type="button" class="quiet" disabled=${action.busy} data-testid="send-approved" onClick=${() => send(true)}>
        ${t("hosted.sendApproved")}</button>`}
    </div>
    <div role="status" aria-live="polite">${result && html`<${CallResult} result=${result} />`}</div>
  </form>`;
}

// -- one endpoint -----------------------------------------------------------------------------------

function DiffList({ label, names, kind }) {
  return html`<dt>${label}</dt>
    <dd data-testid=${`diff-${kind}`}>${names && names.length ? names.map((n, i) => html`${i ? ", " : ""}<code>${n}</code>`) : t("hosted.diffNone")}</dd>`;
}

// The fingerprint of the pending tool list, wherever the answer carries it.
function pendingFingerprint(endpoint, refreshed) {
  const diff = (refreshed && refreshed.diff) || {};
  const pending = endpoint.pendingDiff || {};
  return (
    diff.fingerprint ||
    (refreshed && refreshed.fingerprint) ||
    pending.fingerprint ||
    endpoint.pendingFingerprint ||
    (endpoint.pendingSnapshot && endpoint.pendingSnapshot.fingerprint) ||
    null
  );
}

function ToolRow({ endpoint, tool, drifted, removed, busyTool, onChange, onTry, trying }) {
  const rowId = domId("tool", endpoint.endpointId, tool.name);
  return html`<tr data-tool-row=${tool.name} id=${rowId}>
    <th scope="row"><code>${tool.name}</code>${drifted && html` <span class="tag status-retrying" data-testid="tool-drifted">${t("hosted.drifted")}</span>`}${removed &&
      html` <span class="tag status-failed" data-testid="tool-removed">${t("hosted.removed")}</span>`}</th>
    <td class="prewrap" id=${`${rowId}-desc`}>${tool.description}</td>
    <td>
      <${Switch} id=${`${rowId}-enabled`} checked=${tool.enabled} data-switch="enabled" data-tool=${tool.name}
        label=${t("hosted.enableTool", { tool: tool.name, endpoint: endpoint.displayName })}
        disabled=${busyTool !== null} aria-busy=${busyTool === `${tool.name}:enabled` ? "true" : undefined}
        onChange=${(next) => onChange(tool, { enabled: next }, "enabled")} />
    </td>
    <td>
      <${Switch} id=${`${rowId}-approval`} checked=${tool.requiresApproval} data-switch="requiresApproval" data-tool=${tool.name}
        label=${t("hosted.approvalTool", { tool: tool.name, endpoint: endpoint.displayName })}
        disabled=${busyTool !== null} aria-busy=${busyTool === `${tool.name}:requiresApproval` ? "true" : undefined}
        onChange=${(next) => onChange(tool, { requiresApproval: next }, "requiresApproval")} />
    </td>
    <td>
      <button type="button" class="quiet" id=${`${rowId}-try`} aria-expanded=${trying ? "true" : "false"}
        aria-label=${t("hosted.tryLabel", { tool: tool.name })} onClick=${() => onTry(tool)}>${t("hosted.toolTry")}</button>
    </td>
  </tr>`;
}

function EndpointCard({ endpoint, zone, onReplace, onDeleted, onApprovalAsked }) {
  const [busyTool, setBusyTool] = useState(null);
  const [notice, setNotice] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [refreshed, setRefreshed] = useState(null);
  const [trying, setTrying] = useState(null);
  const [refreshing, setRefreshing] = useState(false);
  const action = useAction();
  const yes = useRef(null);
  const cardId = domId("endpoint", endpoint.endpointId);
  const path = endpointPath(endpoint);
  useLayoutEffect(() => {
    if (confirming && yes.current) yes.current.focus();
  }, [confirming]);

  // A version conflict re-reads the endpoint and says so; other errors stay in the error box.
  const guarded = (work) =>
    action.run(async () => {
      setNotice("");
      try {
        await work();
      } catch (failure) {
        if (failure.code === "version_conflict") {
          const fresh = await get(path);
          onReplace(fresh);
          setNotice(t("hosted.conflict", { v: fresh.version }));
          return;
        }
        throw failure;
      }
    });

  const changeTool = (tool, change, which) => {
    if (busyTool !== null) return;
    setBusyTool(`${tool.name}:${which}`);
    guarded(async () => {
      const updated = await patch(path, { expectedVersion: endpoint.version, tools: [{ name: tool.name, ...change }] });
      onReplace(updated);
      setNotice(t("hosted.toolSaved", { tool: tool.name }));
    }).finally(() => {
      setBusyTool(null);
      focusAfterRender(`${domId("tool", endpoint.endpointId, tool.name)}-${which === "enabled" ? "enabled" : "approval"}`);
    });
  };

  const setStatus = (status) =>
    guarded(async () => {
      const updated = await patch(path, { expectedVersion: endpoint.version, status });
      onReplace(updated);
      setNotice(t(status === "active" ? "hosted.enabledNow" : "hosted.disabledNow", { name: updated.displayName }));
      focusAfterRender(`${cardId}-${status === "active" ? "disable" : "enable"}`);
    });

  const refresh = () => {
    setRefreshing(true);
    guarded(async () => {
      const answer = await post(`${path}/refresh`, {});
      setRefreshed(answer);
      onReplace(await get(path));
      setNotice(answer.changed ? t("hosted.changed") : t("hosted.unchanged"));
    }).finally(() => setRefreshing(false));
  };

  const fingerprint = pendingFingerprint(endpoint, refreshed);
  const accept = () =>
    guarded(async () => {
      const updated = await post(`${path}/snapshot/accept`, { expectedVersion: endpoint.version, fingerprint });
      onReplace(updated);
      setRefreshed(null);
      setNotice(t("hosted.accepted"));
    });

  const remove = () =>
    action.run(async () => {
      await del(path);
      onDeleted(endpoint);
    });

  const diff = endpoint.pendingDiff || (refreshed && refreshed.changed && refreshed.diff) || null;
  const drifting = endpoint.status === "drift_pending" || Boolean(diff);
  const driftedTools = new Set(diff ? [...(diff.added || []), ...(diff.changed || [])] : []);
  const tools = endpoint.snapshot.tools;
  const openTool = trying && tools.find((tool) => tool.name === trying);

  return html`<article class="card endpoint" aria-labelledby=${`${cardId}-title`} data-endpoint=${endpoint.name}
    data-endpoint-id=${endpoint.endpointId}>
    <div class="row">
      <h3 id=${`${cardId}-title`} class="grow">${endpoint.displayName} <span class="meta"><code>${endpoint.name}</code></span></h3>
      <span class=${`tag status status-${endpoint.status}`} data-testid="endpoint-status" data-status=${endpoint.status}>
        ${t(`hosted.status.${endpoint.status}`)}</span>
      <span class="meta" data-testid="endpoint-version">${t("hosted.version", { v: endpoint.version })}</span>
    </div>
    <dl class="facts">
      <dt>${t("hosted.host")}</dt><dd data-testid="endpoint-host"><code>${endpoint.host}</code></dd>
      <dt>${t("hosted.urlMasked")}</dt><dd data-testid="endpoint-url"><code>${endpoint.urlMasked}</code></dd>
      <dt>${t("hosted.snapshotAt")}</dt><dd>${formatTime(endpoint.snapshot.takenAt, zone)}</dd>
      <dt>${t("hosted.fingerprint")}</dt><dd><code title=${endpoint.snapshot.fingerprint}>${endpoint.snapshot.fingerprint.slice(0, 12)}…</code></dd>
    </dl>
    <div class="row actions">
      ${endpoint.status === "disabled"
        ? html`<button type="button" id=${`${cardId}-enable`} disabled=${action.busy} onClick=${() => setStatus("active")}>${t("hosted.enable")}</button>`
        : html`<button type="button" class="quiet" id=${`${cardId}-disable`} disabled=${action.busy} onClick=${() => setStatus("disabled")}>${t("hosted.disable")}</button>`}
      <button type="button" class="quiet" id=${`${cardId}-refresh`} disabled=${action.busy} onClick=${refresh}>
        ${refreshing ? t("hosted.refreshing") : t("hosted.refresh")}</button>
      <button type="button" class="danger" id=${`${cardId}-delete`} disabled=${action.busy || confirming}
        aria-label=${t("hosted.deleteLabel", { name: endpoint.displayName })} onClick=${() => setConfirming(true)}>${t("hosted.delete")}</button>
    </div>
    ${confirming &&
    html`<div class="confirm" role="alertdialog" aria-modal="false" aria-labelledby=${`${cardId}-delete-q`}
      onKeyDown=${(e) => e.key === "Escape" && (setConfirming(false), focusAfterRender(`${cardId}-delete`))}>
      <p id=${`${cardId}-delete-q`}>${t("hosted.confirmDelete", { name: endpoint.displayName })}</p>
      <div class="row">
        <button type="button" class="danger" ref=${yes} disabled=${action.busy} onClick=${remove}>${t("hosted.confirmDeleteYes")}</button>
        <button type="button" class="quiet" onClick=${() => (setConfirming(false), focusAfterRender(`${cardId}-delete`))}>${t("hosted.confirmDeleteNo")}</button>
      </div>
    </div>`}
    <p class="hint" role="status" aria-live="polite" data-testid="endpoint-notice">${notice}</p>
    <${ErrorBox} error=${action.error} />
    ${drifting && diff &&
    html`<section class="notice drift" aria-labelledby=${`${cardId}-diff`} data-testid="drift">
      <h4 id=${`${cardId}-diff`}>${t("hosted.diff")}</h4>
      <dl class="facts">
        <${DiffList} label=${t("hosted.diffAdded")} names=${diff.added} kind="added" />
        <${DiffList} label=${t("hosted.diffRemoved")} names=${diff.removed} kind="removed" />
        <${DiffList} label=${t("hosted.diffChanged")} names=${diff.changed} kind="changed" />
      </dl>
      <p class="hint" id=${`${cardId}-accept-hint`}>${fingerprint ? t("hosted.acceptHint") : t("hosted.noFingerprint")}</p>
      <button type="button" id=${`${cardId}-accept`} disabled=${action.busy || !fingerprint} aria-describedby=${`${cardId}-accept-hint`}
        onClick=${accept}>${t("hosted.accept")}</button>
    </section>`}
    <h4>${t("hosted.tools")}</h4>
    ${tools.length === 0
      ? html`<${Empty} text=${t("hosted.noTools")} />`
      : html`<div class="table-wrap"><table>
          <thead><tr>
            <th scope="col">${t("hosted.toolName")}</th><th scope="col">${t("hosted.toolDescription")}</th>
            <th scope="col">${t("hosted.toolEnabled")}</th><th scope="col">${t("hosted.toolApproval")}</th><th scope="col"><span class="visually-hidden">${t("hosted.toolTry")}</span></th>
          </tr></thead>
          <tbody>
            ${tools.map(
              (tool) => html`<${ToolRow} key=${tool.name} endpoint=${endpoint} tool=${tool} drifted=${driftedTools.has(tool.name)}
                removed=${Boolean(diff && (diff.removed || []).includes(tool.name))}
                busyTool=${busyTool} trying=${trying === tool.name} onChange=${changeTool}
                onTry=${(picked) => setTrying(trying === picked.name ? null : picked.name)} />`,
            )}
          </tbody>
        </table></div>`}
    ${openTool &&
    html`<${TryIt} key=${openTool.name} endpoint=${endpoint} tool=${openTool} onApprovalAsked=${onApprovalAsked}
      onClose=${() => {
        const id = `${domId("tool", endpoint.endpointId, openTool.name)}-try`;
        setTrying(null);
        focusAfterRender(id);
      }} />`}
  </article>`;
}

// -- pending approvals --------------------------------------------------------------------------------

function ApprovalItem({ approval, endpoints, zone, highlighted, onDecided, onGone }) {
  const action = useAction();
  const [gone, setGone] = useState(null);
  const endpoint = endpoints.find((e) => e.endpointId === approval.endpointId);
  const endpointName = endpoint ? endpoint.displayName : t("hosted.unknownEndpoint");
  const itemId = domId("approval", approval.approvalId);
  const decide = (decision) =>
    action.run(async () => {
      try {
        const decided = await post(`/approvals/${encodeURIComponent(approval.approvalId)}`, { decision });
        onDecided(decided, t(decision === "approve" ? "hosted.approvedNow" : "hosted.deniedNow", { tool: approval.toolName }));
      } catch (failure) {
        if (failure.code === "approval_not_pending") {
          const status = failure.details.status;
          const word = status ? t(`hosted.approvalStatus.${status}`) : "";
          setGone(t("hosted.notPending", { status: word }));
          onGone(t("hosted.notPending", { status: word }));
          return;
        }
        throw failure;
      }
    });
  return html`<li class=${`card approval${highlighted ? " highlight" : ""}`} id=${itemId} data-approval=${approval.approvalId}
    aria-labelledby=${`${itemId}-title`} tabindex="-1">
    <h3 id=${`${itemId}-title`}><code data-testid="approval-tool">${approval.toolName}</code>
      <span class="meta"> · ${t("hosted.approvalEndpoint")}: <span data-testid="approval-endpoint">${endpointName}</span></span></h3>
    <dl class="facts">
      <dt>${t("hosted.approvalAsked")}</dt><dd>${formatTime(approval.createdAt, zone)}</dd>
      <dt>${t("hosted.approvalExpires")}</dt><dd data-testid="approval-expires">${formatTime(approval.expiresAt, zone)}</dd>
    </dl>
    <p class="meta" id=${`${itemId}-args-label`}>${t("hosted.approvalArgs")}</p>
    <pre class="protocol" data-testid="approval-preview" aria-labelledby=${`${itemId}-args-label`} tabindex="0">${approval.argumentsPreview}</pre>
    <div class="row actions">
      <button type="button" data-decision="approve" disabled=${action.busy || gone}
        aria-label=${t("hosted.approveLabel", { tool: approval.toolName, endpoint: endpointName })} onClick=${() => decide("approve")}>${t("hosted.approve")}</button>
      <button type="button" class="danger" data-decision="deny" disabled=${action.busy || gone}
        aria-label=${t("hosted.denyLabel", { tool: approval.toolName, endpoint: endpointName })} onClick=${() => decide("deny")}>${t("hosted.deny")}</button>
    </div>
    ${gone && html`<p class="notice" role="alert" data-testid="approval-gone">${gone}</p>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

function Approvals({ state, endpoints, zone, target, onCount }) {
  const [notice, setNotice] = useState("");
  const focused = useRef("");
  const items = state.data || [];
  useEffect(() => {
    if (state.status === "ready") onCount(items.length);
  }, [state.status, items.length]);
  useEffect(() => {
    if (state.status !== "ready" || !target || focused.current === target) return;
    const element = document.getElementById(domId("approval", target));
    if (!element) return;
    focused.current = target;
    element.scrollIntoView({ block: "center" });
    element.focus({ preventScroll: true });
  }, [state.status, target, items.length]);

  const decided = (approval, message) => {
    setNotice(message);
    state.setData((old) => (old || []).filter((a) => a.approvalId !== approval.approvalId));
    focusAfterRender("hosted-approvals-title");
  };
  const gone = () => {
    // The item stays until the reload answers, so its explanation is read first.
    setTimeout(state.reload, 1500);
  };

  return html`<section class="card" aria-labelledby="hosted-approvals-title" data-testid="approvals">
    <div class="row">
      <h2 id="hosted-approvals-title" class="grow" tabindex="-1">${t("hosted.approvals")}
        ${state.status === "ready" && items.length > 0 && html` <span class="badge" data-testid="approvals-count">${items.length}</span>`}</h2>
      <button type="button" class="quiet" onClick=${state.reload}>${t("hosted.approvalsReload")}</button>
    </div>
    <p class="hint">${t("hosted.approvalsIntro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="approvals-notice">${notice}</p>
    <${Loaded} state=${state}>
      ${(list) =>
        list.length === 0
          ? html`<${Empty} text=${t("hosted.approvalsEmpty")} />`
          : html`<ul class="plain">
              ${list.map(
                (approval) => html`<${ApprovalItem} key=${approval.approvalId} approval=${approval} endpoints=${endpoints} zone=${zone}
                  highlighted=${approval.approvalId === target} onDecided=${decided} onGone=${gone} />`,
              )}
            </ul>`}
    <//>
  </section>`;
}

// -- the section ----------------------------------------------------------------------------------------

export default function Hosted({ ctx, route }) {
  const params = route ? route.params : new URLSearchParams();
  const target = params.get("approval") || "";
  const endpoints = useLoad(() => listAll("/hosted-endpoints"), []);
  const approvals = useLoad(() => listAll("/approvals?status=pending"), []);
  const [notice, setNotice] = useState("");
  const zone = (ctx.profile && ctx.profile.timezone) || browserZone();

  useEffect(() => {
    // A link to an approval (from a try-it form) reads the list again: the approval is new.
    if (target) approvals.reload();
  }, [target]);

  const list = endpoints.data || [];
  const replace = (updated) =>
    endpoints.setData((old) => (old || []).map((e) => (e.endpointId === updated.endpointId ? updated : e)));
  const added = (created) => {
    setNotice("");
    endpoints.setData((old) => [...(old || []), created]);
  };
  const deleted = (endpoint) => {
    endpoints.setData((old) => (old || []).filter((e) => e.endpointId !== endpoint.endpointId));
    setNotice(t("hosted.deleted", { name: endpoint.displayName }));
    focusAfterRender("hosted-list-title");
  };
  const setCount = (n) => ctx.setNavCount && ctx.setNavCount("hosted", n);

  return html`<section aria-labelledby="hosted-title">
    <h1 id="hosted-title">${t("hosted.title")}</h1>
    <p class="hint">${t("hosted.intro")}</p>
    <${RegisterForm} count=${list.length} onRegistered=${added} />
    <h2 id="hosted-list-title" tabindex="-1">${t("hosted.list")}</h2>
    <p class="hint" role="status" aria-live="polite" data-testid="list-notice">${notice}</p>
    <${Loaded} state=${endpoints}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("hosted.empty")} />`
          : items.map(
              (endpoint) => html`<${EndpointCard} key=${endpoint.endpointId} endpoint=${endpoint} zone=${zone} onReplace=${replace}
                onDeleted=${deleted} onApprovalAsked=${() => approvals.reload()} />`,
            )}
    <//>
    <${Approvals} state=${approvals} endpoints=${list} zone=${zone} target=${target} onCount=${setCount} />
  </section>`;
}
