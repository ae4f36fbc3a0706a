// The agent's Markdown, rendered for the chat (issue 24): parsed by the npm package `streaming-markdown`
// (vendored under /skills/vendor/, web/vendor.json, named in index.html's import map), whose parser hands us tokens, never HTML. We build Preact
// elements from those tokens through an allow-list, so nothing in a reply is ever parsed as HTML:
// - each token kind maps to one fixed element (headings become bold paragraphs, so a reply cannot break the
//   page's heading outline); an unknown kind is a plain span;
// - text is always text (Preact escapes it): `<b>`, `<script>` and the like in a reply show as typed;
// - the only attributes set are a link's `href`, and only an absolute http(s) or mailto URL (anything else,
//   `javascript:` among them, leaves the link text without a link), and an ordered list's numeric `start`;
// - images are never loaded: an image is a link to its address (when allowed) with its alt text.
import { h } from "preact";
import * as smd from "streaming-markdown";

const ELEMENTS = {
  [smd.PARAGRAPH]: "p",
  [smd.CODE_BLOCK]: "pre",
  [smd.CODE_FENCE]: "pre",
  [smd.CODE_INLINE]: "code",
  [smd.ITALIC_AST]: "em",
  [smd.ITALIC_UND]: "em",
  [smd.STRONG_AST]: "strong",
  [smd.STRONG_UND]: "strong",
  [smd.STRIKE]: "del",
  [smd.BLOCKQUOTE]: "blockquote",
  [smd.LINE_BREAK]: "br",
  [smd.RULE]: "hr",
  [smd.LIST_UNORDERED]: "ul",
  [smd.LIST_ORDERED]: "ol",
  [smd.LIST_ITEM]: "li",
  [smd.TABLE]: "table",
  [smd.TABLE_ROW]: "tr",
  [smd.TABLE_CELL]: "td",
  [smd.EQUATION_BLOCK]: "pre",
  [smd.EQUATION_INLINE]: "code",
};
const HEADINGS = new Set([smd.HEADING_1, smd.HEADING_2, smd.HEADING_3, smd.HEADING_4, smd.HEADING_5, smd.HEADING_6]);
const LINKS = new Set([smd.LINK, smd.RAW_URL, smd.IMAGE]);
const SCHEMES = new Set(["http:", "https:", "mailto:"]);

// An address a reply may link to: absolute, and http, https or mailto.
export function safeHref(value) {
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (!/^(https?:\/\/|mailto:)/i.test(text)) return null;
  try {
    const url = new URL(text);
    return SCHEMES.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

// CommonMark never opens emphasis with an underscore inside a word (`snake_case_name`, `test_flow.add`), but the
// parser does: such underscores are escaped first, outside code spans and fenced blocks (where a backslash would
// show).
const FENCE = /^\s{0,3}(```|~~~)/;
const CODE_SPAN = /(`+)[^`]*?\1/g;
const INTRAWORD_UNDERSCORE = /(?<=[\p{L}\p{N}])_+(?=[\p{L}\p{N}])/gu;
const escaped = (run) => "\\_".repeat(run.length);

export function escapeIntraword(text) {
  let fenced = false;
  return text
    .split("\n")
    .map((line) => {
      if (FENCE.test(line)) {
        fenced = !fenced;
        return line;
      }
      if (fenced) return line;
      let out = "";
      let at = 0;
      for (const span of line.matchAll(CODE_SPAN)) {
        out += line.slice(at, span.index).replace(INTRAWORD_UNDERSCORE, escaped) + span[0];
        at = span.index + span[0].length;
      }
      return out + line.slice(at).replace(INTRAWORD_UNDERSCORE, escaped);
    })
    .join("\n");
}

// The token tree of a text: [{type, attrs, children: [node | string]}].
function parse(text) {
  const root = { type: 0, attrs: {}, children: [] };
  const open = [root];
  const renderer = {
    data: null,
    add_token(_, type) {
      const node = { type, attrs: {}, children: [] };
      open[open.length - 1].children.push(node);
      open.push(node);
    },
    end_token() {
      if (open.length > 1) open.pop();
    },
    add_text(_, chunk) {
      const children = open[open.length - 1].children;
      const last = children.length - 1;
      if (last >= 0 && typeof children[last] === "string") children[last] += chunk;
      else children.push(chunk);
    },
    set_attr(_, attr, value) {
      open[open.length - 1].attrs[attr] = value;
    },
  };
  const reader = smd.parser(renderer);
  smd.parser_write(reader, escapeIntraword(text));
  smd.parser_end(reader);
  return root.children;
}

function element(node, key) {
  const children = node.children.map((child, i) => (typeof child === "string" ? child : element(child, i)));
  if (HEADINGS.has(node.type)) return h("p", { key, class: "md-heading" }, h("strong", null, children));
  if (LINKS.has(node.type)) {
    const href = safeHref(node.type === smd.IMAGE ? node.attrs[smd.SRC] : node.attrs[smd.HREF]);
    return href ? h("a", { key, href, rel: "noopener noreferrer nofollow", target: "_blank" }, children) : h("span", { key }, children);
  }
  if (node.type === smd.CHECKBOX) return h("span", { key }, node.attrs[smd.CHECKED] ? "☑ " : "☐ ");
  if (node.type === smd.CODE_BLOCK || node.type === smd.CODE_FENCE || node.type === smd.EQUATION_BLOCK) {
    return h("pre", { key, tabindex: "0" }, h("code", null, children));
  }
  if (node.type === smd.TABLE) return h("div", { key, class: "md-table" }, h("table", null, h("tbody", null, children)));
  if (node.type === smd.LIST_ORDERED) {
    const start = Number.parseInt(node.attrs[smd.START], 10);
    return h("ol", { key, start: Number.isFinite(start) && start > 0 ? start : undefined }, children);
  }
  const tag = ELEMENTS[node.type];
  if (tag === "br" || tag === "hr") return h(tag, { key });
  return h(tag || "span", { key }, children);
}

// Preact elements for a Markdown text (an array: place it inside a container).
export function markdown(text) {
  return parse(String(text ?? "")).map((node, i) => (typeof node === "string" ? node : element(node, i)));
}
