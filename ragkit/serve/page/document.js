// The document view: the original text with its chunks as alternating bands, the chunker
// chosen and every candidate's metric scores, the matching key beside the original with the
// changed characters marked, and how the language was decided.
import { api, clear, fixed, h, route, table, text } from "./dom.js";
import { page } from "./state.js";

const view = document.getElementById("document-view");

export async function showDocument(params) {
  const index = params.get("index") || page.index();
  const key = params.get("key");
  if (!key) {
    await showList(index, params.get("glob") || "");
    return;
  }
  page.say("loading…");
  const shown = await api(`indexes/${encodeURIComponent(index)}/document?key=${encodeURIComponent(key)}`);
  clear(view).append(
    h("h2", { dir: "auto" }, shown.title || shown.key),
    h("dl", { class: "facts" },
      fact("key", text("span", shown.key)),
      fact("source", text("span", shown.source)),
      shown.document_id !== shown.key ? fact("id", text("span", shown.document_id)) : null,
      fact("language", languageDecision(shown.language)),
      Object.keys(shown.metadata).length
        ? fact("metadata", text("span", JSON.stringify(shown.metadata))) : null),
    chunkSection(shown, Number(params.get("start")), Number(params.get("end"))),
    chunkerSection(shown.chunking),
    normalizationSection(shown));
  page.say(`${shown.key} · ${shown.chunks.length} chunks · generation ${shown.generation}`);
  view.querySelector(".band.hit-band")?.scrollIntoView({ block: "center" });
}

async function showList(index, glob) {
  const query = glob ? `&glob=${encodeURIComponent(glob)}` : "";
  const found = await api(`indexes/${encodeURIComponent(index)}/documents?limit=200${query}`);
  const input = h("input", { type: "search", value: glob, placeholder: "key, source or glob", "aria-label": "documents" });
  const form = h("form", { class: "inline", on: { submit: (event) => {
    event.preventDefault();
    page.go("document", { glob: input.value.trim() });
  } } }, input, h("button", { type: "submit" }, "List"));
  clear(view).append(h("h2", {}, "Documents"), form, documentTable(index, found));
  page.say(`${found.total} document${found.total === 1 ? "" : "s"}${found.total > found.documents.length ? `, the first ${found.documents.length} shown` : ""}`);
}

export function documentTable(index, found) {
  return table(["key", "title", "language", "chunks", "characters"], found.documents.map((each) => [
    h("a", { href: route("document", { index, key: each.key }), dir: "auto" }, each.key),
    text("span", each.title),
    each.language,
    each.chunks,
    each.characters,
  ]), { class: "documents" });
}

function fact(name, value) {
  return [h("dt", {}, name), h("dd", {}, value)];
}

function languageDecision(decision) {
  return h("span", { class: "decision" },
    h("strong", {}, decision.language), ` (${decision.script}) · confidence ${fixed(decision.confidence, 2)}`
    + ` · decided by ${decision.method}: ${decision.reason}`);
}

// The original text with one band per chunk (bands alternate; text no chunk covers stays plain).
function chunkSection(shown, start, end) {
  const body = h("div", { class: "doc-text", dir: "auto" });
  const chunks = shown.chunks.map((chunk, at) => ({ ...chunk, at }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  let cursor = 0;
  for (const chunk of chunks) {
    const from = Math.max(chunk.start, cursor);
    if (from > cursor) body.append(shown.text.slice(cursor, from));
    const to = Math.max(chunk.end, from);
    const hit = chunk.start === start && chunk.end === end;
    body.append(h("span", {
      class: `band band-${chunk.at % 2}${hit ? " hit-band" : ""}`,
      dataset: { chunk: chunk.at + 1, start: chunk.start, end: chunk.end },
      title: `chunk ${chunk.at + 1} · ${chunk.start}–${chunk.end} · ${chunk.tokens} tokens · ${chunk.chunker}`,
    }, shown.text.slice(from, to)));
    cursor = to;
  }
  if (cursor < shown.text.length) body.append(shown.text.slice(cursor));
  const chosen = shown.chunking.chosen ? ` · chunker ${shown.chunking.chosen}` : "";
  return h("section", { class: "chunks" },
    h("h3", {}, "Chunks"),
    h("p", { class: "chunk-count" }, `${shown.chunks.length} chunks${chosen} · ${shown.text.length} characters`),
    body);
}

function chunkerSection(chunking) {
  const section = h("section", { class: "chunker" }, h("h3", {}, "Chunker choice"));
  if (!chunking.chosen) {
    section.append(h("p", {}, "No chunking record: indexed before ragkit recorded one."));
    return section;
  }
  if (!chunking.adaptive) {
    section.append(h("p", {}, `Chunked with ${chunking.chosen} (fixed by the index's settings).`));
    return section;
  }
  const rows = chunking.candidates.map((each) => {
    const chosen = each.chunker === chunking.chosen;
    return [h("td", { class: chosen ? "chosen" : "" }, chosen ? `✓ ${each.chunker}` : each.chunker),
      ...chunking.metrics.map((metric) => fixed(each.metrics[metric], 3)), fixed(each.score, 3)];
  });
  const weights = chunking.metrics.map((metric) => `${metric} ${chunking.weights[metric] ?? 1}`).join(" · ");
  section.append(
    table(["chunker", ...chunking.metrics, "score"], rows, { class: "scores" }),
    h("p", { class: "note" }, `chosen ${chunking.chosen} in ${fixed(chunking.seconds, 2)} s · weights ${weights}`
      + (chunking.skipped.length ? ` · not computed: ${chunking.skipped.join(", ")}` : "")));
  return section;
}

// The original and the matching key side by side, each change marked on both sides.
function normalizationSection(shown) {
  const norm = shown.normalization;
  const section = h("section", { class: "normalization" }, h("h3", {}, "Normalization"));
  if (!norm.enabled) {
    section.append(h("p", {}, "Normalization is off for this index: it matches on the text as given."));
    return section;
  }
  const original = h("div", { class: "doc-text", dir: "auto" });
  const key = h("div", { class: "doc-text", dir: "auto" });
  let from = 0;
  let keyFrom = 0;
  for (const change of norm.changes) {
    original.append(shown.text.slice(from, change.start));
    key.append(norm.key.slice(keyFrom, change.key_start));
    const title = `${change.start}–${change.end}: ${codePoints(change.before)} → ${codePoints(change.after) || "(deleted)"}`;
    original.append(h("mark", { class: "changed", title }, change.before));
    // a deletion is marked on the original side only: an empty mark inside a word of the key
    // would cut the letters' joining in cursive scripts
    if (change.after) key.append(h("mark", { class: "changed", title }, change.after));
    from = change.end;
    keyFrom = change.key_end;
  }
  original.append(shown.text.slice(from));
  key.append(norm.key.slice(keyFrom));
  section.append(
    h("p", { class: "note" }, `${norm.changes.length} change${norm.changes.length === 1 ? "" : "s"} · `
      + `language ${norm.language} · hover a mark for its code points`),
    h("div", { class: "side-by-side" },
      h("figure", {}, h("figcaption", {}, "original"), original),
      h("figure", {}, h("figcaption", {}, "matching key"), key)));
  return section;
}

function codePoints(value) {
  return [...value].map((char) => `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`).join(" ");
}
