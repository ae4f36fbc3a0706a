// Operators (运营): publishers and their keys, the review queue of checked releases, and the catalog of published
// skills (docs/packages.md). Shown in the navigation to the admin group only; the API refuses anyone else (403).
import "./messages.js";
import { useState } from "preact/hooks";
import { listAll } from "../../lib/api.js";
import { claims } from "../../lib/auth.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, Loaded, useLoad } from "../../lib/ui.js";
import { Publishers } from "./publishers.js";
import { Review } from "./review.js";

export function isOperator() {
  const who = claims();
  return Boolean(who && (who["cognito:groups"] || []).includes("admin"));
}

function Catalog({ state }) {
  return html`<section aria-labelledby="operators-catalog-title">
    <h2 id="operators-catalog-title">${t("operators.catalog")}</h2>
    <${Loaded} state=${state}>
      ${(items) =>
        items.length === 0
          ? html`<${Empty} text=${t("operators.catalogEmpty")} />`
          : html`<ul class="plain" data-testid="catalog">${items.map(
              (s) => html`<li data-skill=${s.skillId}><code>${s.skillId}</code> <code>${s.version}</code> · <code>${s.publisherId}</code> · ${t(`operators.trust.${s.trustLevel}`)}</li>`,
            )}</ul>`}
    <//>
  </section>`;
}

function Operators() {
  const [message, setMessage] = useState("");
  const publishers = useLoad(() => listAll("/admin/publishers"), []);
  const queue = useLoad(() => listAll("/admin/releases"), []);
  const catalog = useLoad(() => listAll("/catalog"), []);
  const decided = (release, text) => {
    queue.setData((items) => items.filter((r) => r.releaseId !== release.releaseId));
    if (release.state === "published") catalog.reload();
    setMessage(text);
  };
  return html`<section aria-labelledby="operators-title">
    <h1 id="operators-title">${t("operators.title")}</h1>
    <p class="hint">${t("operators.intro")}</p>
    <p class="hint" role="status" aria-live="polite" data-testid="operators-status">${message}</p>
    <${Review} state=${queue} onDecided=${decided} />
    <${Catalog} state=${catalog} />
    <${Publishers} state=${publishers} onMessage=${setMessage} />
  </section>`;
}

export default function OperatorsSection() {
  if (!isOperator()) {
    return html`<section aria-labelledby="operators-title"><h1 id="operators-title">${t("operators.title")}</h1>
      <p class="state empty">${t("operators.notAdmin")}</p></section>`;
  }
  return html`<${Operators} />`;
}
