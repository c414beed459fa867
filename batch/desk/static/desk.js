// refbatch desk: one document at a time. Plain script, no framework; it
// talks only to the desk that served it (the Content-Security-Policy
// allows nothing else), and keeps the preloaded documents in memory only.
"use strict";

(function () {
  const width = 1200; // the page images' width in pixels
  const lowConf = 60; // words under this confidence are marked
  const state = {
    csrf: "",
    user: "",
    queue: [], // review rows shown (after the filter)
    all: [], // review rows
    rejected: [],
    retried: 0, // documents sent back to be read again, waiting for the next run
    current: -1,
    doc: null,
    page: 0,
    selected: new Set(),
    decided: new Set(),
    preload: new Map(), // id -> Promise of {doc, images: Map(page -> Promise of {url, w, h})}
    dims: { w: 1, h: 1 }, // the overlay's coordinates: the page as read, in pixels
    region: null, // {page, box} chosen to transcribe
    drag: null,
    showing: 0, // the latest page asked for: a load for an earlier one is dropped
  };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function api(path, opts) {
    const r = await fetch(path, Object.assign({ credentials: "same-origin", cache: "no-store" }, opts || {}));
    const body = await r.json().catch(() => ({}));
    if (!r.ok && !body.decided) throw new Error(body.error || r.status + " " + r.statusText);
    return body;
  }

  function say(text, good) {
    const m = $("msg");
    m.textContent = text;
    m.className = good ? "good" : "bad";
  }

  async function loadQueue() {
    const rows = await api("/api/queue");
    state.all = rows.filter((r) => r.state === "review");
    state.rejected = rows.filter((r) => r.state === "rejected");
    state.retried = rows.filter((r) => r.state === "queued").length;
    const reasons = [...new Set(state.all.map((r) => r.reason))].sort();
    const f = $("filter");
    const keep = f.value;
    f.replaceChildren(el("option", { value: "" }, "all"));
    for (const r of reasons) f.append(el("option", { value: r }, r));
    f.value = reasons.includes(keep) ? keep : "";
    applyFilter();
    const ul = $("rejected");
    ul.replaceChildren();
    for (const r of state.rejected) {
      const li = el("li", { "data-id": r.source_id });
      const name = el("strong", { class: "open-doc", title: r.source_id + ": show its document, if it has one" }, r.source_id + " ");
      name.addEventListener("click", () => showRejected(r.source_id));
      li.append(name, el("span", {}, r.manifest + ":" + r.manifest_line + " " + r.reason));
      li.append(el("span", { class: "explain" }, r.explanation));
      rejection(li, r.source_id, r.rejection);
      ul.append(li);
    }
  }

  // rejection adds a rejected row's detail, advice and status to parent,
  // and while it needs a person a note and a button to dismiss it.
  function rejection(parent, id, rj) {
    if (!rj) return;
    if (rj.detail) parent.append(el("span", { class: "detail" }, rj.detail));
    if (rj.advice) parent.append(el("span", { class: "advice" }, rj.advice));
    let status = "no action needed";
    if (rj.dismissal) {
      const d = rj.dismissal;
      status = "dismissed by " + d.user + "@" + d.host + (d.note ? " — " + d.note : "");
    } else if (rj.open) status = "open";
    parent.append(el("span", { class: "status" }, status));
    if (!rj.open) return;
    const box = el("span", { class: "dismiss" });
    const note = el("input", { type: "text", class: "dismiss-note", maxlength: "500", placeholder: "note (no patient data)", "aria-label": "note for dismissing " + id });
    const btn = el("button", { type: "button", class: "dismiss-btn" }, "Dismiss");
    btn.addEventListener("click", () => dismiss(id, rj.version, note.value));
    box.append(note, btn);
    parent.append(box);
  }

  // dismiss acknowledges the rejected row id as shown at version: it
  // stays rejected and no longer needs a person.
  async function dismiss(id, version, note) {
    let res;
    try {
      res = await api("/api/decide", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
        body: JSON.stringify({ action: "dismiss", ids: [id], note: note, since: { [id]: version } }),
      });
    } catch (err) {
      say(err.message);
      return;
    }
    const d = res.decided[0];
    say(d.ok ? id + " dismiss: " + d.message : d.message, d.ok);
    const msg = $("msg").textContent;
    await loadQueue();
    if (state.doc && state.doc.source_id === id) {
      state.preload.delete(id);
      try {
        state.doc = await entry(id).doc;
        renderDoc();
      } catch (err) {
        say(err.message);
        return;
      }
    }
    say(msg, d.ok);
  }

  // showRejected shows the document of a rejected row (a row rejected
  // at admission has none).
  async function showRejected(id) {
    say("");
    try {
      state.doc = await entry(id).doc;
    } catch (err) {
      state.preload.delete(id);
      say(err.message);
      return;
    }
    state.current = -1;
    state.page = 0;
    renderDoc();
    await showPage();
  }

  function applyFilter() {
    const reason = $("filter").value;
    const id = state.doc && state.doc.source_id;
    state.queue = state.all.filter((r) => !reason || r.reason === reason);
    const ul = $("queue");
    ul.replaceChildren();
    state.queue.forEach((r, i) => {
      const li = el("li", { "data-id": r.source_id });
      const box = el("input", { type: "checkbox", class: "pick", "aria-label": "select " + r.source_id });
      box.checked = state.selected.has(r.source_id);
      box.addEventListener("click", (ev) => {
        ev.stopPropagation();
        toggle(r.source_id, box.checked);
      });
      li.append(box, el("span", { class: "id", title: r.source_id }, r.source_id), el("span", { class: "reason" }, r.reason));
      if (r.detail) li.append(el("span", { class: "detail" }, r.detail));
      if (state.decided.has(r.source_id)) li.classList.add("decided");
      li.addEventListener("click", () => show(i));
      ul.append(li);
    });
    $("count").textContent = state.queue.length + " in review" + (reason ? " (" + reason + ")" : "") +
      (state.retried > 0 ? "; " + state.retried + " sent back, read again by the next refbatch run" : "");
    const at = state.queue.findIndex((r) => r.source_id === id);
    state.current = at;
    mark();
    const none = state.queue.length === 0;
    $("select-reason").disabled = $("select-none").disabled = none;
    // A document in review no longer listed (decided here or elsewhere)
    // does not stay on screen with live buttons; a rejected one the
    // person opened does.
    if (none && (!state.doc || state.doc.state === "review")) emptyLane();
    if (at < 0 && !none && !state.doc) show(0);
  }

  // emptyLane says that no document is in review (the filter lists only
  // the reasons some document has): nothing of the last document stays on
  // screen, and the buttons that decide are disabled.
  function emptyLane() {
    state.doc = null;
    state.current = -1;
    state.showing++; // a page still loading is not shown
    $("head").hidden = $("decide").hidden = $("work").hidden = true;
    for (const b of ["btn-accept", "btn-reject", "btn-retry"]) $(b).disabled = true;
    $("empty").hidden = false;
    $("empty").textContent = "The review lane is empty: no document is waiting for a person." + (state.retried > 0
      ? " " + state.retried + (state.retried === 1 ? " document" : " documents") + " sent back to be read again (retry) wait" + (state.retried === 1 ? "s" : "") +
        " for the next refbatch run of the manifest, into this --out."
      : "");
    mark();
  }

  function toggle(id, on) {
    if (on) state.selected.add(id);
    else state.selected.delete(id);
    for (const li of $("queue").children) {
      if (li.dataset.id === id) li.querySelector(".pick").checked = on;
    }
    const n = state.selected.size;
    $("bulk-note").textContent = n > 0 ? "decides the " + n + " selected" : "";
  }

  function mark() {
    for (const li of $("queue").children) {
      li.classList.toggle("current", state.doc !== null && li.dataset.id === state.doc.source_id);
    }
  }

  // fetchImage gets a page image as a blob URL, kept while its document is.
  async function fetchImage(id, page) {
    const d = await entry(id).doc;
    const p = (d.pages_read || []).find((x) => x.index === page);
    let q = "id=" + encodeURIComponent(id) + "&page=" + page + "&w=" + width;
    const c = p && p.canvas;
    if (c && p.dpi > 0 && p.width > 0 && p.height > 0) {
      // The canvas OCR read (turned upright and deskewed as it was), so
      // that every box, in that canvas's pixels, sits on its ink.
      q += "&dpi=" + p.dpi + "&cw=" + p.width + "&ch=" + p.height + "&m=" + c.matrix.join(",");
    } else {
      // Read before the canvas was recorded: turned as OCR turned it.
      q += "&rot=" + (p && [90, 180, 270].includes(p.rotation) ? p.rotation : 0);
    }
    const r = await fetch("/api/page?" + q, { credentials: "same-origin", cache: "no-store" });
    if (!r.ok) {
      const body = await r.json().catch(() => ({}));
      throw new Error(body.error || "page image: " + r.status);
    }
    const blob = await r.blob();
    return { url: URL.createObjectURL(blob), w: +r.headers.get("X-Page-Width"), h: +r.headers.get("X-Page-Height") };
  }

  // entry is the preloaded document id (its data and page images).
  function entry(id) {
    let e = state.preload.get(id);
    if (!e) {
      e = { doc: api("/api/doc?id=" + encodeURIComponent(id)), images: new Map() };
      state.preload.set(id, e);
    }
    return e;
  }

  function image(id, page) {
    const e = entry(id);
    if (!e.images.has(page)) e.images.set(page, fetchImage(id, page));
    return e.images.get(page);
  }

  function forget(keep) {
    for (const [id, e] of state.preload) {
      if (keep.has(id)) continue;
      for (const p of e.images.values()) p.then((i) => URL.revokeObjectURL(i.url), () => {});
      state.preload.delete(id);
    }
  }

  async function show(i) {
    if (i < 0 || i >= state.queue.length) return;
    state.current = i;
    const id = state.queue[i].source_id;
    say("");
    try {
      state.doc = await entry(id).doc;
    } catch (err) {
      state.preload.delete(id);
      say(err.message);
      return;
    }
    state.page = 0;
    renderDoc();
    await showPage();
    // Preload the next document, and drop all but it and this one.
    const next = state.queue[i + 1];
    const keep = new Set([id]);
    if (next) {
      keep.add(next.source_id);
      entry(next.source_id).doc.then(() => image(next.source_id, 0)).catch(() => {});
    }
    forget(keep);
  }

  function fact(dl, name, value) {
    dl.append(el("dt", {}, name), el("dd", {}, value));
  }

  function renderDoc() {
    const d = state.doc;
    $("empty").hidden = true;
    $("head").hidden = $("work").hidden = false;
    $("decide").hidden = d.state !== "review";
    for (const b of ["btn-accept", "btn-reject", "btn-retry"]) $(b).disabled = d.state !== "review";
    $("doc-title").textContent = d.source_id + " — " + d.manifest + " line " + d.manifest_line;
    $("doc-reason").textContent = d.state + (d.reason ? " " + d.reason : "");
    $("doc-explain").textContent = d.explanation || "";
    const dl = $("doc-facts");
    dl.replaceChildren();
    if (d.detail) fact(dl, "found", d.detail);
    fact(dl, "source", d.source_path || "(the manifest cannot be read" + (d.manifest_error ? ": " + d.manifest_error : "") + ")");
    if (d.manifest_changed && d.manifest_changed.length) {
      fact(dl, "manifest", "edited since this row was admitted: " + d.manifest_changed.join(", ") +
        " differ from the admitted row; the text was checked against the admitted values, not these");
    }
    fact(dl, "pages", String(d.pages));
    if (d.band) fact(dl, "confidence", d.mean_confidence + " (" + d.band + ")");
    fact(dl, "attempts", String(d.attempts));
    if (d.artifact_error) fact(dl, "artifact", d.artifact_error);
    const rj = $("doc-rejection");
    rj.replaceChildren();
    rejection(rj, d.source_id, d.rejection);
    const fl = $("fields");
    fl.replaceChildren();
    for (const f of d.fields) {
      const where = f.found ? "found on page " + (f.page + 1) : "not found in the text";
      const edited = f.changed ? " (edited since admission: not the admitted value)" : "";
      fl.append(el("li", { class: f.found ? "found" : "missing" }, f.name + " " + f.value + ": " + where + edited));
    }
    const pages = d.pages_read || [];
    $("text").textContent = pages.map((p) => "— page " + (p.index + 1) + " —\n" + p.text).join("\n");
    const tl = $("transcriptions");
    tl.replaceChildren();
    for (const t of d.transcriptions || []) {
      const what = t.field ? " (corrects " + t.field + ")" : "";
      const tp = pages.find((x) => x.index === t.page);
      const at = t.box && tp ? " " + where(t.box, tp, false) : "";
      const li = el("li", {}, "page " + (t.page + 1) + at + what + ", by " + t.user + "@" + t.host + ": " + t.text + " ");
      if (t.id && d.state === "review") {
        const btn = el("button", { type: "button", class: "withdraw-btn" }, "Withdraw");
        btn.addEventListener("click", () => withdraw(t));
        li.append(btn);
      }
      tl.append(li);
    }
    for (const t of d.withdrawn_transcriptions || []) {
      const w = t.withdrawn || {};
      tl.append(el("li", { class: "withdrawn" }, "page " + (t.page + 1) + ", by " + t.user + "@" + t.host + ": withdrawn by " +
        w.user + "@" + w.host + (w.note ? " — " + w.note : "") + " (kept in custody, in no export)"));
    }
    state.region = null;
    $("region").textContent = "no region chosen";
    delete $("region").dataset.box;
    const hl = $("history");
    hl.replaceChildren();
    for (const e of d.history) {
      let t = e.at.replace("T", " ").replace(/\.\d+Z$/, "Z") + " " + e.kind;
      if (e.decision) t += ": " + e.decision.action + " by " + e.decision.user + "@" + e.decision.host + (e.decision.note ? " — " + e.decision.note : "");
      else if (e.to) t += " → " + e.to;
      hl.append(el("li", {}, t));
    }
    mark();
  }

  // showPage shows page state.page of state.doc. The old page goes at
  // once: its image is hidden, its boxes taken down and the label says
  // which page is loading; the new label and boxes are drawn only when the
  // new image has loaded and decoded, and a load no longer wanted (another
  // page or document asked for since) is dropped.
  async function showPage() {
    const d = state.doc;
    const page = state.page;
    const ticket = ++state.showing;
    const n = Math.max(d.pages, 1);
    const stage = $("stage"), pimg = $("page-img");
    stage.classList.add("loading");
    stage.setAttribute("aria-busy", "true");
    pimg.hidden = true;
    $("overlay").replaceChildren();
    $("page-no").textContent = "loading page " + (page + 1) + " of " + n + "…";
    let img;
    try {
      img = await image(d.source_id, page);
      if (ticket !== state.showing) return;
      pimg.src = img.url;
      await pimg.decode().catch(() => {});
    } catch (err) {
      if (ticket !== state.showing) return;
      say(err.message);
      pimg.removeAttribute("src");
      $("page-no").textContent = "page " + (page + 1) + " of " + n + ": no image";
      stage.classList.remove("loading");
      stage.removeAttribute("aria-busy");
      return;
    }
    if (ticket !== state.showing) return;
    pimg.dataset.doc = d.source_id;
    pimg.dataset.page = String(page);
    pimg.hidden = false;
    $("page-no").textContent = "page " + (page + 1) + " of " + n;
    drawOverlay(d, page, img);
    stage.classList.remove("loading");
    stage.removeAttribute("aria-busy");
  }

  function rect(svg, box, cls, title) {
    const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    r.setAttribute("x", box[0]);
    r.setAttribute("y", box[1]);
    r.setAttribute("width", Math.max(box[2] - box[0], 1));
    r.setAttribute("height", Math.max(box[3] - box[1], 1));
    r.setAttribute("class", cls);
    if (title) {
      const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
      t.textContent = title;
      r.append(t);
    }
    svg.append(r);
  }

  // kindNames are the handwritten regions' kinds in words.
  const kindNames = { note: "handwritten note", signature: "signature", stamp: "stamp", mark: "mark made by hand" };

  // drawOverlay draws the words read on the page, in the recognised
  // image's pixels: the low-confidence ones marked, the unread regions
  // and handwriting outlined, the manifest fields found.
  function drawOverlay(d, index, img) {
    const svg = $("overlay");
    svg.replaceChildren();
    const p = (d.pages_read || []).find((x) => x.index === index);
    const w = p && p.width ? p.width : img.w;
    const h = p && p.height ? p.height : img.h;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.dataset.page = String(index);
    state.dims = { w: w, h: h };
    for (const t of d.transcriptions || []) {
      if (t.page === index) rect(svg, t.box, "typed", "transcribed: " + t.text);
    }
    if (state.region && state.region.page === index) rect(svg, state.region.box, "pick", "chosen region");
    if (!p) return;
    for (const word of p.words || []) {
      rect(svg, word.box, word.conf < lowConf ? "word low" : "word", word.text + " (" + Math.round(word.conf) + ")");
    }
    for (const box of p.uncovered_regions || []) rect(svg, box, "unread", "not read");
    for (const hw of p.handwriting_regions || []) {
      const box = Array.isArray(hw) ? hw : hw.box;
      // A region recorded before kinds were told apart is a note.
      const kind = hw.kind || "note";
      const what = kindNames[kind] || kind;
      if (box) rect(svg, box, "hand " + kind, kind === "note" ? what + (hw.read ? ", read" : ", not read") : what + ", no note");
    }
    for (const f of d.fields) {
      if (f.found && f.page === index) rect(svg, f.box, "field", f.name);
    }
  }

  // askOnce asks once, in the page, whether to go on: a modal dialog whose
  // Confirm button has the focus (Enter), closed by Cancel or Escape. It
  // resolves true only when confirmed.
  function askOnce(question, yes) {
    const dlg = $("confirm");
    $("confirm-text").textContent = question;
    $("confirm-yes").textContent = yes;
    return new Promise((resolve) => {
      const done = (ok) => {
        dlg.removeEventListener("close", closed);
        if (dlg.open) dlg.close();
        resolve(ok);
      };
      const closed = () => done(false);
      dlg.addEventListener("close", closed);
      $("confirm-yes").onclick = () => done(true);
      $("confirm-no").onclick = () => done(false);
      dlg.showModal();
      $("confirm-yes").focus();
    });
  }

  async function decide(action) {
    if (!state.doc || state.doc.state !== "review" || $("confirm").open) return;
    const ids = state.selected.size > 0 ? [...state.selected] : [state.doc.source_id];
    if (action === "reject" || ids.length > 1) {
      const what = ids.length > 1 ? ids.length + " documents" : ids[0];
      if (!(await askOnce(action + " " + what + "?", action[0].toUpperCase() + action.slice(1) + " " + what))) {
        say(action + " cancelled");
        return;
      }
    }
    const since = {};
    if (state.selected.size === 0) since[state.doc.source_id] = state.doc.version;
    const body = { action: action, ids: ids, note: $("note").value, since: since };
    const dpi = $("retry-dpi").value;
    if (action === "retry" && dpi) body.retry = { dpi: +dpi };
    let res;
    try {
      res = await api("/api/decide", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
        body: JSON.stringify(body),
      });
    } catch (err) {
      say(err.message);
      return;
    }
    const bad = res.decided.filter((d) => !d.ok);
    for (const d of res.decided) {
      if (d.ok) state.decided.add(d.id);
      state.preload.delete(d.id);
      toggle(d.id, false);
    }
    if (bad.length > 0) {
      say(bad.map((d) => d.message).join("; "));
      // Show the document as it is now.
      const cur = state.doc.source_id;
      state.preload.delete(cur);
      await loadQueue();
      const i = state.queue.findIndex((r) => r.source_id === cur);
      if (i >= 0) await show(i);
      else {
        try {
          state.doc = await entry(cur).doc;
          renderDoc();
        } catch (err) {
          say(err.message);
        }
      }
      return;
    }
    say(res.decided.length + " decided: " + res.decided.map((d) => d.id + " " + d.message).join("; "), true);
    $("note").value = "";
    const at = state.current;
    await loadQueue();
    const msg = $("msg").textContent;
    const undoable = action === "accept" || action === "reject" ? res.decided.map((d) => d.id) : [];
    state.doc = null;
    if (state.queue.length === 0) emptyLane();
    else await show(Math.min(at, state.queue.length - 1));
    say(msg, true);
    if (undoable.length > 0) offerUndo(undoable, action);
  }

  // offerUndo adds to the message a button that takes back the decision
  // action just made about ids: they are in review again (review undo).
  // Each is undone only while that decision is still its latest event
  // (the undo carries it as since), never a later one made elsewhere.
  function offerUndo(ids, action) {
    const btn = el("button", { type: "button", id: "btn-undo" }, "Undo");
    btn.addEventListener("click", async () => {
      let res;
      try {
        const since = {};
        for (const id of ids) {
          const d = await api("/api/doc?id=" + encodeURIComponent(id));
          const last = d.history[d.history.length - 1];
          if (last && last.id === d.version && last.decision && last.decision.action === action && last.decision.user === state.user) since[id] = d.version;
        }
        const mine = ids.filter((id) => id in since);
        if (mine.length === 0) throw new Error("nothing to undo: the decision is no longer the latest (decided again since)");
        res = await api("/api/decide", {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
          body: JSON.stringify({ action: "undo", ids: mine, note: "", since: since }),
        });
      } catch (err) {
        say(err.message);
        return;
      }
      for (const d of res.decided) {
        state.preload.delete(d.id);
        if (d.ok) state.decided.delete(d.id);
      }
      await loadQueue();
      const i = state.queue.findIndex((r) => r.source_id === ids[0]);
      if (i >= 0) await show(i);
      say(res.decided.map((d) => d.id + " " + (d.ok ? "undo: " : "") + d.message).join("; "), res.decided.every((d) => d.ok));
    });
    $("msg").append(" ", btn);
  }

  // withdraw takes back the transcription t of the document shown, once
  // confirmed: its text leaves the exports and stays in custody.
  async function withdraw(t) {
    const d = state.doc;
    if (!d || !(await askOnce("withdraw the transcription of page " + (t.page + 1) + "?", "Withdraw it"))) return;
    try {
      await api("/api/withdraw", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
        body: JSON.stringify({ id: d.source_id, since: d.version, transcription: t.id, note: "" }),
      });
    } catch (err) {
      say(err.message);
      return;
    }
    const page = state.page;
    state.preload.delete(d.source_id);
    try {
      state.doc = await entry(d.source_id).doc;
    } catch (err) {
      say(err.message);
      return;
    }
    state.page = page;
    renderDoc();
    await showPage();
    say("transcription of page " + (t.page + 1) + " withdrawn for " + d.source_id, true);
  }

  // point is where a mouse event is on the page, in the overlay's pixels,
  // clamped to the page: a drag that ends off the image makes a box that
  // ends at its edge, never one the desk refuses as off the page.
  function point(ev) {
    const r = $("stage").getBoundingClientRect();
    const clamp = (v, hi) => Math.min(Math.max(Math.round(v), 0), hi);
    return [clamp(((ev.clientX - r.left) / r.width) * state.dims.w, state.dims.w), clamp(((ev.clientY - r.top) / r.height) * state.dims.h, state.dims.h)];
  }

  // outlined is the unread or handwriting region of the page at pt, if any.
  function outlined(pt) {
    const p = (state.doc.pages_read || []).find((x) => x.index === state.page);
    if (!p) return null;
    const boxes = (p.uncovered_regions || []).concat((p.handwriting_regions || []).map((hw) => (Array.isArray(hw) ? hw : hw.box)));
    return boxes.find((b) => b && pt[0] >= b[0] && pt[0] <= b[2] && pt[1] >= b[1] && pt[1] <= b[3]) || null;
  }

  // where names box, on the page read p (its pixels), in words: where it
  // is on the page and, with sized, how large it is, in centimetres when
  // the page's resolution is known, else as a share of the page.
  function where(box, p, sized) {
    const w = (p && p.width) || state.dims.w, h = (p && p.height) || state.dims.h;
    const third = (v, words) => words[v < 1 / 3 ? 0 : v < 2 / 3 ? 1 : 2];
    const across = third((box[0] + box[2]) / 2 / w, ["left", "", "right"]);
    const down = third((box[1] + box[3]) / 2 / h, ["top", "", "bottom"]);
    const at = "at the " + ([down, across].filter(Boolean).join(" ") || "middle");
    if (!sized) return at;
    const bw = box[2] - box[0], bh = box[3] - box[1];
    if (p && p.dpi > 0) {
      const cm = (v) => ((v / p.dpi) * 2.54).toFixed(1);
      return at + ", " + cm(bw) + " cm wide and " + cm(bh) + " cm high";
    }
    return at + ", " + Math.round((100 * bw) / w) + "% of the page wide and " + Math.round((100 * bh) / h) + "% high";
  }

  function choose(box) {
    state.region = { page: state.page, box: box };
    const p = (state.doc.pages_read || []).find((x) => x.index === state.page);
    $("region").textContent = "page " + (state.page + 1) + ", region " + where(box, p, true);
    $("region").dataset.box = box.join(","); // in the page's pixels, as saved
    image(state.doc.source_id, state.page).then((img) => drawOverlay(state.doc, state.page, img), () => {});
  }

  function dragStart(ev) {
    if (!state.doc || ev.button !== 0 || $("stage").classList.contains("loading")) return;
    ev.preventDefault();
    state.drag = point(ev);
  }

  function dragEnd(ev) {
    if (!state.drag) return;
    const a = state.drag, b = point(ev);
    state.drag = null;
    if (Math.abs(b[0] - a[0]) < 8 && Math.abs(b[1] - a[1]) < 8) {
      const box = outlined(b);
      if (box) choose(box);
      return;
    }
    choose([Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])]);
  }

  async function transcribe() {
    if (!state.doc) return;
    if (!state.region) {
      say("choose a region first: drag over the page, or click an outlined region");
      return;
    }
    const d = state.doc;
    const body = { id: d.source_id, since: d.version, page: state.region.page, box: state.region.box, field: $("tr-field").value, text: $("tr-text").value };
    try {
      await api("/api/transcribe", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
        body: JSON.stringify(body),
      });
    } catch (err) {
      say(err.message);
      return;
    }
    $("tr-text").value = "";
    const page = state.page;
    state.preload.delete(d.source_id);
    try {
      state.doc = await entry(d.source_id).doc;
    } catch (err) {
      say(err.message);
      return;
    }
    state.page = page;
    renderDoc();
    await showPage();
    say("transcription saved for " + d.source_id + ", page " + (page + 1), true);
  }

  function typing(ev) {
    const t = ev.target;
    return t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA");
  }

  function keys(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || $("confirm").open) return;
    if (typing(ev)) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    const act = {
      j: () => show(state.current + 1),
      k: () => show(state.current - 1),
      a: () => decide("accept"),
      r: () => decide("reject"),
      t: () => decide("retry"),
      x: () => state.doc && toggle(state.doc.source_id, !state.selected.has(state.doc.source_id)),
      n: () => $("note").focus(),
      "]": () => turn(1),
      "[": () => turn(-1),
    }[ev.key];
    if (act) {
      ev.preventDefault();
      act();
    }
  }

  function turn(by) {
    if (!state.doc) return;
    const p = state.page + by;
    if (p < 0 || p >= Math.max(state.doc.pages, 1)) return;
    state.page = p;
    showPage();
  }

  // session is this browser's session: the one it has (its cookie), or
  // one opened with the code refbatch desk printed, which the person
  // types here. The code goes in a POST body only, never in a URL, so no
  // history entry holds it; the desk takes each code once.
  async function session() {
    const r = await fetch("/api/session", { credentials: "same-origin", cache: "no-store" });
    if (r.ok) {
      const s = await r.json();
      if (s.csrf) return s;
    }
    $("layout").hidden = true;
    $("open").hidden = false;
    $("code").focus();
    return new Promise((resolve) => {
      $("open").addEventListener("submit", async (ev) => {
        ev.preventDefault();
        try {
          const s = await api("/api/open", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ code: $("code").value.trim() }),
          });
          $("code").value = "";
          $("open").hidden = true;
          $("layout").hidden = false;
          resolve(s);
        } catch (err) {
          $("open-msg").textContent = err.message;
        }
      });
    });
  }

  async function start() {
    const s = await session();
    state.csrf = s.csrf;
    state.user = s.user;
    $("who").textContent = "deciding as " + s.user + "@" + s.host;
    $("filter").addEventListener("change", () => {
      state.doc = null;
      applyFilter();
      if (state.queue.length > 0) show(0);
    });
    $("btn-accept").addEventListener("click", () => decide("accept"));
    $("btn-reject").addEventListener("click", () => decide("reject"));
    $("btn-retry").addEventListener("click", () => decide("retry"));
    $("prev-page").addEventListener("click", () => turn(-1));
    $("next-page").addEventListener("click", () => turn(1));
    $("show-words").addEventListener("change", (ev) => $("overlay").classList.toggle("hidden", !ev.target.checked));
    $("select-reason").addEventListener("click", () => state.queue.forEach((r) => toggle(r.source_id, true)));
    $("select-none").addEventListener("click", () => [...state.selected].forEach((id) => toggle(id, false)));
    document.addEventListener("keydown", keys);
    $("stage").addEventListener("mousedown", dragStart);
    document.addEventListener("mouseup", dragEnd);
    $("btn-transcribe").addEventListener("click", transcribe);
    await loadQueue();
  }

  document.addEventListener("DOMContentLoaded", () => start().catch((err) => say(err.message)));
})();
