// The page's one way to show an API refusal at its fields. A refusal (422 validation_error, or a rule's code
// such as unsafe_text) carries details.errors: [{path, message, ...}]. fieldErrors turns them into
// {key: [message]} by the form's own rule for keys and words; FieldError shows a field's messages under it;
// invalidProps ties the field to them (aria-invalid, aria-describedby). A form that moves the focus on a refusal
// (creating an agent, registering an endpoint, a try-it form's own checks) moves it to the first refused field
// in the form's order (not the server's), through focusAfterRender: right after the render that shows the
// messages, before the person's next key. A refusal that names none of the form's fields leaves the focus where
// it is (the form shows it in its error box).
import { useLayoutEffect } from "preact/hooks";
import { fieldText } from "./errors.js";
import { html } from "./html.js";
import { focusAfterRender } from "./ui.js";

// "body.title" -> "title": the last segment of a validation path, which names a flat form's field.
export function lastSegment(path) {
  return String(path || "").split(".").pop();
}

// A field error in the page's words (lib/errors.js); a rule's code without a type reads as the envelope's message.
const serverWords = (item, error) => (item.type || !item.message ? fieldText(item) : error.message);

// {key: [message]} from an error's details.errors, in the order the server gave them.
// - key(path, item): the field key the item belongs to; null or undefined drops the item.
// - message(item, error): the words shown (by default the page's for the validator's type, lib/errors.js).
// - firstOnly: keep one message per field (the first), for fields that show a single sentence.
// Anything that is not a refusal with a list of errors (a network failure, a 409) has no field errors.
export function fieldErrors(error, { key = lastSegment, message = serverWords, firstOnly = false } = {}) {
  const byField = {};
  if (!error || !error.details || !Array.isArray(error.details.errors)) return byField;
  for (const item of error.details.errors) {
    const field = key(item.path, item);
    if (field === null || field === undefined) continue;
    if (firstOnly && byField[field]) continue;
    (byField[field] = byField[field] || []).push(message(item, error));
  }
  return byField;
}

export const hasFieldErrors = (errors) => Object.keys(errors).length > 0;

// A field's messages, under it: `<p id="{field id}-error">`, which invalidProps names in aria-describedby.
export function FieldError({ id, messages }) {
  const list = typeof messages === "string" ? [messages] : messages;
  if (!list || list.length === 0) return null;
  return html`<p id=${id} class="field-error" data-testid="field-error">${list.join(" ")}</p>`;
}

// The attributes that tie the field `id` to its messages (and to its `hint`, an id or ids, always).
export function invalidProps(messages, id, hint) {
  const has = Boolean(messages && messages.length);
  return {
    "aria-invalid": has ? "true" : undefined,
    "aria-describedby": [hint, has && `${id}-error`].filter(Boolean).join(" ") || undefined,
  };
}

// Focuses the first key of `order` that `errors` names, at the element idOf(key).
export function focusFirstError(errors, order, idOf) {
  const first = order.find((key) => errors[key]);
  if (first !== undefined) focusAfterRender(idOf(first));
}

// The same, once per refusal: after the render that shows `error`'s messages (a layout effect on it).
export function useFocusFirstError(error, errors, order, idOf) {
  useLayoutEffect(() => focusFirstError(errors, order, idOf), [error]);
}
