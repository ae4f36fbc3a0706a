// The server's refusals at their fields: JSON Pointer or validation paths as field keys, rule codes in words.
import { fieldText } from "../../lib/errors.js";
import { fieldErrors, invalidProps } from "../../lib/forms.js";
import { t } from "../../lib/i18n.js";

// A JSON Pointer ("/workflow/steps/0/instruction") or a validation path ("workflow.steps.0.localTool.instruction")
// as one key ("workflow.steps.0.instruction"). The validation path names the step's kind; the key does not.
export function fieldKey(path) {
  const text = String(path ?? "");
  const pointer = text.startsWith("/") || (text.includes("/") && !text.includes("."));
  const parts = pointer
    ? text.replace(/^\//, "").split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    : text.split(".");
  return parts.filter((p) => p !== "" && p !== "platformCapability" && p !== "localTool").join(".");
}

function ruleMessage(rule) {
  const key = `caps.rule.${rule}`;
  const text = t(key);
  return text === key ? t("caps.rule.other", { rule }) : text;
}

export function schemaMessage(keyword) {
  if (keyword === "maxDepth") return t("caps.schemaDepth");
  if (keyword === "maxNodes") return t("caps.schemaNodes");
  if (keyword === "maxBytes") return t("caps.schemaBytes");
  return t("caps.schemaKeyword", { keyword });
}

// {fieldKey: [message]} from an error envelope's details.errors (validation_error, unsafe_text, unknown_reference);
// a schema_not_allowed refusal is listed at the schema instead.
export function capabilityErrors(error) {
  if (error && error.code === "schema_not_allowed") return {};
  return fieldErrors(error, {
    key: fieldKey,
    message: (item) => {
      let message = item.type || item.message ? fieldText(item) : "";
      if (error.code === "unsafe_text") message = ruleMessage(item.rule);
      else if (error.code === "unknown_reference") message = t("caps.unknownRef", { ref: item.ref });
      return message || error.message;
    },
  });
}

// Props that tie the field `id` to its messages at `key` (aria-invalid, aria-describedby).
export const invalid = (errors, key, id, hint) => invalidProps(errors[key], id, hint);
