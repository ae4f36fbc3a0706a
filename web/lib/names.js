// Display names the server does not give in Chinese: the built-in skills' names and descriptions (the
// catalog answers them in English), the permission codes, the risk levels (seed 000, "权限模型": L0..L4)
// and the approval modes. Unknown ids fall back to what the server says, so a new skill still shows.
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
  },
});

export function skillName(skill) {
  return (lang() === "zh" && SKILLS_ZH[skill.skillId] && SKILLS_ZH[skill.skillId][0]) || skill.name;
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
