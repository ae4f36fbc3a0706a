// What the hosted section's parts share: an endpoint's API path, DOM ids, a refusal's reason in words.
import { t } from "../../lib/i18n.js";
import { limits } from "../../lib/limits.js";

export const endpointPath = (endpoint) => `/hosted-endpoints/${encodeURIComponent(endpoint.endpointId)}`;

export function domId(...parts) {
  return parts.join("-").replace(/[^A-Za-z0-9_-]/g, "_");
}

export function reasonText(reason) {
  const key = `hosted.reason.${reason}`;
  const text = t(key, { max: limits().endpointUrl });
  return text === key ? t("hosted.reason.other", { reason }) : text;
}

// "/url", "url", "body.url", "arguments/a" -> the first segment a field is named by.
export function fieldOf(path) {
  const parts = String(path ?? "").replace(/^\//, "").split(/[./]/).filter((p) => p && p !== "body");
  return parts[0] || "";
}
