// The search view: the form, the hits with their score taken apart and their span shown in
// the document's original text; Enter searches, ↑/↓ move between hits, Enter opens one.
import { api, clear, fixed, h, route, text } from "./dom.js";
import { page } from "./state.js";

const form = document.getElementById("search-form");
const field = (name) => document.getElementById(name);
const list = document.getElementById("hits");
let shown = ""; // the route of the search on screen

export function setUpSearch() {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = formParams();
    const target = route("search", params);
    if (location.hash !== target) history.pushState(null, "", target);
    run(params);
  });
  field("query").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && list.children.length) {
      event.preventDefault();
      select(0);
    }
  });
  list.addEventListener("keydown", (event) => {
    const at = [...list.children].indexOf(document.activeElement);
    if (at < 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = at + (event.key === "ArrowDown" ? 1 : -1);
      if (next < 0) field("query").focus();
      else select(Math.min(next, list.children.length - 1));
    } else if (event.key === "Enter" && event.target === document.activeElement) {
      event.preventDefault();
      document.activeElement.querySelector("a.key").click();
    }
  });
}

export async function showSearch(params) {
  if (!params.get("q")) {
    field("query").focus();
    return;
  }
  fillForm(params);
  if (route("search", Object.fromEntries(params)) !== shown) await run(Object.fromEntries(params));
}

function formParams() {
  return {
    index: page.index(),
    q: field("query").value,
    mode: field("mode").value,
    k: field("k").value,
    lang: field("language").value.trim(),
    filters: field("filters").value.trim(),
    rerank: field("rerank").checked ? "1" : "",
  };
}

function fillForm(params) {
  field("query").value = params.get("q") || "";
  field("mode").value = params.get("mode") || "hybrid";
  field("k").value = params.get("k") || "10";
  field("language").value = params.get("lang") || "";
  field("filters").value = params.get("filters") || "";
  field("rerank").checked = params.get("rerank") === "1";
}

// "language=ar; source=*.md" → {language: "ar", source: "*.md"}
export function parseFilters(spec) {
  const filters = {};
  for (const item of spec.split(";").map((each) => each.trim()).filter(Boolean)) {
    const at = item.indexOf("=");
    if (at < 1) throw new Error(`filter ${JSON.stringify(item)}: write KEY=VALUE, e.g. language=ar`);
    filters[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return Object.keys(filters).length ? filters : null;
}

async function run(params) {
  shown = route("search", params);
  const language = params.lang && params.lang !== "auto" ? params.lang : null;
  let request;
  try {
    request = {
      query: params.q,
      index: params.index || page.index(),
      k: Number(params.k || 10),
      mode: params.mode || "hybrid",
      language,
      filters: parseFilters(params.filters || ""),
      rerank: params.rerank === "1",
      explain: true,
    };
  } catch (error) {
    page.say(error.message, "error");
    return;
  }
  page.say("searching…");
  list.setAttribute("aria-busy", "true");
  const started = performance.now();
  try {
    const answer = await api("search", request);
    render(answer);
    const ms = performance.now() - started;
    list.dataset.ms = ms.toFixed(1);
    const count = answer.hits.length;
    page.say(`${count} hit${count === 1 ? "" : "s"} in ${ms.toFixed(0)} ms · ${answer.index}, `
      + `generation ${answer.generation}`);
  } catch (error) {
    clear(list);
    page.say(error.message, "error");
  } finally {
    list.removeAttribute("aria-busy");
    list.dataset.query = params.q;
  }
}

function render(answer) {
  clear(list);
  answer.hits.forEach((hit, at) => {
    const why = (answer.explanations || [])[at] || {};
    const link = route("document", { index: answer.index, key: hit.key, start: hit.start, end: hit.end });
    const copies = (hit.duplicates || []).length;
    list.append(h("li", {
      class: "hit", tabindex: at === 0 ? 0 : -1, "aria-selected": "false",
      dataset: { rank: at + 1, start: hit.start, end: hit.end, key: hit.key },
      on: { click: () => select(at, false) },
    },
      h("div", { class: "hit-head" },
        h("span", { class: "rank" }, `#${at + 1}`),
        h("span", { class: "score", title: "score: the order within this query" }, fixed(hit.score)),
        h("span", { class: "relevance", title: relevanceTitle(why) }, `relevance ${fixed(hit.relevance, 2)}`),
        contribution(why),
        h("a", { class: "key", dir: "auto", href: link }, hit.key),
        hit.title ? text("span", hit.title, { class: "title" }) : null,
        h("span", { class: "language", title: "language" }, hit.language),
        copies ? h("span", { class: "copies", title: hit.duplicates.join("\n") },
          `+${copies} cop${copies === 1 ? "y" : "ies"}`) : null),
      h("p", { class: "context", dir: "auto" },
        why.before ? h("span", { class: "around" }, `…${why.before}`) : null,
        h("mark", { class: "span" }, hit.text),
        why.after ? h("span", { class: "around" }, `${why.after}…`) : null)));
  });
}

// What a hit's relevance (in [0, 1], comparable across queries) was calibrated from.
function relevanceTitle(why) {
  const evidence = [
    why.cosine === null || why.cosine === undefined ? null : `cosine ${fixed(why.cosine, 3)}`,
    why.coverage === null || why.coverage === undefined ? null : `coverage ${fixed(why.coverage, 3)}`,
  ].filter(Boolean);
  return `relevance: comparable across queries (0.5 keeps what is likely relevant)${evidence.length ? ` · from ${evidence.join(", ")}` : ""}`;
}

// The dense and sparse parts of the first-stage score: a bar and the numbers.
function contribution(why) {
  if (why.first_stage === undefined) return null;
  const dense = why.dense ?? 0;
  const sparse = why.sparse ?? 0;
  const total = dense + sparse;
  const bar = h("span", { class: "bar", "aria-hidden": "true" },
    h("span", { class: "part-dense" }), h("span", { class: "part-sparse" }));
  bar.children[0].style.width = `${total > 0 ? (100 * dense) / total : 0}%`;
  bar.children[1].style.width = `${total > 0 ? (100 * sparse) / total : 0}%`;
  const list = (name, part, score, rank) => part === null || part === undefined ? null
    : h("span", { class: `part ${name}` }, `${name} ${fixed(part)}`,
      rank ? ` (#${rank}, ${name === "dense" ? "cos" : "bm25"} ${fixed(score, 3)})` : " (not in list)");
  const evidence = why.fusion_evidence ? Object.entries(why.fusion_evidence)
    .map(([name, value]) => `${name} ${fixed(value, 2)}`).join(", ") : "";
  return h("span", { class: "parts", title: `${why.fusion} fusion` }, bar,
    why.fusion_choice ? h("span", { class: "part fusion-choice", title: evidence },
      `fusion: ${why.fusion_choice} (${evidence})`) : null,
    list("dense", why.dense, why.dense_score, why.dense_rank),
    list("sparse", why.sparse, why.sparse_score, why.sparse_rank),
    why.evidence ? h("span", { class: "part" }, `document evidence +${fixed(why.evidence)}`) : null,
    why.phrase ? h("span", { class: "part" }, `phrase +${fixed(why.phrase)}`) : null,
    why.listing ? h("span", { class: "part", title: "a table of contents keeps part of its score" },
      `listing ${fixed(why.listing)}`) : null,
    why.reranked ? h("span", { class: "part" }, `reranked · first stage ${fixed(why.first_stage)}`) : null);
}

function select(at, focus = true) {
  [...list.children].forEach((item, index) => {
    item.setAttribute("aria-selected", String(index === at));
    item.tabIndex = index === at ? 0 : -1;
  });
  const item = list.children[at];
  if (focus) item.focus();
  item.scrollIntoView({ block: "nearest" });
}
