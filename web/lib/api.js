// The page's only way to the server: the public /rpc JSON API with the bearer token, as any client.
// Errors arrive as the API's envelope and become ApiError (code and message shown, never a stack).
// A 401 at any time ends the session and sends the person to sign in again; so does a 403 `person_required`
// whose reason is `stale_sign_in` (a decision at L3 or above needs a sign-in in the last 15 minutes).
import { signIn, token } from "./auth.js";
import { errorText } from "./errors.js";
import { t } from "./i18n.js";

// `message` is the page's sentence for the code in the language shown (lib/errors.js), read each time; the
// server's own sentence stays in `serverMessage`. A message the page made itself (a network failure) is kept.
export class ApiError extends Error {
  constructor(status, code, serverMessage, details, own = false) {
    super();
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
    this.own = own;
    this.details = details || {};
  }

  get message() {
    return this.own ? this.serverMessage : errorText(this.code, this.details, this.serverMessage);
  }
}

export async function api(method, path, body) {
  const bearer = token();
  if (!bearer) {
    await signIn();
    throw new ApiError(401, "unauthenticated", t("error.signedOut"), {}, true);
  }
  const headers = { Authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers["Content-Type"] = "application/json; charset=utf-8";
  let response;
  try {
    response = await fetch(`/rpc${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", t("error.network"), {}, true);
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (response.ok) return data;
  const error = data && data.error;
  if (response.status === 401) {
    await signIn(t("error.sessionEnded"));
  } else if (response.status === 403 && error && error.code === "person_required"
             && error.details && error.details.reason === "stale_sign_in") {
    await signIn(t("error.signInAgain"), { fresh: true });
  }
  throw new ApiError(
    response.status,
    (error && error.code) || "internal",
    (error && error.message) || t("error.generic", { status: response.status }),
    error && error.details,
  );
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body ?? {});
export const patch = (path, body) => api("PATCH", path, body);
export const put = (path, body) => api("PUT", path, body);
export const del = (path) => api("DELETE", path);

// Every page of a list (up to `max` items): the sections show whole lists, which are small per user.
export async function listAll(path, max = 500) {
  const items = [];
  let cursor = null;
  do {
    const joiner = path.includes("?") ? "&" : "?";
    const page = await get(`${path}${joiner}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && items.length < max);
  return items;
}

// The first page only (newest first lists such as runs and audit events).
export async function firstPage(path, limit = 50) {
  const joiner = path.includes("?") ? "&" : "?";
  return (await get(`${path}${joiner}limit=${limit}`)).items;
}
