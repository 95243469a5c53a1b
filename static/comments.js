/* Readers' comments (docs/api.md §23), on the task page's section and on /comments: send a reply (the agent's
   proposal named when its text is the one sent or edited), delete a reply, feature or stop, delete a comment,
   open or close the comments. Every change goes through the JSON API; a refusal is shown in words beside the
   comment and nothing changes; after a change the page is read again, with a message saying what was done. */
(function () {
  "use strict";

  const T = window.T;
  const FLASH_KEY = "comments-flash";
  const items = document.querySelectorAll("[data-comment]");
  const section = document.querySelector("section.comments");
  if (!section) return;

  const base = (taskId) => `/api/review/tasks/${encodeURIComponent(taskId)}/comments`;

  /* The platform's refusals the page knows by their errcode say why in the page's own words. */
  function refusal(error) {
    const errcode = error && error.details && error.details.errcode;
    if (error && error.code === "platform_error" && window.Words.has(`comments.errcode.${errcode}`)) {
      return T("comments.refused", { reason: T(`comments.errcode.${errcode}`), errcode });
    }
    return window.Api.describe(error);
  }

  async function change(button, slot, method, url, body, busy, done) {
    slot.hidden = true;
    const before = button.textContent;
    button.disabled = true;
    button.textContent = T(busy);
    const result = await window.Api.call(method, url, body);
    if (!result.ok) {
      button.disabled = false;
      button.textContent = before;
      slot.textContent = refusal(result.error);
      slot.hidden = false;
      return;
    }
    try { sessionStorage.setItem(FLASH_KEY, T(done)); } catch (err) { /* storage off: no message */ }
    window.location.reload();
  }

  items.forEach((item) => {
    const url = `${base(item.dataset.taskId)}/${encodeURIComponent(item.dataset.commentId)}`;
    const slot = item.querySelector(".comment-error");
    const form = item.querySelector("form[data-reply]");
    if (form) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const box = form.elements.content;
        const content = box.value.trim();
        if (!content) {
          slot.textContent = T("comments.empty");
          slot.hidden = false;
          box.focus();
          return;
        }
        const body = { content };
        if (box.dataset.proposalId) body.proposalId = box.dataset.proposalId;
        change(form.querySelector("button"), slot, "POST", `${url}/reply`, body, "busy.sending", "comments.replied");
      });
    }
    item.querySelectorAll("button[data-action]").forEach((button) => {
      button.addEventListener("click", () => {
        const action = button.dataset.action;
        if (action === "delete-reply") {
          if (!window.confirm(T("comments.confirm_delete_reply"))) return;
          change(button, slot, "DELETE", `${url}/reply`, undefined, "busy.deleting", "comments.reply_deleted");
        } else if (action === "delete") {
          if (!window.confirm(T("comments.confirm_delete"))) return;
          change(button, slot, "DELETE", url, undefined, "busy.deleting", "comments.deleted");
        } else {
          const featured = action === "feature";
          change(button, slot, "POST", `${url}/featured`, { featured }, "busy.saving",
            featured ? "comments.featured" : "comments.unfeatured");
        }
      });
    });
  });

  const error = document.getElementById("comments-error");
  section.querySelectorAll("button[data-open]").forEach((button) => {
    button.addEventListener("click", () => {
      const open = button.dataset.open === "true";
      change(button, error, "POST", `${base(section.dataset.taskId)}/open`, { open }, "busy.saving",
        open ? "comments.opened" : "comments.closed");
    });
  });

  let flash = null;
  try {
    flash = sessionStorage.getItem(FLASH_KEY);
    sessionStorage.removeItem(FLASH_KEY);
  } catch (err) { flash = null; }
  if (flash) window.Api.showMessage(document.getElementById("comments-message"), flash);
})();
