/* /review/<taskId>: who else has this task open (docs/api.md §15 Presence), and the offer to reload when
   a decision was refused because the task changed meanwhile (412). The heartbeat goes every
   REVIEW_PRESENCE_SECONDS / 3 (data-interval-seconds) and says whether this reviewer has typed into
   a field; the answer names the other admins on the task. Messages come from words.js (T). */
(function () {
  "use strict";

  const line = document.getElementById("presence");
  if (!line) return;
  const T = window.T;
  const url = `/api/review/tasks/${encodeURIComponent(line.dataset.taskId)}`;
  const interval = Math.max(1, Number(line.dataset.intervalSeconds)) * 1000;  // REVIEW_PRESENCE_SECONDS / 3
  let editing = false;
  let timer = null;
  // This page's own id, in each heartbeat and its leave: a heartbeat still on its way when the page is left
  // does not bring this reviewer back, and closing one of two tabs leaves the other (crypto.randomUUID
  // needs https; getRandomValues does not).
  const newPage = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  let page = newPage();

  function show(viewers) {
    if (!viewers.length) {
      line.hidden = true;
      line.textContent = "";
      return;
    }
    const names = viewers.map((viewer) => (viewer.editing ? T("presence.editing", { name: viewer.username }) : viewer.username));
    line.textContent = T("presence.also_open", { names: names.join(T("presence.separator")) });
    line.hidden = false;
  }

  async function beat() {
    clearTimeout(timer);
    const result = await window.Api.call("POST", `${url}/presence`, { editing, page });
    if (result.ok) show(result.data.viewers || []);
    if (result.ok || result.status === 0 || result.status >= 500) timer = setTimeout(beat, interval);
    // 401 (signed out), 403 or 404 (the task was deleted): nothing more to tell.
  }

  /* Typing into a field of the page (not the library's search) counts as editing; the others learn at once. */
  document.addEventListener("input", (event) => {
    if (editing || event.target.closest("dialog, .lang-switch") || !event.target.matches("input, textarea, select")) return;
    editing = true;
    beat();
  });

  /* A decision refused with 412: say so next to the decision, who changed the task, and offer to reload. */
  async function stale(box) {
    const message = document.createElement("span");
    message.textContent = T("stale.changed");
    const reload = document.createElement("button");
    reload.type = "button";
    reload.className = "primary";
    reload.textContent = T("stale.reload");
    reload.addEventListener("click", () => window.location.reload());
    box.replaceChildren(message, " ", reload);
    box.hidden = false;
    box.scrollIntoView({ block: "center" });
    const now = await window.Api.call("GET", url);
    if (!now.ok) return;
    // The timeline only grows: what came after the events this page was rendered with.
    const newer = (now.data.timeline || []).slice(Number(line.dataset.eventsSeen)).filter((event) => event.actor !== "system");
    const who = [...new Set(newer.map((event) => (event.actor === "agent" ? T("stale.agent") : event.actorName || event.actor)))];
    if (who.length) message.textContent = `${T("stale.changed")} ${T("stale.by", { names: who.join(T("presence.separator")) })}`;
  }

  /* Leaving the page removes this reviewer at once (docs/api.md §15): a beacon outlives the page, and a
     Blob of type application/json is the JSON every heartbeat sends, under the same session cookie. */
  window.addEventListener("pagehide", () => {
    clearTimeout(timer);
    const leave = new Blob([JSON.stringify({ editing: false, leaving: true, page })], { type: "application/json" });
    navigator.sendBeacon(`${url}/presence`, leave);
  });
  window.addEventListener("pageshow", (event) => {  // back from the cache: a new stay, as a page of its own
    if (!event.persisted) return;
    page = newPage();
    beat();
  });

  window.Presence = { stale };
  beat();
})();
