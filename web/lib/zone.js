// The profile's time zone in the header, and the way to change it (PUT /rpc/me {timezone}). The page shows and
// reads every time in this zone, never the browser's. What a change does, as the server stores things: reminders
// are stored as instants (UTC) and keep their moment, now shown in the new zone; each automation job keeps the zone
// it was given (the default job got the profile's when it was made) until its own form changes it; new automation
// jobs take the new zone.
import { useState } from "preact/hooks";
import { put } from "./api.js";
import { html } from "./html.js";
import { register, t } from "./i18n.js";
import { ErrorBox, focusAfterRender, useAction, useNotice } from "./ui.js";

register({
  zh: {
    "zone.change": "更改时区",
    "zone.label": "你的时区",
    "zone.effect": "页面上的时间都按这个时区显示和填写。已安排的提醒保持原来的时刻，按新时区显示；已有的自动化任务保留各自的时区（可在任务中修改）；新建的自动化任务使用新时区。",
    "zone.save": "保存时区",
    "zone.cancel": "取消",
    "zone.saved": "时区已改为 {zone}。",
  },
  en: {
    "zone.change": "Change time zone",
    "zone.label": "Your time zone",
    "zone.effect": "Every time on the page is shown and entered in this zone. Scheduled reminders keep their moment, shown in the new zone; existing automation jobs keep their own zone (change it in a job); new automation jobs take the new zone.",
    "zone.save": "Save time zone",
    "zone.cancel": "Cancel",
    "zone.saved": "Time zone changed to {zone}.",
  },
});

function zones(current) {
  let all = [];
  try {
    all = Intl.supportedValuesOf("timeZone");
  } catch {
    all = [];
  }
  return all.includes(current) ? all : [current, ...all];
}

export function ZoneSetting({ profile, onSaved }) {
  const [open, setOpen] = useState(false);
  const [picked, setPicked] = useState(profile.timezone);
  const [notice, setNotice] = useNotice();
  const action = useAction();
  const close = () => {
    setOpen(false);
    focusAfterRender("zone-change");
  };
  const save = (event) => {
    event.preventDefault();
    action.run(async () => {
      const next = await put("/me", { timezone: picked });
      onSaved(next);
      setNotice(t("zone.saved", { zone: next.timezone }));
      close();
    });
  };
  return html`<span class="zone">${t("app.zone")}: <span data-testid="zone">${profile.timezone}</span>
    <button type="button" class="quiet" id="zone-change" aria-expanded=${open ? "true" : "false"}
      aria-controls="zone-form" onClick=${() => (setPicked(profile.timezone), setNotice(""), setOpen(!open),
        focusAfterRender("zone-select"))}>${t("zone.change")}</button>
    <span class="visually-hidden" role="status" aria-live="polite" data-testid="zone-notice">${notice}</span>
    ${open &&
    html`<form id="zone-form" class="zone-form card" aria-label=${t("zone.label")} onSubmit=${save}
        onKeyDown=${(e) => e.key === "Escape" && close()}>
      <label for="zone-select">${t("zone.label")}</label>
      <select id="zone-select" aria-describedby="zone-effect" value=${picked}
        onChange=${(e) => setPicked(e.currentTarget.value)}>
        ${zones(profile.timezone).map((zone) => html`<option value=${zone}>${zone}</option>`)}
      </select>
      <p id="zone-effect" class="hint">${t("zone.effect")}</p>
      <div class="row">
        <button type="submit" disabled=${action.busy}>${t("zone.save")}</button>
        <button type="button" class="quiet" onClick=${close}>${t("zone.cancel")}</button>
      </div>
      <${ErrorBox} error=${action.error} />
    </form>`}
  </span>`;
}
