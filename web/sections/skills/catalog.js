// The catalog (目录) in the Skills section, for every user: the published skills of the catalog with their trust
// level and the permissions each asks for, with their risk levels, shown BEFORE the install button. Installing
// grants nothing: the permissions are granted afterwards, under Permissions, as for a built-in skill. An installed
// skill shows the version serving it; an upgrade that adds a permission or raises a risk waits here for consent
// (what it would add is listed), while the installed version keeps serving. The publisher's texts are quoted data.
import "./messages.js";
import { del, listAll, post } from "../../lib/api.js";
import { confirmAction } from "../../lib/confirm.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { permissionName, riskName } from "../../lib/names.js";
import { Empty, ErrorBox, Loaded, useAction, useLoad } from "../../lib/ui.js";

export function TrustBadge({ level }) {
  return html`<span class=${`tag trust trust-${level}`} data-testid="trust">${t(`trust.${level}`)}</span>`;
}

function Permissions({ permissions, testid }) {
  if (permissions.length === 0) return html`<span data-testid=${testid}>${t("catalog.noPermission")}</span>`;
  return html`<ul class="plain inline" data-testid=${testid}>
    ${permissions.map(
      (p) => html`<li class=${`tag risk-${p.riskLevel}`} data-code=${p.code}>
        <code>${p.code}</code> ${permissionName(p.code) !== p.code ? permissionName(p.code) : ""} · ${riskName(p.riskLevel)}
      </li>`,
    )}
  </ul>`;
}

function added(installed) {
  const before = new Map(installed.permissions.map((p) => [p.code, p.riskLevel]));
  return installed.pendingPermissions.filter((p) => !before.has(p.code) || before.get(p.code) < p.riskLevel);
}

function CatalogItem({ skill, installed, onInstalled, onRemoved }) {
  const action = useAction();
  const id = `catalog-${skill.skillId}`;
  const install = () => action.run(async () => onInstalled(await post("/installs", { skillId: skill.skillId })));
  const accept = () =>
    action.run(async () =>
      onInstalled(await post(`/installs/${encodeURIComponent(skill.skillId)}/accept`, { version: installed.pendingVersion })),
    );
  const uninstall = async () => {
    const ok = await confirmAction({
      title: t("catalog.uninstallTitle"),
      body: t("catalog.uninstallBody", { skill: skill.skillId }),
      confirm: t("catalog.uninstall"),
    });
    if (!ok) return;
    await action.run(async () => {
      await del(`/installs/${encodeURIComponent(skill.skillId)}`);
      onRemoved(skill.skillId);
    });
  };
  return html`<li class="card" data-catalog-skill=${skill.skillId} aria-labelledby=${`${id}-title`}>
    <h3 id=${`${id}-title`}><code>${skill.skillId}</code> <${TrustBadge} level=${skill.trustLevel} /></h3>
    <p class="meta">${t("catalog.publisherText")}</p>
    <blockquote class="quoted" data-user-content><p>${skill.displayName}</p><p>${skill.description}</p></blockquote>
    <dl class="facts">
      <dt>${t("catalog.publisher")}</dt><dd><code>${skill.publisherId}</code></dd>
      <dt>${t("catalog.latest")}</dt><dd><code>${skill.version}</code></dd>
      <dt>${t("catalog.asks")}</dt><dd><${Permissions} permissions=${skill.permissions} testid="catalog-permissions" /></dd>
    </dl>
    ${installed
      ? html`<p class="meta" data-testid="installed">
            ${t("catalog.installed", { version: installed.version })}
            ${installed.canary ? html` · <span class="tag">${t("catalog.canary")}</span>` : ""}
          </p>
          ${installed.pendingVersion &&
          html`<div class="notice" role="status" data-testid="pending-upgrade">
            <p>${t("catalog.pending", { version: installed.pendingVersion, current: installed.version })}</p>
            <p>${t("catalog.pendingAdds")}</p>
            <${Permissions} permissions=${added(installed)} testid="pending-permissions" />
            <p class="hint">${t("catalog.consentHint")}</p>
            <button type="button" disabled=${action.busy} onClick=${accept}>${t("catalog.accept", { version: installed.pendingVersion })}</button>
          </div>`}
          <div class="row actions">
            <a href=${`#/permissions?skill=${encodeURIComponent(skill.skillId)}`}>${t("catalog.grant")}</a>
            <button type="button" class="danger" disabled=${action.busy} onClick=${uninstall}>${t("catalog.uninstall")}</button>
          </div>`
      : html`<p class="hint">${t("catalog.grantsNothing")}</p>
          <div class="row actions">
            <button type="button" disabled=${action.busy} onClick=${install} aria-describedby=${`${id}-title`}>${t("catalog.install")}</button>
          </div>`}
    <${ErrorBox} error=${action.error} />
  </li>`;
}

export function Catalog({ onChanged }) {
  const catalog = useLoad(() => listAll("/catalog"), []);
  const installs = useLoad(() => listAll("/installs"), []);
  const byId = new Map((installs.data || []).map((i) => [i.skillId, i]));
  const installed = (item) => {
    installs.setData((items) => [...items.filter((i) => i.skillId !== item.skillId), item]);
    onChanged();
  };
  const removed = (skillId) => {
    installs.setData((items) => items.filter((i) => i.skillId !== skillId));
    onChanged();
  };
  return html`<section aria-labelledby="catalog-title" data-testid="skill-catalog">
    <h2 id="catalog-title">${t("catalog.title")}</h2>
    <p class="hint">${t("catalog.intro")}</p>
    <${Loaded} state=${installs}>
      ${() => html`<${Loaded} state=${catalog}>
        ${(items) =>
          items.length === 0
            ? html`<${Empty} text=${t("catalog.empty")} />`
            : html`<ul class="plain">${items.map(
                (skill) => html`<${CatalogItem} key=${skill.skillId} skill=${skill} installed=${byId.get(skill.skillId)}
                  onInstalled=${installed} onRemoved=${removed} />`,
              )}</ul>`}
      <//>`}
    <//>
  </section>`;
}
