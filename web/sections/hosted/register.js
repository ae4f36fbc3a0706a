// Registering an endpoint: name, display name, URL and token (the token leaves the page once sent).
import { useState } from "preact/hooks";
import { post } from "../../lib/api.js";
import { fieldErrors, FieldError, invalidProps, useFocusFirstError } from "../../lib/forms.js";
import { html } from "../../lib/html.js";
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";
import { ErrorBox, useAction, useNotice } from "../../lib/ui.js";
import { fieldOf, reasonText } from "./common.js";

const FIELDS = ["name", "displayName", "url", "authToken"];

// {field: [message]} for the registration form; what no field owns is at "" (shown under the form).
function registerErrors(error) {
  if (!error) return {};
  if (error.code === "url_not_allowed") return { url: [reasonText(error.details.reason)] };
  if (error.code === "endpoint_name_taken") return { name: [t("hosted.nameTaken")] };
  if (error.code !== "validation_error") return {};
  return fieldErrors(error, {
    key: (path) => {
      const field = fieldOf(path);
      return FIELDS.includes(field) ? field : "";
    },
  });
}

export function RegisterForm({ count, onRegistered }) {
  const [form, setForm] = useState({ name: "", displayName: "", url: "", authToken: "" });
  const [notice, setNotice] = useNotice();
  const action = useAction();
  const errors = registerErrors(action.error);
  const fieldsOwn = Object.keys(errors).some((k) => k !== "");
  const max = limits();
  const full = count >= max.hostedEndpoints;
  const set = (key) => (e) => setForm({ ...form, [key]: e.currentTarget.value });

  const submit = (e) => {
    e.preventDefault();
    setNotice("");
    action.run(async () => {
      const body = { name: form.name, displayName: form.displayName, url: form.url };
      if (form.authToken) body.authToken = form.authToken;
      const created = await post("/hosted-endpoints", body);
      // The token leaves the page's memory as soon as the server has it; the URL too.
      setForm({ name: "", displayName: "", url: "", authToken: "" });
      setNotice(t("hosted.registered", { name: created.displayName, n: created.snapshot.tools.length }));
      onRegistered(created);
    });
  };
  // A refusal moves the focus to the first field it names, where its reason is read.
  useFocusFirstError(action.error, errors, FIELDS, (key) => `hosted-${key}`);

  const field = (key, input) => html`${input}
    <${FieldError} id=${`hosted-${key}-error`} messages=${errors[key]} />`;

  const otherError = action.error && !fieldsOwn ? action.error : null;
  const quotaError = action.error && action.error.code === "quota_exceeded";

  return html`<form class="card" onSubmit=${submit} novalidate aria-labelledby="hosted-register-title" data-testid="register-form">
    <h2 id="hosted-register-title">${t("hosted.register")}</h2>
    <p class="hint" data-testid="quota">${t("hosted.quota", { n: count, max: max.hostedEndpoints })}</p>
    <label for="hosted-name">${t("hosted.name")}</label>
    ${field("name", html`<input id="hosted-name" value=${form.name} onInput=${set("name")} required autocomplete="off"
      spellcheck=${false} maxlength=${max.endpointName} ...${invalidProps(errors.name, "hosted-name", "hosted-name-hint")} />`)}
    <p class="hint" id="hosted-name-hint">${t("hosted.nameHint", { max: max.endpointName })}</p>
    <label for="hosted-displayName">${t("hosted.displayName")}</label>
    ${field("displayName", html`<input id="hosted-displayName" value=${form.displayName} onInput=${set("displayName")}
      required maxlength=${max.endpointDisplayName} ...${invalidProps(errors.displayName, "hosted-displayName")} />`)}
    <label for="hosted-url">${t("hosted.url")}</label>
    ${field("url", html`<input id="hosted-url" type="url" value=${form.url} onInput=${set("url")} required autocomplete="off"
      spellcheck=${false} maxlength=${max.endpointUrl} placeholder="https://" size="60"
      ...${invalidProps(errors.url, "hosted-url", "hosted-url-hint")} />`)}
    <p class="hint" id="hosted-url-hint">${t("hosted.urlHint")}</p>
    <label for="hosted-authToken">${t("hosted.token")}</label>
    ${field("authToken", html`<input id="hosted-authToken" type="password" value=${form.authToken} onInput=${set("authToken")}
      autocomplete="new-password" maxlength=${max.endpointToken} ...${invalidProps(errors.authToken, "hosted-authToken", "hosted-token-hint")} />`)}
    <p class="hint" id="hosted-token-hint">${t("hosted.tokenHint")}</p>
    ${fieldsOwn && html`<p class="field-error">${t("hosted.errorsBelow")}</p>`}
    ${errors[""] && html`<${FieldError} id="hosted-form-error" messages=${errors[""]} />`}
    ${quotaError && html`<p class="notice">${t("hosted.quotaFull", { max: max.hostedEndpoints })}</p>`}
    <${ErrorBox} error=${otherError} />
    <div class="row actions">
      <button type="submit" disabled=${action.busy || full} aria-describedby=${full ? "hosted-full" : undefined}>
        ${action.busy ? t("hosted.registering") : t("hosted.registerSubmit")}
      </button>
      ${full && html`<span class="hint" id="hosted-full">${t("hosted.quotaFull", { max: max.hostedEndpoints })}</span>`}
    </div>
    <p class="hint" role="status" aria-live="polite" data-testid="register-notice">${notice}</p>
  </form>`;
}
