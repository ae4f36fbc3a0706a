// Code tools (代码工具): the WebAssembly tools of the person's installed skills, each with the limits it runs under
// (fuel, memory, time, output, host calls), its host functions, and its recent outcomes from the person's own
// audit trail (codes, counts, times: never an input or an output). GET /rpc/code-tools.
import { get } from "../../lib/api.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { Empty, Loaded, formatTime, useLoad } from "../../lib/ui.js";

const number = (n) => n.toLocaleString("en-US");

function bytes(n) {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n >> 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n >> 10} KiB`;
  return `${number(n)} B`;
}

function CodeTool({ tool, zone }) {
  const id = `code-tool-${tool.skillId}-${tool.toolId}`;
  const limits = tool.limits;
  return html`<article class="card" aria-labelledby=${id} data-code-tool=${tool.toolId} data-skill=${tool.skillId}>
    <h3 id=${id}><code>${tool.toolId}</code> <span class="meta"><code>${tool.skillId}</code> · ${t("skills.version")} ${tool.version}</span></h3>
    <dl class="facts" data-testid="limits">
      <dt>${t("codeTools.fuel")}</dt><dd data-limit="fuel"><code>${number(limits.fuel)}</code></dd>
      <dt>${t("codeTools.memory")}</dt><dd data-limit="memory"><code>${bytes(limits.memoryBytes)}</code></dd>
      <dt>${t("codeTools.time")}</dt><dd data-limit="time"><code>${number(limits.timeoutMs)} ms</code></dd>
      <dt>${t("codeTools.output")}</dt><dd data-limit="output"><code>${bytes(limits.outputBytes)}</code></dd>
      <dt>${t("codeTools.hostCalls")}</dt><dd data-limit="hostCalls"><code>${number(limits.hostCalls)}</code></dd>
      <dt>${t("codeTools.hostFunctions")}</dt>
      <dd>${tool.hostFunctions.length === 0 ? t("codeTools.none") : tool.hostFunctions.map((f) => html`<code>${f}</code> `)}</dd>
      <dt>${t("codeTools.module")}</dt><dd>${t(tool.precompiled ? "codeTools.precompiled" : "codeTools.compiled")}</dd>
    </dl>
    <h4>${t("codeTools.outcomes")}</h4>
    ${tool.calls === 0
      ? html`<p class="meta" data-testid="no-calls">${t("codeTools.noCalls")}</p>`
      : html`<table data-testid="outcomes">
          <caption>${t("codeTools.outcomesCaption", { n: tool.calls })}</caption>
          <thead><tr><th scope="col">${t("codeTools.code")}</th><th scope="col">${t("codeTools.count")}</th></tr></thead>
          <tbody>${tool.outcomes.map(
            (o) => html`<tr data-outcome=${o.code}><td><code>${o.code}</code></td><td>${o.count}</td></tr>`,
          )}</tbody>
        </table>
        <ul class="plain" data-testid="recent" aria-label=${t("codeTools.recent")}>
          ${tool.recent.map((o) => html`<li><time datetime=${o.at}>${formatTime(o.at, zone)}</time> · <code>${o.code}</code></li>`)}
        </ul>`}
  </article>`;
}

export function CodeTools({ zone }) {
  const state = useLoad(() => get("/code-tools"), []);
  return html`<section aria-labelledby="code-tools-title" data-testid="code-tools">
    <h2 id="code-tools-title">${t("codeTools.title")}</h2>
    <p class="hint">${t("codeTools.intro")}</p>
    <${Loaded} state=${state}>
      ${(body) =>
        body.items.length === 0
          ? html`<${Empty} text=${t("codeTools.empty")} />`
          : body.items.map((tool) => html`<${CodeTool} key=${`${tool.skillId}/${tool.toolId}`} tool=${tool} zone=${zone} />`)}
    <//>
  </section>`;
}
