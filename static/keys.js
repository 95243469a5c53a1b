/* Keyboard shortcuts (docs/api.md §14): j/k/Enter in the review list, 1/2/3/d/p on a task page, ? lists
   them. Nothing fires while the reviewer types in a field, or with Ctrl, Alt or Cmd held. */
(function () {
  "use strict";

  const help = document.getElementById("keys-help");
  const TEXT_INPUTS = /^(text|search|email|url|tel|password|number|date|datetime-local|month|time|week)$/;

  function typing(element) {
    if (!element || element === document.body) return false;
    if (element.isContentEditable || element.tagName === "TEXTAREA" || element.tagName === "SELECT") return true;
    return element.tagName === "INPUT" && TEXT_INPUTS.test(element.type || "text");
  }

  function openHelp() {
    if (help && !help.open) help.showModal();
  }
  document.querySelectorAll("[data-keys-help]").forEach((button) => button.addEventListener("click", openHelp));

  /* ---- the list: a current row, moved with j and k; its link has the focus, so Enter opens it ---- */
  const rows = [...document.querySelectorAll("#task-list tbody tr")];
  let current = -1;

  function select(index) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach((row, i) => row.classList.toggle("current", i === current));
    const link = rows[current].querySelector("a");
    link.focus();
    rows[current].scrollIntoView({ block: "nearest" });
  }

  /* ---- the task page: the decision's choices and the preview ---- */
  const decision = document.querySelector('[data-role="decision"]');
  const form = document.getElementById("decision-form");

  function choose(value) {
    const radio = form && form.querySelector(`input[name="action"][value="${value}"]`);
    if (!radio) return false;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    const next = value === "reject_rework" ? form.querySelector("#reject-details input, #reject-details select")
      : document.getElementById("decision-submit");
    (next || radio).focus();
    return true;
  }

  const ACTIONS = { 1: "approve_and_publish", 2: "approve_without_publish", 3: "reject_rework" };

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (document.querySelector("dialog[open]")) return; // a dialog keeps its own keys (Esc closes it)
    let done = false;
    if (event.key === "?") { openHelp(); done = true; }
    else if (rows.length && (event.key === "j" || event.key === "k")) {
      if (current < 0) {
        const focused = rows.findIndex((row) => row.contains(document.activeElement));
        current = focused >= 0 ? focused : (event.key === "j" ? -1 : rows.length);
      }
      select(current + (event.key === "j" ? 1 : -1));
      done = true;
    } else if (rows.length && event.key === "Enter" && current >= 0 && !event.target.closest("a, button")) {
      rows[current].querySelector("a").click();
      done = true;
    } else if (ACTIONS[event.key]) {
      done = choose(ACTIONS[event.key]);
    } else if (event.key === "d" && decision) {
      const target = decision.querySelector('input[name="action"]:checked, input[name="action"], button');
      if (target) { target.focus(); done = true; }
    } else if (event.key === "p") {
      const preview = document.querySelector('[data-role="preview"]');
      if (preview) { preview.scrollIntoView({ block: "start" }); preview.focus({ preventScroll: true }); done = true; }
    }
    if (done) event.preventDefault();
  });
})();
