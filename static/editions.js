/* /editions (docs/api.md §21): compose an account's edition from its draft-ready articles (add, remove, move
   up and down with buttons or Alt+↑/↓; the first is the headline, at most 8), see it as a follower does in
   the chat, save it (POST or PATCH /api/editions), preview it on the editor's WeChat, send it now, at a time or
   to a tag, cancel or delete one, and follow a send until WeChat reports the result. */
(function () {
  "use strict";

  const source = document.getElementById("edition-json");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  const T = window.T;
  const Api = window.Api;
  const MAX = data.max || 8;
  const WECHAT_ID_KEY = "edition-wechat-id";

  const itemsList = document.getElementById("edition-items");
  const candidateList = document.getElementById("candidate-items");
  const live = document.getElementById("edition-live");
  const savedNote = document.getElementById("edition-saved");
  const sendPanel = document.getElementById("send-panel");
  const sendMessage = document.getElementById("send-message");
  const sendError = document.getElementById("send-error");

  // Every article the page knows (the draft-ready ones and the composed edition's), newest first.
  const composing = data.composing;
  const pool = [...data.candidates];
  if (composing) composing.articles.forEach((article) => { if (!pool.some((a) => a.id === article.id)) pool.push(article); });
  pool.sort((a, b) => String(b.updatedAt || "").localeCompare(String(a.updatedAt || "")));
  const byId = new Map(pool.map((article) => [article.id, article]));

  const state = {
    id: composing ? composing.id : null,
    items: composing ? composing.articles.map((article) => article.id) : [],
    saved: composing ? composing.articles.map((article) => article.id).join(",") : "",
  };

  const changed = () => state.items.join(",") !== state.saved;
  const titleOf = (id) => (byId.get(id) ? byId.get(id).title : id);

  function say(text) {
    live.textContent = "";
    window.setTimeout(() => { live.textContent = text; }, 50);  // read again even when the words repeat
  }

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function cover(article, className) {
    if (!article.cover) {
      const none = element("span", className);
      none.setAttribute("aria-hidden", "true");
      return none;
    }
    const img = element("img", className);
    img.src = article.cover;
    img.alt = "";
    img.loading = "lazy";
    return img;
  }

  function button(act, label, text, disabled) {
    const made = element("button", "", text);
    made.type = "button";
    made.dataset.act = act;
    made.setAttribute("aria-label", label);
    if (disabled) made.setAttribute("aria-disabled", "true");
    return made;
  }

  function when(value) {
    const time = element("time");
    if (value) {
      time.setAttribute("datetime", value);
      time.setAttribute("data-no-hint", "");
    }
    return time;
  }

  /* ---- the composed edition, the articles to choose from, the follower's view ---- */
  function renderItems() {
    itemsList.replaceChildren(...state.items.map((id, index) => {
      const article = byId.get(id);
      const title = article.title;
      const li = element("li", "edition-item");
      li.dataset.taskId = id;
      const position = element("span", "item-position");
      if (index === 0) position.append(element("span", "badge headline", T("edition.headline")));
      else position.textContent = T("edition.position", { num: index + 1 });
      const text = element("span", "item-text");
      text.append(element("span", "item-title", title));
      const buttons = element("span", "item-buttons");
      buttons.append(
        button("up", T("edition.up", { title }), "↑", index === 0),
        button("down", T("edition.down", { title }), "↓", index === state.items.length - 1),
        button("remove", T("edition.remove", { title }), "✕", false),
      );
      li.append(position, cover(article, "item-cover"), text, buttons);
      return li;
    }));
    document.getElementById("edition-empty").hidden = state.items.length > 0;
    document.getElementById("edition-count").textContent = T("edition.count", { num: state.items.length, max: MAX });
  }

  function renderCandidates() {
    const shown = pool.filter((article) => !state.items.includes(article.id));
    const full = state.items.length >= MAX;
    candidateList.replaceChildren(...shown.map((article) => {
      const li = element("li", "candidate-item");
      li.dataset.taskId = article.id;
      const text = element("span", "item-text");
      const link = element("a", "item-title", article.title);
      link.href = `/review/${encodeURIComponent(article.id)}`;
      const meta = element("span", "item-meta");
      meta.append(when(article.updatedAt));
      text.append(link, meta);
      const add = button("add", T("edition.add", { title: article.title }), T("edition.add_short"), full);
      const buttons = element("span", "item-buttons");
      buttons.append(add);
      li.append(cover(article, "item-cover"), text, buttons);
      return li;
    }));
    document.getElementById("candidates-empty").hidden = shown.length > 0;
    window.Words.showTimes(candidateList);
  }

  function renderPreview() {
    const message = document.getElementById("wx-msg");
    const articles = state.items.map((id) => byId.get(id));
    message.hidden = articles.length === 0;
    document.getElementById("wx-msg-empty").hidden = articles.length > 0;
    message.replaceChildren(...articles.map((article, index) => {
      if (index === 0) {
        const head = element("div", article.cover ? "wx-msg-head" : "wx-msg-head no-cover");
        if (article.cover) head.append(cover(article, ""));
        head.append(element("p", "wx-msg-title", article.title));
        return head;
      }
      const row = element("div", "wx-msg-row");
      row.append(element("p", "wx-msg-title", article.title), cover(article, article.cover ? "" : "wx-no-cover"));
      return row;
    }));
  }

  function renderSaved() {
    savedNote.textContent = changed() ? T("edition.unsaved") : (state.id ? T("edition.saved") : "");
    savedNote.classList.toggle("unsaved", changed());
    savedNote.classList.remove("error");
    document.getElementById("edition-save").hidden = !state.items.length && !state.id;
  }

  function render(focus) {
    renderItems();
    renderCandidates();
    renderPreview();
    renderSaved();
    if (focus) {
      const target = document.querySelector(focus);
      if (target) target.focus();
    }
  }

  function move(index, delta, act) {
    const to = index + delta;
    if (to < 0 || to >= state.items.length) return;
    const [id] = state.items.splice(index, 1);
    state.items.splice(to, 0, id);
    render(`#edition-items li[data-task-id="${CSS.escape(id)}"] button[data-act="${act}"]`);
    const li = itemsList.querySelector(`li[data-task-id="${CSS.escape(id)}"]`);
    if (li) li.classList.add("moved");
    say(to === 0 ? T("edition.now_headline", { title: titleOf(id) })
      : T("edition.moved", { title: titleOf(id), num: to + 1, total: state.items.length }));
  }

  itemsList.addEventListener("click", (event) => {
    const pressed = event.target.closest("button[data-act]");
    if (!pressed || pressed.getAttribute("aria-disabled") === "true") return;
    const id = pressed.closest("li").dataset.taskId;
    const index = state.items.indexOf(id);
    if (pressed.dataset.act === "up") move(index, -1, "up");
    else if (pressed.dataset.act === "down") move(index, 1, "down");
    else if (pressed.dataset.act === "remove") {
      state.items.splice(index, 1);
      const next = state.items[Math.min(index, state.items.length - 1)];
      render(next ? `#edition-items li[data-task-id="${CSS.escape(next)}"] button[data-act="remove"]` : null);
      if (!next) document.getElementById("compose-heading").focus();
      say(T("edition.removed", { title: titleOf(id) }));
    }
  });

  // Alt+↑ / Alt+↓ on an article's buttons moves it; the focus stays on the same button of the moved article.
  itemsList.addEventListener("keydown", (event) => {
    if (!event.altKey || event.ctrlKey || event.metaKey || !["ArrowUp", "ArrowDown"].includes(event.key)) return;
    const li = event.target.closest("li[data-task-id]");
    if (!li) return;
    event.preventDefault();
    const act = event.target.dataset.act || (event.key === "ArrowUp" ? "up" : "down");
    move(state.items.indexOf(li.dataset.taskId), event.key === "ArrowUp" ? -1 : 1, act);
  });

  candidateList.addEventListener("click", (event) => {
    const pressed = event.target.closest('button[data-act="add"]');
    if (!pressed) return;
    if (state.items.length >= MAX) {
      say(T("edition.full", { max: MAX }));
      return;
    }
    const li = pressed.closest("li");
    const id = li.dataset.taskId;
    const following = li.nextElementSibling || li.previousElementSibling;
    state.items.push(id);
    render(following ? `#candidate-items li[data-task-id="${CSS.escape(following.dataset.taskId)}"] button` : null);
    if (!following) document.getElementById("compose-heading").focus();
    say(T("edition.added", { title: titleOf(id), num: state.items.length, max: MAX }));
  });
  document.getElementById("compose-heading").tabIndex = -1;

  /* ---- errors in the page's words ---- */
  function explain(error) {
    const details = error.details || {};
    if (error.code === "invalid_state") {
      const refused = Object.keys(details).filter((key) => byId.has(key));
      if (refused.length) {
        return [...refused.map((id) => T("edition.refused", {
          title: titleOf(id), reason: [].concat(details[id]).map(String).join("; ") })), T("edition.reload")].join(" ")
          .replace(/([。！？]) /g, "$1");  // no space after a full-width stop
      }
      if (details.status) return T("edition.changed");
    }
    if (error.code === "quota_exceeded") {
      const next = [].concat(details.nextPossibleAt || [])[0];
      const moment = next ? new Date(next) : null;
      if (moment && !Number.isNaN(moment.getTime())) return T("edition.quota_exceeded", { when: window.Words.localText(moment) });
    }
    return Api.describe(error);
  }

  function clear() {
    sendMessage.hidden = true;
    sendError.hidden = true;
    Api.clearErrors(sendPanel);
  }

  function fail(error) {
    const fields = ["at", "wechatId", "tagId"];
    const placed = error.code === "validation_error" && Object.keys(error.details || {}).some((key) => fields.includes(key));
    if (placed) {
      Api.showErrors(sendPanel, error, (path) => (fields.includes(path) ? path : null), sendError);
      return;
    }
    sendError.textContent = explain(error);
    sendError.hidden = false;
    sendError.scrollIntoView({ block: "nearest" });
  }

  async function busy(control, words, work) {
    const before = control.textContent;
    control.disabled = true;
    control.textContent = words;
    try { return await work(); } finally {
      control.disabled = false;
      control.textContent = before;
    }
  }

  /* The edition as composed, saved: created (POST), changed (PATCH), or deleted when emptied. */
  async function save() {
    if (!changed() && state.id) return { ok: true };
    let result;
    if (!state.items.length) {
      if (!state.id) return { ok: true };
      result = await Api.call("DELETE", `/api/editions/${encodeURIComponent(state.id)}`);
      if (result.ok) state.id = null;
    } else if (state.id) {
      result = await Api.call("PATCH", `/api/editions/${encodeURIComponent(state.id)}`, { taskIds: state.items });
    } else {
      result = await Api.call("POST", "/api/editions", { account: data.account, taskIds: state.items });
      if (result.ok) {
        state.id = result.data.id;
        const address = `/editions?account=${encodeURIComponent(data.account)}&edition=${encodeURIComponent(state.id)}`;
        window.history.replaceState(null, "", address);
      }
    }
    if (result.ok) state.saved = state.items.join(",");
    renderSaved();
    return result;
  }

  async function saved() {
    if (!state.items.length) {
      sendError.textContent = T("edition.none_chosen");
      sendError.hidden = false;
      return false;
    }
    const result = await save();
    if (!result.ok) fail(result.error);
    return result.ok;
  }

  const saveButton = document.getElementById("edition-save");
  saveButton.addEventListener("click", async () => {
    clear();
    const result = await busy(saveButton, T("busy.saving"), save);
    if (!result.ok) {
      savedNote.textContent = explain(result.error);
      savedNote.classList.add("error");
    }
  });

  /* ---- preview on the editor's own WeChat ---- */
  const previewForm = document.getElementById("preview-form");
  const wechatField = previewForm.elements.wechatId;
  try { wechatField.value = window.localStorage.getItem(WECHAT_ID_KEY) || ""; } catch (err) { /* storage off */ }
  previewForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear();
    const wechatId = wechatField.value.trim();
    if (!wechatId) {
      Api.showErrors(sendPanel, { code: "validation_error", message: "", details: { wechatId: [T("edition.wechat_id")] }, said: true },
        (path) => path, null);
      wechatField.focus();
      return;
    }
    try { window.localStorage.setItem(WECHAT_ID_KEY, wechatId); } catch (err) { /* storage off: not remembered */ }
    const control = document.getElementById("preview-send");
    await busy(control, T("busy.sending"), async () => {
      if (!(await saved())) return;
      const result = await Api.call("POST", `/api/editions/${encodeURIComponent(state.id)}/preview`, { wechatId });
      if (!result.ok) { fail(result.error); return; }
      sendMessage.textContent = T("edition.preview_sent", { name: wechatId });
      sendMessage.hidden = false;
    });
  });

  /* ---- who it goes to: everyone, or one follower tag (the platform's tags/get, asked once) ---- */
  const sendForm = document.getElementById("send-form");
  const tagSelect = document.getElementById("send-tag");
  let tagsLoaded = false;
  let tagsAsked = null;
  const followerTags = () => {  // asked once a page; a failure may be asked again
    tagsAsked = tagsAsked || Api.call("GET", `/api/editions/tags?account=${encodeURIComponent(data.account)}`)
      .then((result) => { if (!result.ok) tagsAsked = null; return result; });
    return tagsAsked;
  };
  async function loadTags() {
    if (tagsLoaded) return;
    tagSelect.replaceChildren(new Option(T("edition.tags_loading"), ""));
    const result = await followerTags();
    if (!result.ok) {
      tagSelect.replaceChildren();
      fail(result.error);
      return;
    }
    tagsLoaded = true;
    const tags = result.data.tags || [];
    tagSelect.replaceChildren(...(tags.length ? tags.map((tag) => new Option(T("edition.tag", { name: tag.name, count: tag.count }), String(tag.id)))
      : [new Option(T("edition.no_tags"), "")]));
  }
  sendForm.querySelectorAll('input[name="audience"]').forEach((radio) => radio.addEventListener("change", () => {
    const toTag = sendForm.elements.audience.value === "tag";
    tagSelect.disabled = !toTag;
    tagSelect.hidden = !toTag;
    if (toTag) loadTags();
  }));

  function sendBody(at) {
    const body = { ignoreReprint: sendForm.elements.ignoreReprint.checked };
    if (at) body.at = at.toISOString();
    if (sendForm.elements.audience.value === "tag") {
      if (!tagSelect.value) return null;
      body.tagId = Number(tagSelect.value);
    }
    return body;
  }

  async function send(control, at) {
    clear();
    const body = sendBody(at);
    if (!body) {
      Api.showErrors(sendPanel, { code: "validation_error", message: "", details: { tagId: [T("edition.choose_tag")] }, said: true },
        (path) => path, null);
      return;
    }
    const audience = body.tagId !== undefined ? tagSelect.selectedOptions[0].textContent : null;
    const words = { num: state.items.length, account: data.accountName, tag: audience, when: at ? window.Words.localText(at) : "" };
    const question = at ? (audience ? T("edition.confirm_at_tag", words) : T("edition.confirm_at", words))
      : (audience ? T("edition.confirm_now_tag", words) : T("edition.confirm_now", words));
    // With mass-send protection the send waits for an administrator's confirmation in WeChat (docs/api.md §21).
    if (!window.confirm(data.quota.protected ? `${question} ${T("edition.confirm_protected")}` : question)) return;
    await busy(control, T("busy.sending"), async () => {
      if (!(await saved())) return;
      const result = await Api.call("POST", `/api/editions/${encodeURIComponent(state.id)}/send`, body);
      if (!result.ok) { fail(result.error); return; }
      Api.flash(at ? T("edition.scheduled", { when: window.Words.localText(at) }) : T("edition.sending"));
      window.location.assign(`/editions?account=${encodeURIComponent(data.account)}`);
    });
  }

  const sendNow = document.getElementById("send-now");
  sendNow.addEventListener("click", () => send(sendNow, null));

  // The times the service takes (docs/api.md §18): from now to 30 days ahead, in the viewer's zone.
  const atField = sendForm.elements.at;
  const bounds = () => {
    const now = Date.now();
    atField.min = window.Words.localText(new Date(now)).replace(" ", "T");
    atField.max = window.Words.localText(new Date(now + 30 * 24 * 3600 * 1000)).replace(" ", "T");
  };
  bounds();
  atField.addEventListener("focus", bounds);
  sendForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!atField.value) {
      clear();
      Api.showErrors(sendPanel, { code: "validation_error", message: "", details: { at: [T("live.choose_time")] }, said: true },
        (path) => path, null);
      return;
    }
    send(document.getElementById("send-schedule"), new Date(atField.value));  // the browser's zone, sent as UTC
  });

  /* ---- the editions: cancel a scheduled send, delete one; follow a send until WeChat reports it ---- */
  const cards = document.getElementById("edition-cards");
  const pageError = document.getElementById("page-error");
  if (cards) {
    cards.addEventListener("click", async (event) => {
      const cancel = event.target.closest("button[data-cancel]");
      const remove = event.target.closest("button[data-delete]");
      if (!cancel && !remove) return;
      pageError.hidden = true;
      const id = (cancel || remove).dataset.cancel || (cancel || remove).dataset.delete;
      if (remove && !window.confirm(T("edition.confirm_delete"))) return;
      const result = await busy(cancel || remove, cancel ? T("busy.canceling") : T("busy.deleting"), () => Api.call("DELETE",
        `/api/editions/${encodeURIComponent(id)}${cancel ? "/send" : ""}`));
      if (!result.ok) {
        pageError.textContent = explain(result.error);
        pageError.hidden = false;
        return;
      }
      Api.flash(cancel ? T("edition.canceled") : T("edition.deleted"));
      window.location.reload();
    });

    // An edition sent to a tag: the tag's name, once the platform has said it.
    const tagged = [...cards.querySelectorAll("[data-tag-id]")];
    if (tagged.length) {
      followerTags().then((result) => {
        if (!result.ok) return;
        const names = new Map((result.data.tags || []).map((tag) => [String(tag.id), tag.name]));
        tagged.forEach((slot) => {
          if (names.has(slot.dataset.tagId)) slot.textContent = T("edition.to_tag", { name: names.get(slot.dataset.tagId) });
        });
      });
    }

    const watched = [...cards.querySelectorAll("li[data-edition-id]")].filter((card) => {
      const status = card.dataset.status;
      const at = card.dataset.sendAt ? new Date(card.dataset.sendAt).getTime() : 0;
      const recent = Date.now() - at < 30 * 60 * 1000;
      return status === "sending" || (status === "scheduled" && at - Date.now() < 15 * 60 * 1000)
        || (status === "sent" && recent && !card.querySelector(".edition-counts"));
    });
    if (watched.length) {
      let asked = 0;
      const timer = window.setInterval(async () => {
        if ((asked += 1) > 600) { window.clearInterval(timer); return; }  // ten minutes, then a reload shows it
        for (const card of watched) {
          const result = await Api.call("GET", `/api/editions/${encodeURIComponent(card.dataset.editionId)}`);
          if (result.ok && (result.data.status !== card.dataset.status || (result.data.counts && !card.querySelector(".edition-counts")))) {
            window.clearInterval(timer);
            window.location.reload();
            return;
          }
        }
      }, 1000);
    }
  }

  render(null);
})();
