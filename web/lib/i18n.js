// Chinese by default, English by the switch in the header; the choice is remembered in localStorage.
// Each section registers its own messages next to its code, so a new section brings its own words.
const STORAGE_KEY = "skillcore.lang";
export const LANGUAGES = ["zh", "en"];
const dictionaries = { zh: {}, en: {} };
const listeners = new Set();

function stored() {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return LANGUAGES.includes(value) ? value : "zh";
  } catch {
    return "zh";
  }
}

let current = stored();
document.documentElement.lang = current === "zh" ? "zh-CN" : "en";

export function register(messages) {
  for (const lang of LANGUAGES) Object.assign(dictionaries[lang], messages[lang] || {});
}

export function lang() {
  return current;
}

export function setLang(next) {
  if (!LANGUAGES.includes(next) || next === current) return;
  current = next;
  try {
    localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Private windows may refuse storage: the switch still works for this visit.
  }
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  for (const listener of listeners) listener(next);
}

export function onLangChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// t("jobs.count", {n: 3}) -> the message with {n} filled in; a missing key shows itself, never a blank.
export function t(key, vars) {
  const text = dictionaries[current][key] ?? dictionaries.zh[key] ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}
