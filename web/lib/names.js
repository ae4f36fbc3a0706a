// Display names the server does not give in Chinese: the built-in skills' names and descriptions (the
// catalog answers them in English), the permission codes, the risk levels (seed 000, "权限模型": L0..L4)
// and the approval modes. Unknown ids fall back to what the server says, so a new skill still shows.
import { html } from "./html.js";
import { lang, register, t } from "./i18n.js";

const SKILLS_ZH = {
  "memory-recall": ["记忆检索", "当你问 Agent 是否还记得某件事时，检索这个 Agent 保存的记忆。"],
  "memory-context": ["记忆上下文", "让 Agent 在每次回复时参考它保存的关于你的记忆。"],
  "memory-extraction": ["记忆提炼", "每天，Agent 会保存你告诉它的长期信息（并忘记你要求它忘记的内容）。"],
  "goal-check-in-reminder": ["目标复盘提醒", "在你选定的时间，Agent 会主动发一条消息，询问目标进展。"],
  "goal-setting": ["目标设定", "引导你设定一个目标：是什么、什么时候完成，最后确认一份总结。"],
  "daily-plan": ["每日计划", "当你请它帮忙安排一天时，给出最多三个按优先级排列的具体步骤。"],
  "hosted-workflows": ["托管工作流", "调用你登记的托管外部工作流（每次调用另需审批）。"],
};

export const RISK_LEVELS = ["L0", "L1", "L2", "L3", "L4"];

register({
  zh: {
    "risk.L0": "无受保护资源",
    "risk.L1": "只读",
    "risk.L2": "站内写入",
    "risk.L3": "外部写入",
    "risk.L4": "不可逆操作",
    "riskInfo.L0": "无受保护资源或纯计算，例如提示词和工作流的过程指令。",
    "riskInfo.L1": "受保护数据只读，例如读取当前 Agent 的长期记忆。",
    "riskInfo.L2": "可撤销的站内写入，例如向 Agent 会话发送复盘提醒。",
    "riskInfo.L3": "外部写入或高影响操作，例如调用外部工作流。",
    "riskInfo.L4": "支付、删除、公开发布等不可逆操作（当前禁止）。",
    "approval.none": "无需授权",
    "approval.persistent": "持久授权",
    "approval.per_operation": "持久授权 + 每次操作审批",
    "permission.memory:read": "读取 Agent 记忆",
    "permission.memory:write": "写入 Agent 记忆",
    "permission.proactive_message:write": "发送主动提醒",
    "permission.hosted_workflow:invoke": "调用托管工作流",
    "reason.allowed": "已授权",
    "reason.no_permission_needed": "无需授权",
    "reason.grant_missing": "未授权",
    "reason.per_operation_not_open": "未指明操作",
    "reason.approval_required": "需要审批",
    "reason.risk_l3_not_open": "外部操作未开放",
    "reason.risk_l4_forbidden": "不可逆操作被禁止",
    "reason.skill_disabled": "技能已关闭",
    "reason.run_at_out_of_range": "时间超出范围",
    "reason.succeeded": "成功",
    "reason.user_request": "本人操作",
    "reason.already_delivered": "已送达过",
    "reason.invalid_input": "输入无效",
    "reason.call_cap_exceeded": "超过调用次数",
    "reason.budget_exhausted": "今日额度已用完",
    "reason.rate_limited": "操作太频繁",
    "reason.timeout": "超时",
    "reason.upstream_error": "外部服务出错",
    "reason.upstream_timeout": "外部服务超时",
    "reason.handler_error": "执行出错",
    "reason.transient_error": "暂时性错误",
    "reason.stale_sign_in": "登录已过期",
    "reason.host_token": "来自 Agent 宿主",
    "reason.tool_use": "调用了工具",
    "reason.end_turn": "正常结束",
    "reason.approved": "已批准",
    "reason.denied": "已拒绝",
    "reason.expired": "已过期",
    "reason.unsafe_text": "文字未通过检查",
    "reason.unknown_reference": "引用未声明",
    "reason.schema_not_allowed": "输入结构不允许",
    "reason.quota_exceeded": "超过数量上限",
    "reason.url_not_allowed": "地址不被允许",
    "reason.tool_drifted": "工具已变化",
    "reason.endpoint_disabled": "端点已停用",
    "reason.model_failed": "模型出错",
    "reason.no_recent_messages": "没有新的对话",
  },
  en: {
    "risk.L0": "no protected resource",
    "risk.L1": "read-only",
    "risk.L2": "in-app write",
    "risk.L3": "external write",
    "risk.L4": "irreversible",
    "riskInfo.L0": "No protected resource, or pure computation: the instructions of prompts and workflows.",
    "riskInfo.L1": "Reads protected data: the current agent's long-term memories, for example.",
    "riskInfo.L2": "A revocable write inside the app: a check-in reminder in an agent's conversation, for example.",
    "riskInfo.L3": "A write outside the app or a high-impact operation: calling an external workflow, for example.",
    "riskInfo.L4": "Irreversible operations such as payments, deletions and public posts (not allowed).",
    "approval.none": "no approval",
    "approval.persistent": "persistent grant",
    "approval.per_operation": "persistent grant + approval per operation",
    "permission.memory:read": "Read agent memories",
    "permission.memory:write": "Write agent memories",
    "permission.proactive_message:write": "Send proactive reminders",
    "permission.hosted_workflow:invoke": "Call hosted workflows",
    "reason.allowed": "granted",
    "reason.no_permission_needed": "no permission needed",
    "reason.grant_missing": "not granted",
    "reason.per_operation_not_open": "no operation named",
    "reason.approval_required": "approval needed",
    "reason.risk_l3_not_open": "external actions not open",
    "reason.risk_l4_forbidden": "irreversible actions forbidden",
    "reason.skill_disabled": "skill off",
    "reason.run_at_out_of_range": "time out of range",
    "reason.succeeded": "succeeded",
    "reason.user_request": "your request",
    "reason.already_delivered": "already delivered",
    "reason.invalid_input": "invalid input",
    "reason.call_cap_exceeded": "too many calls",
    "reason.budget_exhausted": "daily budget used up",
    "reason.rate_limited": "too many requests",
    "reason.timeout": "timed out",
    "reason.upstream_error": "external service failed",
    "reason.upstream_timeout": "external service timed out",
    "reason.handler_error": "run failed",
    "reason.transient_error": "transient failure",
    "reason.stale_sign_in": "sign-in too old",
    "reason.host_token": "from an agent host",
    "reason.tool_use": "used a tool",
    "reason.end_turn": "finished",
    "reason.approved": "approved",
    "reason.denied": "denied",
    "reason.expired": "expired",
    "reason.unsafe_text": "text refused",
    "reason.unknown_reference": "undeclared reference",
    "reason.schema_not_allowed": "schema not allowed",
    "reason.quota_exceeded": "limit reached",
    "reason.url_not_allowed": "address not allowed",
    "reason.tool_drifted": "tools changed",
    "reason.endpoint_disabled": "endpoint disabled",
    "reason.model_failed": "model failed",
    "reason.no_recent_messages": "no recent chat",
  },
});

// The built-in skills' English names, for lists that know only the id (the audit trail, the evals).
const SKILLS_EN = {
  "memory-recall": "Memory recall",
  "memory-context": "Memory context",
  "memory-extraction": "Memory extraction",
  "goal-check-in-reminder": "Goal check-in reminder",
  "goal-setting": "Goal setting",
  "daily-plan": "Daily plan",
  "hosted-workflows": "Hosted workflows",
};

export function skillName(skill) {
  if (lang() === "zh" && SKILLS_ZH[skill.skillId]) return SKILLS_ZH[skill.skillId][0];
  return skill.name && skill.name !== skill.skillId ? skill.name : SKILLS_EN[skill.skillId] || skill.name;
}

// A reason or error code of a run or audit event in words, or null for a code the page does not know (shown as
// a code span then).
export function reasonName(code) {
  const key = `reason.${code}`;
  const text = t(key);
  return text === key ? null : text;
}

// A reason as the page shows it: its words (the code kept in data-reason), else the code as a code span.
export function reasonOf(code) {
  if (!code) return "—";
  const name = reasonName(code);
  return name ? html`<span data-reason=${code}>${name}</span>` : html`<code>${code}</code>`;
}

export function skillDescription(skill) {
  return (lang() === "zh" && SKILLS_ZH[skill.skillId] && SKILLS_ZH[skill.skillId][1]) || skill.description;
}

// "L1 只读" / "L1 read-only"; an unknown level shows as itself.
export function riskName(level) {
  return RISK_LEVELS.includes(level) ? `${level} ${t(`risk.${level}`)}` : level;
}

export function permissionName(code) {
  const key = `permission.${code}`;
  const text = t(key);
  return text === key ? code : text;
}
