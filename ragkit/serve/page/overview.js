// The index view: counts, languages, model, settings, generation, doctor's findings and the
// first documents.
import { api, clear, h, table, text } from "./dom.js";
import { documentTable } from "./document.js";
import { page } from "./state.js";

const view = document.getElementById("index-view");

export async function showIndex(params) {
  const name = params.get("index") || page.index();
  const base = `indexes/${encodeURIComponent(name)}`;
  page.say("loading…");
  const [details, found] = await Promise.all([api(base), api(`${base}/documents?limit=100`)]);
  const doctor = h("section", { class: "doctor" }, h("h3", {}, "Doctor"), h("p", {}, "checking…"));
  const chosen = Object.entries(details.chunkers_chosen).map(([chunker, count]) => `${chunker} ${count}`);
  clear(view).append(
    h("h2", { dir: "auto" }, details.name),
    table(["field", "value"], [
      ["path", text("span", details.path)],
      ["generation", details.generation],
      ["embedding model", details.embedding_model],
      ["dimension", details.dimension],
      ["chunker", details.chunker],
      ["documents", details.documents],
      ["chunks", details.chunks],
      ["vectors", details.vectors],
      ["chunkers chosen", chosen.join(", ") || "—"],
    ], { class: "details" }),
    h("section", {}, h("h3", {}, "Languages"),
      table(["language", "script", "characters"],
        details.languages.map((each) => [each.language, each.script, each.characters]),
        { class: "languages" })),
    h("section", {}, h("h3", {}, "Settings"),
      table(["setting", "value"], details.settings.map((each) => [each.name, each.value]),
        { class: "settings" })),
    doctor,
    h("section", {}, h("h3", {}, "Documents"),
      h("p", { class: "note" }, found.total > found.documents.length
        ? `the first ${found.documents.length} of ${found.total}`
        : `${found.total} document${found.total === 1 ? "" : "s"}`),
      documentTable(details.name, found)));
  page.say(`${details.name} · generation ${details.generation}`);
  const report = await api(`${base}/doctor`);
  clear(doctor).append(h("h3", {}, "Doctor"),
    h("p", { class: report.healthy ? "ok" : "error" }, report.healthy
      ? `ok: ${report.checked} (generation ${report.generation})`
      : `${report.problems.length} problem${report.problems.length === 1 ? "" : "s"}: ${report.hint}`),
    h("ul", {},
      report.problems.map((line) => h("li", { class: "error" }, `problem: ${line}`)),
      report.notes.map((line) => h("li", {}, `note: ${line}`))));
}
