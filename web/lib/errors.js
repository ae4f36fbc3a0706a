// The page's own words for the API's error codes and for the validator's field error types, in the chosen
// language: the envelope's `message` is the server's English sentence, shown only for a code the page does not
// know (in English) or as a last resort. An ApiError reads its message from here each time it is shown, so a
// refusal shown before the language switch reads in the new language after it.
import { lang, register, t } from "./i18n.js";

register({
  zh: {
    "err.bad_request": "请求的格式不对。",
    "err.unauthenticated": "尚未登录或登录已过期。",
    "err.forbidden": "你没有执行这个操作的权限。",
    "err.person_required": "这一步需要你本人在页面上确认。",
    "err.not_found": "没有找到，可能已被删除。",
    "err.agent_not_found": "没有找到这个 Agent。",
    "err.skill_not_found": "没有找到这个技能。",
    "err.trust_level_forbidden": "这个来源的技能不能要求 L3 或更高风险的权限。",
    "err.upgrade_not_pending": "没有等待你同意的这个版本，请刷新后再看。",
    "err.canary_running": "这个技能的另一个版本正在灰度中，请等它完成后再决定。",
    "err.method_not_allowed": "这个地址不支持这个操作。",
    "err.version_conflict": "它已在别处被修改，请重新读取后再试。",
    "err.concurrent_update": "同时有另一处修改，请再试一次。",
    "err.client_message_conflict": "这条消息的编号已用于另一条消息。",
    "err.idempotency_key_reused": "这次请求的编号已用于另一个请求。",
    "err.job_not_cancellable": "这个任务已开始或已结束，不能再取消。",
    "err.capability_active": "能力已激活，请先停用再修改。",
    "err.capability_name_taken": "这个名称已被你的另一个能力使用。",
    "err.binding_name_taken": "这个名称已被另一个工具绑定使用。",
    "err.binding_in_use": "还有步骤在使用这个工具绑定。",
    "err.capability_not_active": "能力尚未激活。",
    "err.draft_revision_conflict": "草稿已在别处更新，请重新读取。",
    "err.endpoint_name_taken": "这个名称已被你的另一个托管端点使用。",
    "err.endpoint_disabled": "这个托管端点已停用。",
    "err.tool_drifted": "端点的工具列表已变化，请先查看并接受变化。",
    "err.approval_required": "这次调用需要你先审批。",
    "err.approval_not_pending": "这个审批已处理过或已过期。",
    "err.payload_too_large": "内容太大，请缩短后再试。",
    "err.validation_error": "有内容不符合要求，请检查标出的字段。",
    "err.permission_required": "这个技能需要你先授权，可以在“执行权限”中开启。",
    "err.permission_not_declared": "这个技能没有声明这项权限。",
    "err.skill_disabled": "这个技能已关闭，请先在“技能”中开启。",
    "err.run_at_out_of_range": "时间必须在 1 分钟到 1 年之后。",
    "err.unknown_tool": "有工具名称没有注册。",
    "err.invalid_timezone": "不是有效的时区。",
    "err.quota_exceeded": "已达到数量上限。",
    "err.unsafe_text": "有文字看起来像给 Agent 的指令，请改写标出的字段。",
    "err.unknown_reference": "有步骤引用了没有声明的能力或工具。",
    "err.schema_not_allowed": "输入结构使用了不允许的写法。",
    "err.draft_has_gaps": "草稿还有未回答的问题。",
    "err.url_not_allowed": "这个地址不被允许。",
    "err.snapshot_invalid": "端点返回的工具列表无效。",
    "err.rate_limited": "操作太频繁，请 {seconds} 秒后再试。",
    "err.budget_exhausted": "今日模型额度已用完。",
    "err.upstream_error": "外部服务的回答无效。",
    "err.upstream_timeout": "外部服务没有及时回答。",
    "err.store_unavailable": "服务暂时繁忙，请稍后重试。",
    "err.already_exists": "它已经存在。",
    "err.internal": "服务出错了，请稍后重试。",
    "err.unknown": "请求没有成功（{code}）。",
    "field.missing": "必填。",
    "field.tooLong": "最多 {n} 个字符。",
    "field.tooShort": "至少 {n} 个字符。",
    "field.tooMany": "最多 {n} 项。",
    "field.tooFew": "至少 {n} 项。",
    "field.max": "不能大于 {n}。",
    "field.min": "不能小于 {n}。",
    "field.pattern": "格式不对。",
    "field.type": "类型不对。",
    "field.extra": "不接受这个字段。",
    "field.choice": "不是可选的值。",
    "field.invalid": "这一项无效。",
  },
  en: {
    "err.bad_request": "The request is not well formed.",
    "err.unauthenticated": "You are not signed in, or your sign-in has expired.",
    "err.forbidden": "You may not do this.",
    "err.person_required": "This needs you, in person, on the page.",
    "err.not_found": "Not found: it may have been deleted.",
    "err.agent_not_found": "There is no such agent.",
    "err.skill_not_found": "There is no such skill.",
    "err.trust_level_forbidden": "Skills from this source may not ask for permissions at risk L3 or above.",
    "err.upgrade_not_pending": "No upgrade to this version is waiting for your consent: reload to see.",
    "err.canary_running": "Another version of this skill is in its canary: decide this one when that one is done.",
    "err.method_not_allowed": "This address does not take this operation.",
    "err.version_conflict": "It was changed elsewhere: read it again and retry.",
    "err.concurrent_update": "Another change came at the same time: please retry.",
    "err.client_message_conflict": "This message's id is already used by another message.",
    "err.idempotency_key_reused": "This request's id is already used by another request.",
    "err.job_not_cancellable": "This job has started or finished and can no longer be cancelled.",
    "err.capability_active": "The capability is active: deactivate it before changing it.",
    "err.capability_name_taken": "Another of your capabilities has this name.",
    "err.binding_name_taken": "Another tool binding has this name.",
    "err.binding_in_use": "A step still uses this tool binding.",
    "err.capability_not_active": "The capability is not active.",
    "err.draft_revision_conflict": "The draft changed elsewhere: read it again.",
    "err.endpoint_name_taken": "Another of your hosted endpoints has this name.",
    "err.endpoint_disabled": "This hosted endpoint is disabled.",
    "err.tool_drifted": "The endpoint's tools changed: review and accept the change first.",
    "err.approval_required": "This call needs your approval first.",
    "err.approval_not_pending": "This approval was already decided, or it expired.",
    "err.payload_too_large": "This is too large: shorten it and retry.",
    "err.validation_error": "Something does not fit: check the marked fields.",
    "err.permission_required": "This skill needs your permission first: grant it under Permissions.",
    "err.permission_not_declared": "This skill does not declare this permission.",
    "err.skill_disabled": "This skill is off: turn it on under Skills first.",
    "err.run_at_out_of_range": "The time must be between 1 minute and 1 year ahead.",
    "err.unknown_tool": "A tool name is not registered.",
    "err.invalid_timezone": "This is not a valid time zone.",
    "err.quota_exceeded": "The limit is reached.",
    "err.unsafe_text": "Some text reads like an instruction to the agent: rewrite the marked fields.",
    "err.unknown_reference": "A step refers to a capability or tool that is not declared.",
    "err.schema_not_allowed": "The input schema uses something that is not allowed.",
    "err.draft_has_gaps": "The draft still has unanswered questions.",
    "err.url_not_allowed": "This address is not allowed.",
    "err.snapshot_invalid": "The endpoint's list of tools is not valid.",
    "err.rate_limited": "Too many requests: retry in {seconds} s.",
    "err.budget_exhausted": "Today's model budget is used up.",
    "err.upstream_error": "The external service answered badly.",
    "err.upstream_timeout": "The external service did not answer in time.",
    "err.store_unavailable": "The service is busy: please retry shortly.",
    "err.already_exists": "It already exists.",
    "err.internal": "Something went wrong on the server: please retry shortly.",
    "err.unknown": "The request did not succeed ({code}).",
    "field.missing": "Required.",
    "field.tooLong": "At most {n} characters.",
    "field.tooShort": "At least {n} characters.",
    "field.tooMany": "At most {n} items.",
    "field.tooFew": "At least {n} items.",
    "field.max": "At most {n}.",
    "field.min": "At least {n}.",
    "field.pattern": "The format is not valid.",
    "field.type": "The type is not valid.",
    "field.extra": "This field is not accepted.",
    "field.choice": "Not one of the allowed values.",
    "field.invalid": "This is not valid.",
  },
});

const has = (key) => t(key) !== key;

// The page's sentence for an error code (with its details), else the server's sentence in English, else a
// sentence naming the code.
export function errorText(code, details, serverMessage) {
  const key = `err.${code}`;
  if (has(key)) return t(key, { seconds: (details && details.retryAfterSeconds) ?? "", code });
  if (lang() === "en" && serverMessage) return serverMessage;
  return t("err.unknown", { code });
}

// The validator's error types (pydantic's `type`), by what they mean to a person.
const FIELD_TYPES = {
  missing: "field.missing",
  string_too_long: "field.tooLong",
  string_too_short: "field.tooShort",
  too_long: "field.tooMany",
  too_short: "field.tooFew",
  less_than_equal: "field.max",
  less_than: "field.max",
  greater_than_equal: "field.min",
  greater_than: "field.min",
  string_pattern_mismatch: "field.pattern",
  extra_forbidden: "field.extra",
  literal_error: "field.choice",
  enum: "field.choice",
};

// One field error ({path, message, type}) in the page's words; the number a bound names is read from the
// server's sentence ("at most 1000 characters"). An unknown type reads as the server's sentence in English.
export function fieldText(item) {
  const key = item && FIELD_TYPES[item.type];
  if (key) {
    const n = /(-?\d+(?:\.\d+)?)/.exec(item.message || "");
    return t(key, { n: n ? n[1] : "" });
  }
  if (item && /_(type|parsing)$/.test(item.type || "")) return t("field.type");
  if (lang() === "en" && item && item.message) return item.message;
  return t("field.invalid");
}
