// The Skills page shell: sign-in, the profile and agents every section shares, the navigation bar,
// the language switch, and the section shown (loaded on first use). Sections live in sections/.
import { render } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, listAll, put } from "./lib/api.js";
import { claims, completeSignIn, loadConfig, signIn, signOut, token } from "./lib/auth.js";
import { html } from "./lib/html.js";
import { lang, LANGUAGES, onLangChange, register, setLang, t } from "./lib/i18n.js";
import { setLimits } from "./lib/limits.js";
import { labelTables } from "./lib/stacked_tables.js";
import { browserZone, ErrorBox, Loading } from "./lib/ui.js";
import { ZoneSetting } from "./lib/zone.js";
import { SECTIONS } from "./sections/index.js";

register({
  zh: {
    "app.title": "Skills 管理",
    "app.skip": "跳到主要内容",
    "app.nav": "页面导航",
    "app.language": "语言",
    "app.signOut": "退出登录",
    "app.signedInAs": "当前用户",
    "app.admin": "管理员",
    "app.zone": "时区",
    "app.bootFailed": "页面无法加载。",
    "app.sectionFailed": "这一部分无法加载。",
  },
  en: {
    "app.title": "Skills",
    "app.skip": "Skip to the main content",
    "app.nav": "Sections",
    "app.language": "Language",
    "app.signOut": "Sign out",
    "app.signedInAs": "Signed in as",
    "app.admin": "admin",
    "app.zone": "Time zone",
    "app.bootFailed": "The page could not load.",
    "app.sectionFailed": "This section could not load.",
  },
});

const LANGUAGE_NAMES = { zh: "中文", en: "English" };

// "#/permissions?skill=x" -> {id: "permissions", params: URLSearchParams}
function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [id, query] = raw.split("?");
  const known = SECTIONS.some((section) => section.id === id);
  return { id: known ? id : SECTIONS[0].id, params: new URLSearchParams(query || ""), hash: location.hash };
}

// Listeners are attached in a layout effect, right after the first render, and read the state once more: a plain
// effect waits for the next frame, and a click on the navigation in between would change the hash unheard.
function useRoute() {
  const [route, setRoute] = useState(parseRoute);
  useLayoutEffect(() => {
    const changed = () => setRoute((old) => (old.hash === location.hash ? old : parseRoute()));
    addEventListener("hashchange", changed);
    changed();
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function useLanguage() {
  const [current, setCurrent] = useState(lang());
  useLayoutEffect(() => {
    setCurrent(lang());
    return onLangChange(setCurrent);
  }, []);
  return current;
}

// The user's profile (with the server's limits). The first load of a tab's session asks for it with PUT
// {"initialTimezone"}: it creates a new user's profile (in the browser's zone, with the default daily memory job)
// or answers an existing one unchanged, so a first sign-in makes no 404 (GET /rpc/me answers 404 before the first
// PUT). Later loads of the session only read it.
const PROFILE_SEEN_KEY = "skillcore.profileSeen";

async function loadProfile() {
  const who = (claims() || {}).sub || "";
  if (sessionStorage.getItem(PROFILE_SEEN_KEY) === who) {
    try {
      return await get("/me");
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  const profile = await put("/me", { initialTimezone: browserZone() });
  sessionStorage.setItem(PROFILE_SEEN_KEY, who);
  return profile;
}

function SectionView({ route, ctx }) {
  const [loaded, setLoaded] = useState({ id: null, module: null, error: null });
  useEffect(() => {
    const section = SECTIONS.find((s) => s.id === route.id);
    let live = true;
    section.load().then(
      (module) => live && setLoaded({ id: route.id, module, error: null }),
      (error) => live && setLoaded({ id: route.id, module: null, error }),
    );
    return () => {
      live = false;
    };
  }, [route.id]);
  if (loaded.id !== route.id) return html`<${Loading} />`;
  if (loaded.error) {
    return html`<${ErrorBox} error=${{ message: t("app.sectionFailed") }} onRetry=${() => location.reload()} />`;
  }
  const Section = loaded.module.default;
  return html`<${Section} ctx=${ctx} route=${route} />`;
}

function Shell({ profile: initialProfile, agents: initialAgents }) {
  const route = useRoute();
  const current = useLanguage();
  const [profile, setProfile] = useState(initialProfile);
  const [agents, setAgents] = useState(initialAgents);
  // Counts a section reports for its nav entry once it has loaded (pending approvals): none on the first load.
  const [counts, setCounts] = useState({});
  const main = useRef(null);
  const firstRender = useRef(true);
  const who = claims();

  useLayoutEffect(() => {
    // Moving between sections moves the focus to the new content (keyboard and screen reader users).
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    main.current && main.current.focus();
  }, [route.id]);

  const ctx = {
    profile,
    setProfile: (next) => {
      setLimits(next.limits);
      setProfile(next);
    },
    agents,
    reloadAgents: async () => setAgents(await listAll("/agents")),
    navigate: (hash) => {
      location.hash = hash;
    },
    lang: current,
    setNavCount: (id, n) => setCounts((old) => (old[id] === n ? old : { ...old, [id]: n })),
  };

  return html`
    <a class="skip" href="#main" onClick=${(e) => (e.preventDefault(), main.current.focus())}>${t("app.skip")}</a>
    <header class="top">
      <p class="brand">${t("app.title")}</p>
      <div class="who">
        <span>${t("app.signedInAs")} <strong data-testid="user">${who && who.sub}</strong></span>
        ${who && (who["cognito:groups"] || []).includes("admin") && html`<span class="badge">${t("app.admin")}</span>`}
        <${ZoneSetting} profile=${profile} onSaved=${ctx.setProfile} />
      </div>
      <div class="lang" role="group" aria-label=${t("app.language")}>
        ${LANGUAGES.map(
          (code) =>
            html`<button type="button" lang=${code === "zh" ? "zh-CN" : "en"} aria-pressed=${code === current ? "true" : "false"}
              onClick=${() => setLang(code)}>${LANGUAGE_NAMES[code]}</button>`,
        )}
      </div>
      <button type="button" class="quiet" onClick=${signOut}>${t("app.signOut")}</button>
    </header>
    <nav class="sections" aria-label=${t("app.nav")}>
      <ul>
        ${SECTIONS.filter((section) => !section.admin || (who && (who["cognito:groups"] || []).includes("admin"))).map(
          (section) =>
            html`<li><a href=${`#/${section.id}`} aria-current=${section.id === route.id ? "page" : undefined}>${t(`nav.${section.id}`)}${counts[section.id] > 0 &&
              html` <span class="badge" data-testid=${`nav-count-${section.id}`}><span aria-hidden="true">${counts[section.id]}</span><span class="visually-hidden">${t("nav.count", { n: counts[section.id] })}</span></span>`}</a></li>`,
        )}
      </ul>
    </nav>
    <main id="main" tabindex="-1" ref=${main}>
      <${SectionView} route=${route} ctx=${ctx} />
    </main>
  `;
}

async function boot() {
  const root = document.getElementById("app");
  try {
    await loadConfig();
    await completeSignIn();
    if (!token()) {
      await signIn();
      return;
    }
    const [profile, agents] = await Promise.all([loadProfile(), listAll("/agents")]);
    // The server's limits come with the profile: every section reads them from lib/limits.js.
    setLimits(profile.limits);
    root.textContent = "";
    labelTables(root);
    render(html`<${Shell} profile=${profile} agents=${agents} />`, root);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return; // already on the way to sign-in
    root.textContent = "";
    render(
      html`<main class="boot-failed"><h1>${t("app.bootFailed")}</h1><${ErrorBox} error=${error} onRetry=${() => location.reload()} /></main>`,
      root,
    );
  }
}

boot();
