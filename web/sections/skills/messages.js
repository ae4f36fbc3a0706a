// The skills section's messages (zh, en).
import { register } from "../../lib/i18n.js";

register({
  zh: {
    "skills.title": "技能",
    "skills.intro": "启用开关决定技能是否参与回复；它不授予任何权限，权限在“执行权限”中单独开启。",
    "skills.kind": "类型",
    "skills.version": "版本",
    "skills.enabled": "启用 {name}",
    "skills.permissions": "所需权限",
    "skills.noPermission": "无需权限",
    "skills.managePermissions": "管理权限",
    "skills.empty": "还没有注册任何技能。",
    "kind.prompt": "提示词",
    "kind.workflow": "工作流",
    "kind.tool": "工具",
    "kind.background": "后台任务",
    "kind.automation": "自动化",
  },
  en: {
    "skills.title": "Skills",
    "skills.intro": "The enable switch decides whether a skill takes part in replies; it grants nothing. Permissions are switched on separately, under Permissions.",
    "skills.kind": "Kind",
    "skills.version": "Version",
    "skills.enabled": "Enable {name}",
    "skills.permissions": "Permissions",
    "skills.noPermission": "No permission needed",
    "skills.managePermissions": "Manage permissions",
    "skills.empty": "No skill is registered.",
    "kind.prompt": "Prompt",
    "kind.workflow": "Workflow",
    "kind.tool": "Tool",
    "kind.background": "Background",
    "kind.automation": "Automation",
  },
});
