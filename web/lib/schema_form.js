// A form built from a JSON Schema: one field per property of an object schema, by type (text, number, integer,
// boolean, a choice for an enum, JSON for anything else), with the schema's default, title or description; and
// the values typed turned back into the JSON value the schema describes ({arguments}) or, before anything is
// sent, the refusals at their fields ({errors}). A schema without properties is edited as JSON as a whole
// (fieldsOf answers null; argumentsOf reads the raw text). Nothing here knows where the schema comes from.
import { html } from "./html.js";
import { register, t } from "./i18n.js";
import { FieldError, invalidProps } from "./forms.js";

register({
  zh: {
    "schemaForm.required": "（必填）",
    "schemaForm.jsonField": "JSON",
    "schemaForm.jsonHint": "以 JSON 填写（对象或数组）。",
    "schemaForm.badJson": "不是有效的 JSON：{message}",
    "schemaForm.notObject": "参数必须是一个 JSON 对象。",
    "schemaForm.notNumber": "请填写数字。",
    "schemaForm.notInteger": "请填写整数。",
    "schemaForm.missing": "这是必填项。",
    "schemaForm.choose": "（请选择）",
  },
  en: {
    "schemaForm.required": "(required)",
    "schemaForm.jsonField": "JSON",
    "schemaForm.jsonHint": "Write it as JSON (an object or an array).",
    "schemaForm.badJson": "Not valid JSON: {message}",
    "schemaForm.notObject": "The arguments must be a JSON object.",
    "schemaForm.notNumber": "Enter a number.",
    "schemaForm.notInteger": "Enter a whole number.",
    "schemaForm.missing": "This is required.",
    "schemaForm.choose": "(choose)",
  },
});

function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== "null") : schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  if (["string", "number", "integer", "boolean"].includes(type)) return type;
  return "json";
}

// The fields of an object schema, or null when the whole arguments are edited as JSON.
export function fieldsOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  const properties = schema.properties;
  if (!properties || typeof properties !== "object" || Object.keys(properties).length === 0) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties).map(([name, prop]) => ({
    name,
    schema: prop && typeof prop === "object" ? prop : {},
    kind: typeOf(prop && typeof prop === "object" ? prop : {}),
    required: required.has(name),
  }));
}

function initialValue(field) {
  if (field.kind === "boolean") return field.schema.default === true;
  if (field.schema.default !== undefined) {
    return field.kind === "json" ? JSON.stringify(field.schema.default, null, 2) : String(field.schema.default);
  }
  return "";
}

// The values the form starts with: the schema's defaults, else empty (a boolean: false).
export function initialValues(fields) {
  return Object.fromEntries((fields || []).map((field) => [field.name, initialValue(field)]));
}

// {arguments} or {errors: {field: message}} from the form's values (the key "" is the raw JSON's).
export function argumentsOf(fields, values, raw) {
  if (!fields) {
    try {
      const parsed = JSON.parse(raw || "{}");
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { errors: { "": t("schemaForm.notObject") } };
      return { arguments: parsed };
    } catch (failure) {
      return { errors: { "": t("schemaForm.badJson", { message: failure.message }) } };
    }
  }
  const out = {};
  const errors = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === "boolean") {
      out[field.name] = Boolean(value);
      continue;
    }
    if (value === "" || value === undefined) {
      if (field.required) errors[field.name] = t("schemaForm.missing");
      continue;
    }
    if (field.kind === "number" || field.kind === "integer") {
      const number = Number(value);
      if (!Number.isFinite(number)) errors[field.name] = t("schemaForm.notNumber");
      else if (field.kind === "integer" && !Number.isInteger(number)) errors[field.name] = t("schemaForm.notInteger");
      else out[field.name] = number;
    } else if (field.kind === "enum") {
      const match = field.schema.enum.find((option) => String(option) === value);
      out[field.name] = match === undefined ? value : match;
    } else if (field.kind === "json") {
      try {
        out[field.name] = JSON.parse(value);
      } catch (failure) {
        errors[field.name] = t("schemaForm.badJson", { message: failure.message });
      }
    } else {
      out[field.name] = value;
    }
  }
  return Object.keys(errors).length ? { errors } : { arguments: out };
}

// One field, labelled with the property's name (a mark and words when required), with its hint and error.
export function SchemaField({ field, id, value, onValue, error }) {
  const description = field.schema.description || field.schema.title;
  const hint = description || field.kind === "json" ? `${id}-hint` : undefined;
  const props = invalidProps(error ? [error] : null, id, hint);
  const label = html`${field.name}${field.required && html` <span class="required" aria-hidden="true">*</span><span class="visually-hidden">${t("schemaForm.required")}</span>`}`;
  let input;
  if (field.kind === "boolean") {
    return html`<label class="check" for=${id}>
        <input type="checkbox" id=${id} checked=${value} onChange=${(e) => onValue(e.currentTarget.checked)} ...${props} />
        ${label}
      </label>
      ${hint && html`<p class="hint" id=${hint}>${description}</p>`}
      <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
  }
  if (field.kind === "enum") {
    input = html`<select id=${id} value=${value} onChange=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props}>
      <option value="">${t("schemaForm.choose")}</option>
      ${field.schema.enum.map((option) => html`<option value=${String(option)}>${String(option)}</option>`)}
    </select>`;
  } else if (field.kind === "json") {
    input = html`<textarea id=${id} class="code" value=${value} onInput=${(e) => onValue(e.currentTarget.value)} spellcheck=${false}
      aria-required=${field.required ? "true" : undefined} ...${props}></textarea>`;
  } else {
    const numeric = field.kind === "number" || field.kind === "integer";
    input = html`<input id=${id} type=${numeric ? "number" : "text"} step=${field.kind === "integer" ? "1" : numeric ? "any" : undefined}
      inputmode=${field.kind === "integer" ? "numeric" : numeric ? "decimal" : undefined} value=${value}
      onInput=${(e) => onValue(e.currentTarget.value)} aria-required=${field.required ? "true" : undefined} ...${props} />`;
  }
  return html`<label for=${id}>${label}${field.kind === "json" && html` <span class="meta">(${t("schemaForm.jsonField")})</span>`}</label>
    ${input}
    ${hint && html`<p class="hint" id=${hint}>${[description, field.kind === "json" && t("schemaForm.jsonHint")].filter(Boolean).join(" ")}</p>`}
    <${FieldError} id=${`${id}-error`} messages=${error ? [error] : null} />`;
}
