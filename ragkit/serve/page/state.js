// What every view shares: the chosen index, the status line, moving to another view.
import { route } from "./dom.js";

const picker = document.getElementById("index-picker");
const status = document.getElementById("status");

export const page = {
  picker,
  index: () => picker.value,
  say(message, kind = "") {
    status.textContent = message;
    status.className = kind;
  },
  go(view, params = {}) {
    location.hash = route(view, { index: page.index(), ...params });
  },
};
