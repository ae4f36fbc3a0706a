// Skills (技能): the catalog, each skill's kind, version and description, and its enable switch.
// Enabling a skill grants nothing: its permissions are separate switches in the Permissions section. Below the
// skills, the catalog (catalog.js): published skills to install, with their trust level and permissions first.
import "./messages.js";
import { listAll, patch } from "../../lib/api.js";
import { ask } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { permissionName, riskName, skillDescription, skillName } from "../../lib/names.js";
import { Empty, ErrorBox, Loaded, Switch, useAction, useLoad } from "../../lib/ui.js";
import { Catalog, TrustBadge } from "./catalog.js";
import { CodeTools } from "./code_tools.js";

function SkillCard({ skill, onChange }) {
  const action = useAction();
  const headingId = `skill-${skill.skillId}`;
  const name = skillName(skill);
  const toggle = async (enabled) => {
    if (!enabled && !(await ask("disableSkill", { name }))) return;
    await action.run(async () => onChange(await patch(`/skills/${encodeURIComponent(skill.skillId)}`, { enabled })));
  };
  return html`<article class="card" aria-labelledby=${headingId} data-skill=${skill.skillId}>
    <div class="row">
      <div class="grow">
        <h2 id=${headingId}><span data-testid="skill-name" data-user-content=${skill.trustLevel === "builtin" ? undefined : ""}>${name}</span> <span class="meta"><code>${skill.skillId}</code></span></h2>
        <p class="meta">
          ${t("skills.kind")}: <span class="tag" data-testid="kind">${t(`kind.${skill.kind}`)}</span>
          · ${t("skills.version")}: <span data-testid="version">${skill.version}</span>
          · ${t("skills.trust")}: <${TrustBadge} level=${skill.trustLevel} />
        </p>
      </div>
      <${Switch}
        id=${`enable-${skill.skillId}`}
        checked=${skill.enabled}
        label=${t("skills.enabled", { name })}
        disabled=${action.busy}
        onChange=${toggle}
      />
    </div>
    ${skill.trustLevel === "builtin"
      ? html`<p>${skillDescription(skill)}</p>`
      : html`<p class="meta">${t("skills.installedFrom")}</p>`}
    <p class="meta">
      ${t("skills.permissions")}:
      ${skill.permissions.length === 0
        ? ` ${t("skills.noPermission")}`
        : skill.permissions.map(
            (p) =>
              html` <span class="tag risk-${p.riskLevel}" title=${permissionName(p.code)}><code>${p.code}</code> ${riskName(p.riskLevel)}</span>`,
          )}
      ${skill.permissions.length > 0 &&
      html` · <a href=${`#/permissions?skill=${encodeURIComponent(skill.skillId)}`}>${t("skills.managePermissions")}</a>`}
    </p>
    <${ErrorBox} error=${action.error} />
  </article>`;
}

export default function Skills({ ctx }) {
  const catalog = useLoad(() => listAll("/skills"), []);
  const replace = (item) => catalog.setData((items) => items.map((s) => (s.skillId === item.skillId ? item : s)));
  return html`<section aria-labelledby="skills-title">
    <h1 id="skills-title">${t("skills.title")}</h1>
    <p class="hint">${t("skills.intro")}</p>
    <${Loaded} state=${catalog}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("skills.empty")} />`
          : items.map((skill) => html`<${SkillCard} key=${skill.skillId} skill=${skill} onChange=${replace} />`)}
    <//>
    <${Catalog} onChanged=${catalog.reload} />
    <${CodeTools} key=${`code-tools-${(catalog.data || []).filter((s) => s.trustLevel !== "builtin").map((s) => `${s.skillId}@${s.version}`).join(",")}`} zone=${ctx?.profile?.timezone} />
  </section>`;
}
