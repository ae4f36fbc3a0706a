// The messages of creation by conversation that issue 24 added (zh, en): resuming open drafts, answering a step.
import { register } from "../../lib/i18n.js";

register({
  zh: {
    "caps.openDrafts": "进行中的对话草稿",
    "caps.noOpenDrafts": "没有进行中的草稿。",
    "caps.draftGaps": "还有 {n} 个问题",
    "caps.draftUpdated": "更新于 {at}",
    "caps.resume": "继续",
    "caps.resumeLabel": "继续草稿“{name}”",
    "caps.stepN": "步骤 {n}：",
    "caps.stepHow": "这一步怎么做",
    "caps.stepHowText": "用文字回答",
    "caps.stepHowSkill": "用平台能力：{name}（{id}）",
    "caps.stepHowTool": "用我宿主机上的工具（填写绑定）",
    "caps.stepHowDrop": "删除这一步",
    "caps.stepDropHint": "重新生成时，这一步会从草稿中删除。",
    "caps.stepsSyntax": "步骤写法：每行一步，或写成“1. … 2. …”。用平台能力的步骤写“能力id: 做什么”，用宿主机工具的步骤写“工具 名称@宿主配置: 做什么”；只写要做的事也可以，之后再为它选能力或工具。",
  },
  en: {
    "caps.openDrafts": "Drafts in progress",
    "caps.noOpenDrafts": "There is no draft in progress.",
    "caps.draftGaps": "{n} questions left",
    "caps.draftUpdated": "updated {at}",
    "caps.resume": "Resume",
    "caps.resumeLabel": "Resume the draft “{name}”",
    "caps.stepN": "Step {n}:",
    "caps.stepHow": "How this step is done",
    "caps.stepHowText": "Answer in words",
    "caps.stepHowSkill": "Built-in capability: {name} ({id})",
    "caps.stepHowTool": "A tool on my agent host (give its binding)",
    "caps.stepHowDrop": "Remove this step",
    "caps.stepDropHint": "Drafting again removes this step from the draft.",
    "caps.stepsSyntax": "How to write steps: one per line, or as “1. … 2. …”. A step that uses a built-in capability is “capability-id: what to do”; one that uses a tool on your agent host is “tool name@hostProfile: what to do”. Writing only what to do is fine too: you pick its capability or tool afterwards.",
  },
});
