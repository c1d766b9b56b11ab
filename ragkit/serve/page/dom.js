// Building the page safely: every piece of data becomes a text node (textContent), never markup.
// `h(tag, props, ...children)`: props set attributes (no event-handler attributes: pass
// functions in `on`), children are nodes, strings or numbers (shown as text), arrays of them,
// or null/false (left out).

const EVENT_ATTRIBUTE = /^on/i;

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    } else if (name === "class") {
      element.className = value;
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (EVENT_ATTRIBUTE.test(name)) {
      throw new Error(`h(): event attribute ${name}; pass a function in props.on`);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// A block of document text: its own direction (dir=auto; CSS reads each line's own with
// unicode-bidi: plaintext).
export function text(tag, value, props = {}) {
  return h(tag, { dir: "auto", ...props }, value);
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

export function fixed(value, digits = 4) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
}

// A link inside the page (hash route) with its parameters.
export function route(view, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") query.set(name, String(value));
  }
  const rest = query.toString();
  return `#${view}${rest ? `?${rest}` : ""}`;
}

export function parseRoute(hash) {
  const [view, rest = ""] = hash.replace(/^#/, "").split("?", 2);
  return { view: view || "search", params: new URLSearchParams(rest) };
}

// The API: JSON in and out; an error answer becomes an Error with the server's message.
export async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = answer.detail;
    const message = Array.isArray(detail)
      ? detail.map((each) => `${(each.loc || []).slice(1).join(".")}: ${each.msg}`).join("; ")
      : detail || `${response.status} ${response.statusText}`;
    throw new Error(message);
  }
  return answer;
}

export function table(headers, rows, props = {}) {
  return h("table", props,
    h("thead", {}, h("tr", {}, headers.map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) =>
      cell instanceof Node && cell.tagName === "TD" ? cell : h("td", {}, cell))))));
}
