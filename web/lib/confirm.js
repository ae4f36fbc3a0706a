// The one confirmation every destructive action asks for (cancel, revoke, deactivate, disable, delete, forget):
// a native modal <dialog> (role alertdialog) with a title, the consequence in a sentence, and two buttons.
// The focus starts on the button that changes nothing and goes back to where it was when the dialog closes;
// Escape, the keep button and a second request while one is open all answer false, and nothing is done.
//
//   if (!(await confirmAction({ title, body, confirm: t("…") }))) return;
import { register, t } from "./i18n.js";

// The questions of the sections' destructive actions, here with the dialog so that each says the same way what it
// changes and what it keeps.
register({
  zh: {
    "confirm.keep": "保留",
    "confirm.scopeUser": "整个用户",
    "confirm.deleteJob.title": "删除这个自动化任务？",
    "confirm.deleteCapability.title": "删除这项能力？",
    "confirm.deleteEndpoint.title": "删除这个端点？",
    "confirm.removeBinding.title": "删除这个工具绑定？",
    "confirm.forgetMemory.title": "遗忘这条记忆？",
    "confirm.cancelReminder.title": "取消这条提醒？",
    "confirm.cancelReminder.body": "{time} 的提醒将不会发送。取消后不能恢复，需要时请重新安排。",
    "confirm.cancelReminder.yes": "取消提醒",
    "confirm.revoke.title": "撤销这项授权？",
    "confirm.revoke.body": "撤销“{name}”（{scope}）后，技能从下一次调用起不能再使用它，直到你再次授权。",
    "confirm.revoke.yes": "撤销授权",
    "confirm.disableSkill.title": "停用这个技能？",
    "confirm.disableSkill.body": "停用后，智能体不再使用“{name}”，直到你重新启用；它的授权保留不变。",
    "confirm.disableSkill.yes": "停用技能",
    "confirm.disableEndpoint.title": "停用这个端点？",
    "confirm.disableEndpoint.body": "停用后，“{name}”的工具不能再被调用（页面、聊天和智能体宿主都不行），已给出的批准也不再有效，直到你重新启用。",
    "confirm.disableEndpoint.yes": "停用端点",
    "confirm.deactivateCapability.title": "停用这项能力？",
    "confirm.deactivateCapability.body": "停用后，“{name}”回到草稿，不再提供给智能体宿主，直到你重新启用。",
    "confirm.deactivateCapability.yes": "停用能力",
  },
  en: {
    "confirm.keep": "Keep it",
    "confirm.scopeUser": "the whole user",
    "confirm.deleteJob.title": "Delete this automation job?",
    "confirm.deleteCapability.title": "Delete this capability?",
    "confirm.deleteEndpoint.title": "Delete this endpoint?",
    "confirm.removeBinding.title": "Remove this tool binding?",
    "confirm.forgetMemory.title": "Forget this memory?",
    "confirm.cancelReminder.title": "Cancel this reminder?",
    "confirm.cancelReminder.body": "The reminder at {time} will not be sent. A cancelled reminder cannot be restored; schedule a new one if you need it.",
    "confirm.cancelReminder.yes": "Cancel the reminder",
    "confirm.revoke.title": "Revoke this permission?",
    "confirm.revoke.body": "Once “{name}” ({scope}) is revoked, the skill cannot use it from its next call until you grant it again.",
    "confirm.revoke.yes": "Revoke",
    "confirm.disableSkill.title": "Turn this skill off?",
    "confirm.disableSkill.body": "Agents stop using “{name}” until you turn it on again; its permissions are kept.",
    "confirm.disableSkill.yes": "Turn it off",
    "confirm.disableEndpoint.title": "Disable this endpoint?",
    "confirm.disableEndpoint.body": "The tools of “{name}” can no longer be called (from the page, the chat or an agent host) and the approvals already given no longer apply, until you enable it again.",
    "confirm.disableEndpoint.yes": "Disable the endpoint",
    "confirm.deactivateCapability.title": "Deactivate this capability?",
    "confirm.deactivateCapability.body": "“{name}” goes back to draft and is no longer offered to agent hosts until you activate it again.",
    "confirm.deactivateCapability.yes": "Deactivate",
  },
});

// The dialog for one of the questions above: `ask("revoke", { name, scope })`.
export function ask(key, values = {}) {
  return confirmAction({
    title: t(`confirm.${key}.title`, values),
    body: t(`confirm.${key}.body`, values),
    confirm: t(`confirm.${key}.yes`, values),
  });
}

let sequence = 0;
let openDialog = null;

export function confirmAction({ title, body, confirm, keep }) {
  if (openDialog) return Promise.resolve(false);
  const opener = document.activeElement;
  const id = `confirm-${++sequence}`;
  const dialog = document.createElement("dialog");
  dialog.className = "confirm-dialog";
  dialog.setAttribute("role", "alertdialog");
  dialog.setAttribute("aria-labelledby", `${id}-title`);
  dialog.setAttribute("aria-describedby", `${id}-body`);
  dialog.dataset.testid = "confirm-dialog";
  const heading = document.createElement("h2");
  heading.id = `${id}-title`;
  heading.textContent = title;
  const text = document.createElement("p");
  text.id = `${id}-body`;
  text.textContent = body;
  const actions = document.createElement("div");
  actions.className = "row actions";
  const keepButton = document.createElement("button");
  keepButton.type = "button";
  keepButton.className = "quiet";
  keepButton.dataset.confirm = "keep";
  keepButton.textContent = keep || t("confirm.keep");
  const yesButton = document.createElement("button");
  yesButton.type = "button";
  yesButton.className = "danger";
  yesButton.dataset.confirm = "yes";
  yesButton.textContent = confirm;
  actions.append(keepButton, yesButton);
  dialog.append(heading, text, actions);
  document.body.append(dialog);
  openDialog = dialog;
  return new Promise((resolve) => {
    let answer = null;
    // The answer is settled, and another dialog may open, the moment the person answers: the browser gives the
    // focus back as the dialog closes, while its `close` event is a task queued for later (on a busy machine an
    // Enter on the restored button came before it and was refused as "already asking").
    const settle = (value) => {
      if (answer !== null) return;
      answer = value;
      if (openDialog === dialog) openDialog = null;
    };
    yesButton.addEventListener("click", () => {
      settle(true);
      dialog.close();
    });
    keepButton.addEventListener("click", () => {
      settle(false);
      dialog.close();
    });
    dialog.addEventListener("cancel", () => settle(false)); // Escape: "cancel", then the dialog closes
    dialog.addEventListener("close", () => {
      settle(false);
      dialog.remove();
      // Give the focus back unless another dialog has opened since (it holds the focus now).
      if (!openDialog && opener && opener.isConnected && typeof opener.focus === "function") opener.focus();
      resolve(answer);
    });
    dialog.showModal();
    keepButton.focus();
  });
}
