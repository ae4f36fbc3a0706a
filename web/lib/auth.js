// Sign-in. The token lives in this tab's session storage (never in a cookie: the API reads only the
// Authorization header, so no cookie could be replayed against it).
// - local stack: /skills/config.json says {"type": "local"}; /_local/login mints a local token.
// - AWS: {"type": "cognito", domain, clientId, redirectUri, logoutUri}: the managed login with the
//   authorization code flow and PKCE (S256); the code is exchanged here, in the browser, for the tokens.
const TOKEN_KEY = "skillcore.token";
const PKCE_KEY = "skillcore.pkce";
const NOTICE_KEY = "skillcore.notice";

let config = null;

export async function loadConfig() {
  const response = await fetch("/skills/config.json", { cache: "no-cache" });
  if (!response.ok) throw new Error(`config.json: ${response.status}`);
  config = (await response.json()).auth;
  return config;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// The claims are read for display only (user name, admin badge); the API checks the signature.
export function claims() {
  const value = token();
  if (!value) return null;
  try {
    const part = value.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0)));
    return JSON.parse(json);
  } catch {
    return null;
  }
}

// A notice to show on the sign-in page after a redirect (e.g. "your session ended").
export function takeNotice() {
  const notice = sessionStorage.getItem(NOTICE_KEY);
  sessionStorage.removeItem(NOTICE_KEY);
  return notice;
}

function here() {
  return location.pathname + location.search + location.hash;
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString(length) {
  return base64url(crypto.getRandomValues(new Uint8Array(length)));
}

async function challengeOf(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

// Once per page: sections load in parallel, so one ended session answers several requests with 401 at once, and
// a second navigation would abort the first (and, with Cognito, replace its PKCE state mid-flight).
let leaving = null;

// `fresh`: the person must sign in anew (the managed login's `prompt=login`), not be let through by a session it
// still holds: a decision at L3 or above needs a recent `auth_time`.
export function signIn(notice, { fresh = false } = {}) {
  if (!leaving) {
    leaving = leave(notice, fresh).catch((error) => {
      leaving = null; // no navigation started (the config did not load): a later call may try again
      throw error;
    });
  }
  return leaving;
}

async function leave(notice, fresh) {
  if (notice) sessionStorage.setItem(NOTICE_KEY, notice);
  sessionStorage.removeItem(TOKEN_KEY);
  if (!config) await loadConfig();
  if (config.type === "local") {
    location.assign(`${config.loginUrl}?next=${encodeURIComponent(here())}`);
    return;
  }
  const verifier = randomString(48);
  const state = randomString(24);
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state, next: location.hash }));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    scope: "openid email",
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256",
  });
  if (fresh) query.set("prompt", "login");
  location.assign(`${config.domain}/oauth2/authorize?${query}`);
}

// Back from the managed login with ?code=&state=: check the state, exchange the code with the verifier.
export async function completeSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has("code") && !params.has("error")) return false;
  const pending = JSON.parse(sessionStorage.getItem(PKCE_KEY) || "null");
  sessionStorage.removeItem(PKCE_KEY);
  history.replaceState(null, "", location.pathname + (pending?.next || ""));
  if (params.has("error")) throw new Error(params.get("error_description") || params.get("error"));
  if (!pending || pending.state !== params.get("state")) throw new Error("sign-in state mismatch");
  if (!config) await loadConfig();
  const response = await fetch(`${config.domain}/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: config.clientId,
      code: params.get("code"),
      redirect_uri: config.redirectUri,
      code_verifier: pending.verifier,
    }),
  });
  // Cognito answers a refused exchange with 400 {"error": "invalid_grant"} (a used or expired code, a
  // verifier that does not match the challenge): show that code, not only the status.
  const tokens = await response.json().catch(() => ({}));
  if (!response.ok || !tokens.access_token) {
    throw new Error(`token exchange: ${tokens.error || response.status}`);
  }
  // The access token: API Gateway's JWT authorizer checks its client_id against the app client.
  sessionStorage.setItem(TOKEN_KEY, tokens.access_token);
  return true;
}

export async function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  if (!config) await loadConfig();
  if (config.type === "local") {
    location.assign(config.loginUrl);
    return;
  }
  const query = new URLSearchParams({ client_id: config.clientId, logout_uri: config.logoutUri });
  location.assign(`${config.domain}/logout?${query}`);
}
