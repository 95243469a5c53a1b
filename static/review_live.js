/* /review/<taskId>: publish the draft to readers now or at a time entered in the viewer's own zone, cancel
   a schedule, and follow a submission until WeChat reports the result (docs/api.md §18). */
(function () {
  "use strict";

  const panel = document.getElementById("live-panel");
  if (!panel) return;
  const task = JSON.parse(document.getElementById("task-json").textContent);
  const url = `/api/review/tasks/${encodeURIComponent(task.id)}/go-live`;
  const T = window.T;
  const error = document.getElementById("live-error");

  async function send(method, body, button, done) {
    error.hidden = true;
    window.Api.clearErrors(panel);
    const before = button.textContent;
    button.disabled = true;
    button.textContent = T("busy.going_live");
    const result = await window.Api.call(method, url, body, { ifMatch: task.version });
    button.disabled = false;
    button.textContent = before;
    if (!result.ok) {
      window.Api.showErrors(panel, result.error, (path) => path, error);
      return;
    }
    window.Api.flash(done(result.data.live));
    window.location.reload();
  }

  /* The day's edition first (docs/api.md §21): the article joins the account's draft edition (or starts
     one) through /api/editions, and the editor goes on to the Send to followers page to send it. */
  const offer = document.getElementById("edition-offer");
  const add = document.getElementById("edition-add");
  if (offer && add) {
    add.addEventListener("click", async () => {
      error.hidden = true;
      const editionId = offer.dataset.editionId;
      const before = add.textContent;
      add.disabled = true;
      add.textContent = T("busy.adding");
      const result = editionId
        ? await window.Api.call("PATCH", `/api/editions/${encodeURIComponent(editionId)}`,
          { taskIds: [...JSON.parse(offer.dataset.editionTasks || "[]"), task.id] })
        : await window.Api.call("POST", "/api/editions", { account: offer.dataset.account, taskIds: [task.id] });
      if (!result.ok) {
        add.disabled = false;
        add.textContent = before;
        window.Api.showMessage(error, window.Api.describe(result.error));
        return;
      }
      window.Api.flash(T("live.in_edition", { topic: task.topic }));
      const query = new URLSearchParams({ account: offer.dataset.account, edition: result.data.id });
      window.location.assign(`/editions?${query}`);
    });
  }

  const now = document.getElementById("live-now");
  if (now) {
    now.addEventListener("click", () => {
      if (!window.confirm(T("live.confirm_now", { topic: task.topic }))) return;
      send("POST", {}, now, () => T("live.asked"));
    });
  }

  const schedule = document.getElementById("live-schedule");
  if (schedule) {
    // The times the service takes (docs/api.md §18): from now to 30 days ahead, in the viewer's zone.
    const field = schedule.elements.at;
    const bounds = () => {
      const now = Date.now();
      field.min = window.Words.localText(new Date(now)).replace(" ", "T");
      field.max = window.Words.localText(new Date(now + 30 * 24 * 3600 * 1000)).replace(" ", "T");
    };
    bounds();
    field.addEventListener("focus", bounds);
    schedule.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = schedule.elements.at.value;  // the viewer's wall-clock time, e.g. 2026-12-01T08:00
      if (!value) {
        window.Api.showErrors(panel, { code: "validation_error", message: T("live.choose_time"), details: {}, said: true },
          null, error);
        return;
      }
      const at = new Date(value);  // read in the browser's zone; sent as UTC (an offset of Z)
      send("POST", { at: at.toISOString() }, schedule.querySelector("button"),
        () => T("live.scheduled", { when: window.Words.localText(at) }));  // as every time of the page
    });
  }

  const cancel = document.getElementById("live-cancel");
  if (cancel) cancel.addEventListener("click", () => send("DELETE", undefined, cancel, () => T("live.canceled")));

  // While WeChat works on it, look again every second: the result shows within 2 s of the platform's event.
  const soon = task.live && task.live.status === "scheduled" && new Date(task.live.at) - Date.now() < 15 * 60 * 1000;
  if (task.live && (soon || ["submitting", "publishing"].includes(task.live.status))) {
    const timer = window.setInterval(async () => {
      const result = await window.Api.call("GET", `/api/review/tasks/${encodeURIComponent(task.id)}`);
      if (result.ok && result.data.live && result.data.live.status !== task.live.status) {
        window.clearInterval(timer);
        window.location.reload();
      }
    }, 1000);
  }
})();
