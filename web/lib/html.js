// One place that binds htm to Preact, so every module writes `html\`...\`` the same way.
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);
