/* /feedback/<id>: the status form, saved through PATCH /api/feedbacks/<id>/status. */
(function () {
  "use strict";

  const form = document.getElementById("status-form");
  if (!form) return;
  const id = form.dataset.feedbackId;
  const summary = document.getElementById("status-error");
  const LABELS = { unprocessed: "Unprocessed", processing: "Processing", processed: "Processed" };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    window.Api.clearErrors(form);
    summary.hidden = true;
    const status = form.elements.status.value;
    if (!status) {
      window.Api.showErrors(form, { message: "choose a status", details: { status: ["choose one of the three statuses"] } }, null, summary);
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
    window.Api.flash(`Saved: ${LABELS[saved.status]}` + (saved.status === "processed" ? ` by ${saved.processedBy}.` : "."));
    window.location.reload();
  });
})();
