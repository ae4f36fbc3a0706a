// Placeholder until this section is built.
import { html } from "../lib/html.js";
import { t } from "../lib/i18n.js";

export default function Section() {
  return html`<section><h1>${t("nav.memories")}</h1></section>`;
}
