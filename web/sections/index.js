// The page's sections, in navigation order. A section is a folder under sections/: its index.js exports
// `default function Section({ ctx })` and imports its messages.js (which registers the section's zh/en
// messages); the folder's other modules do one job each. A section is loaded when first opened, so the
// first load carries only the shell and the section shown. A new section adds one line here and its nav
// label below.
import { register } from "../lib/i18n.js";

export const SECTIONS = [
  { id: "skills", load: () => import("./skills/index.js") },
  { id: "permissions", load: () => import("./permissions/index.js") },
  { id: "reminders", load: () => import("./reminders/index.js") },
  { id: "automation", load: () => import("./automation/index.js") },
  { id: "capabilities", load: () => import("./capabilities/index.js") },
  { id: "hosted", load: () => import("./hosted/index.js") },
  { id: "memories", load: () => import("./memories/index.js") },
  { id: "agents", load: () => import("./agents/index.js") },
  { id: "activity", load: () => import("./activity/index.js") },
  // Operators only (the admin group): the navigation shows it to them alone.
  { id: "operators", admin: true, load: () => import("./operators/index.js") },
];

register({
  zh: {
    "nav.skills": "技能",
    "nav.permissions": "执行权限",
    "nav.reminders": "目标复盘提醒",
    "nav.automation": "自动化任务",
    "nav.capabilities": "我的能力",
    "nav.hosted": "托管工作流",
    "nav.count": "{n} 项待处理",
    "nav.memories": "记忆",
    "nav.agents": "Agent 与聊天",
    "nav.activity": "活动",
    "nav.operators": "运营",
  },
  en: {
    "nav.skills": "Skills",
    "nav.permissions": "Permissions",
    "nav.reminders": "Goal check-in reminders",
    "nav.automation": "Automation jobs",
    "nav.capabilities": "My capabilities",
    "nav.hosted": "Hosted workflows",
    "nav.count": "{n} waiting",
    "nav.memories": "Memories",
    "nav.agents": "Agents and chat",
    "nav.activity": "Activity",
    "nav.operators": "Operators",
  },
});
