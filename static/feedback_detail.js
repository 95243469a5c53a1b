/* /feedback/<id>: the status form, saved through PATCH /api/feedbacks/<id>/status. The result shows
   beside the button and the page stays where it is (docs/api.md §14). */
(function () {
  "use strict";

  const form = document.getElementById("status-form");
  if (!form) return;
  const T = window.T;
  const id = form.dataset.feedbackId;
  const summary = document.getElementById("status-error");
  const beside = document.getElementById("status-result");
  const message = document.getElementById("page-message");

  /* "Processed by demo at <time>." with the time as a <time> element the page formats. */
  function processedInfo(saved) {
    const info = document.getElementById("processed-info");
    if (saved.status !== "processed") {
      info.textContent = saved.processedBy ? T("feedback.last_processed", { who: saved.processedBy }) : T("feedback.not_processed");
      return;
    }
    const [before, after] = T("feedback.processed_at", { who: saved.processedBy }).split("%(when)s");
    const time = Object.assign(document.createElement("time"), { dateTime: saved.processedAt });
    info.replaceChildren(before, time, after || "");
    window.Words.showTimes(info);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    window.Api.clearErrors(form);
    summary.hidden = true;
    beside.hidden = true;
    message.hidden = true;
    const status = form.elements.status.value;
    if (!status) {
      window.Api.showErrors(form, { message: T("feedback.choose"), details: { status: [T("feedback.choose_one")] }, said: true }, null, summary);
      return;
    }
    const button = document.getElementById("status-save");
    button.disabled = true;
    const note = form.elements.adminNote.value.trim();
    const result = await window.Api.call("PATCH", `/api/feedbacks/${encodeURIComponent(id)}/status`,
      { status, adminNote: note ? note : null });
    button.disabled = false;
    if (!result.ok) {
      window.Api.showErrors(form, result.error, (path) => path.split(".")[0], summary);
      return;
    }
    const saved = result.data;
    const label = T(`feedback.status.${saved.status}`);
    const text = saved.status === "processed" ? T("feedback.saved_by", { status: label, who: saved.processedBy })
      : T("feedback.saved", { status: label });
    beside.textContent = text;
    beside.hidden = false;
    window.Api.showMessage(message, text);
    const badge = document.getElementById("feedback-status");
    badge.textContent = label;
    badge.className = `badge status-${saved.status}`;
    processedInfo(saved);
  });
})();
