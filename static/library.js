/* The material library picker: a <dialog> listing GET /api/assets?scope=library, with search and pages,
   and an upload of the admin's own image (POST /api/assets/upload: task-local, or into the library). */
(function () {
  "use strict";

  const PAGE_SIZE = 12;
  let dialog, list, errorBox, pageLabel, prev, next, query, fileInput, keep;
  let page = 1, totalPages = 1, onPick = null;
  const T = window.T;

  function item(asset) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "library-item";
    const img = document.createElement("img");
    img.src = asset.url;
    img.alt = "";
    img.loading = "lazy";
    const caption = document.createElement("span");
    caption.textContent = `${asset.fileName} · ${asset.width}×${asset.height}`;
    button.append(img, caption);
    button.setAttribute("aria-label", T("library.use", { name: asset.fileName, size: `${asset.width}×${asset.height}` }));
    button.addEventListener("click", () => pick(asset));
    li.append(button);
    return li;
  }

  async function load() {
    errorBox.hidden = true;
    const params = new URLSearchParams({ scope: "library", page: String(page), pageSize: String(PAGE_SIZE) });
    if (query.value.trim()) params.set("q", query.value.trim());
    const result = await window.Api.call("GET", `/api/assets?${params}`);
    list.replaceChildren();
    if (!result.ok) {
      window.Api.showMessage(errorBox, window.Api.describe(result.error));
      pageLabel.textContent = "";
      prev.disabled = next.disabled = true;
      return;
    }
    const { items, pagination } = result.data;
    totalPages = Math.max(1, pagination.totalPages);
    if (!items.length) {
      const empty = document.createElement("li");
      empty.className = "muted";
      empty.textContent = T("library.empty");
      list.append(empty);
    }
    items.forEach((asset) => list.append(item(asset)));
    pageLabel.textContent = T("library.page", { page: pagination.page, pages: totalPages, total: pagination.total });
    prev.disabled = page <= 1;
    next.disabled = page >= totalPages;
  }

  function pick(asset) {
    const callback = onPick;
    dialog.close();
    if (callback) callback(asset);
  }

  async function upload(event) {
    event.preventDefault();
    errorBox.hidden = true;
    const form = new FormData();
    form.append("file", fileInput.files[0]);
    form.append("scope", keep.checked ? "library" : "review");
    const result = await window.Api.call("POST", "/api/assets/upload", form);
    if (!result.ok) {
      window.Api.showMessage(errorBox, window.Api.describe(result.error));
      return;
    }
    fileInput.value = "";
    pick(result.data);
  }

  function open(callback) {
    onPick = callback;
    page = 1;
    dialog.showModal();
    load();
  }

  document.addEventListener("DOMContentLoaded", () => {
    dialog = document.getElementById("library-dialog");
    if (!dialog) return;
    list = document.getElementById("library-items");
    errorBox = document.getElementById("library-error");
    pageLabel = document.getElementById("library-page");
    prev = document.getElementById("library-prev");
    next = document.getElementById("library-next");
    query = document.getElementById("library-q");
    fileInput = document.getElementById("library-file");
    keep = document.getElementById("library-keep");
    document.getElementById("library-upload").addEventListener("submit", upload);
    document.getElementById("library-search").addEventListener("submit", (event) => {
      event.preventDefault();
      page = 1;
      load();
    });
    prev.addEventListener("click", () => { page -= 1; load(); });
    next.addEventListener("click", () => { page += 1; load(); });
    dialog.addEventListener("close", () => { onPick = null; });
  });

  window.Library = { open };
})();
