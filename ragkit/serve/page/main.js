// The inspection page: an index picker and three views (search, document, index) chosen by
// the URL's hash, e.g. #search?index=docs&q=water, #document?index=docs&key=/data/a.md.
import { api, h, parseRoute } from "./dom.js";
import { showDocument } from "./document.js";
import { showIndex } from "./overview.js";
import { setUpSearch, showSearch } from "./search.js";
import { page } from "./state.js";

const picker = page.picker;
const views = ["search", "document", "index"];

async function loadIndexes() {
  const indexes = await api("indexes");
  picker.replaceChildren(...indexes.map((each) =>
    h("option", { value: each.name }, `${each.name} (${each.documents} documents)`)));
  api("languages").then((codes) => {
    document.getElementById("language-codes").replaceChildren(
      ...codes.map((code) => h("option", { value: code })));
  }).catch(() => {});
}

async function show() {
  const { view, params } = parseRoute(location.hash);
  const shown = views.includes(view) ? view : "search";
  const wanted = params.get("index");
  if (wanted && [...picker.options].some((option) => option.value === wanted)) {
    picker.value = wanted;
  }
  for (const name of views) {
    document.getElementById(`${name}-view`).hidden = name !== shown;
    document.querySelector(`nav a[data-view="${name}"]`)
      .setAttribute("aria-current", name === shown ? "page" : "false");
  }
  try {
    if (shown === "search") await showSearch(params);
    if (shown === "document") await showDocument(params);
    if (shown === "index") await showIndex(params);
  } catch (error) {
    page.say(error.message, "error");
  }
}

picker.addEventListener("change", () => {
  const { view, params } = parseRoute(location.hash);
  if (view === "search") page.go("search", { ...Object.fromEntries(params), index: picker.value });
  else page.go(view === "document" ? "document" : "index");
});
window.addEventListener("hashchange", show);

try {
  await loadIndexes();
  setUpSearch();
  await show();
  document.body.dataset.readyMs = performance.now().toFixed(1); // since navigation started
  document.body.dataset.ready = "true";
} catch (error) {
  page.say(`cannot reach the server: ${error.message}`, "error");
}
