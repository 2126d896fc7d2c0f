// A viewer's playback page (run or comparison). htmx does the talking (ws-connect, ws-send);
// this keeps the slider and buttons in step with the viewer's playhead line, remembers the
// viewer's speed and whether they like to start playing, resumes at the playhead after a
// reconnect, and draws a big cluster's node grid from its data (kubeviz/web/playback/node_grid.py):
// the cells, their hover titles, a frame's changed cells, the search box and click-for-card.
(function () {
  "use strict";

  function init() {
    var page = document.querySelector(".playback[data-playhead]");
    if (!page) return;
    var scrub = page.querySelector(".scrub");
    var output = page.querySelector(".scrub-value");
    var speed = page.querySelector(".speed-select");
    var storageKey = page.dataset.storage || "kubeviz-playback";
    var dragging = false;
    var opened = 0;
    var socket = null;  // htmx's socket wrapper, for the slider's last word
    var resuming = false;  // reconnected: the next message is the stale starting frame
    var prefs = {};
    try { prefs = JSON.parse(localStorage.getItem(storageKey) || "{}") || {}; } catch (e) { prefs = {}; }

    // Before htmx opens the socket: start at the page's moment, at the viewer's remembered speed.
    var url = page.getAttribute("ws-connect");
    if (url && prefs.speed) url += (url.indexOf("?") < 0 ? "?" : "&") + "speed=" + encodeURIComponent(prefs.speed);
    if (url && prefs.autoplay) url += "&play=1";
    // Present mode: a link with ?presenter=<key> follows that presenter's playhead.
    var presenter = new URLSearchParams(window.location.search).get("presenter");
    if (url && presenter && /^[A-Za-z0-9_-]{8,40}$/.test(presenter)) {
      url += (url.indexOf("?") < 0 ? "?" : "&") + "presenter=" + encodeURIComponent(presenter);
    }
    if (url) page.setAttribute("ws-connect", url);
    if (speed && prefs.speed) speed.value = prefs.speed;

    function save() { try { localStorage.setItem(storageKey, JSON.stringify(prefs)); } catch (e) { /* private mode */ } }

    function playhead() { return document.getElementById(page.dataset.playhead); }

    function sync() {
      var line = playhead();
      if (!line) return;
      var d = line.dataset;
      page.classList.toggle("is-playing", d.playing === "1" || d.follow === "1");
      page.classList.toggle("is-done", d.complete === "1");
      if (scrub) {
        scrub.min = d.start;
        scrub.max = Math.max(Number(d.start), Number(d.end));
        if (!dragging) scrub.value = d.position;
        if (output) output.textContent = scrub.value;
      }
      var fork = document.getElementById("fork-seq");
      if (fork) fork.value = d.position;
      if (speed && d.speed && document.activeElement !== speed) speed.value = d.speed === "0" ? "max" : d.speed;
      // For other scripts of the page (a lesson's script, a pod's story): where this viewer is.
      document.dispatchEvent(new CustomEvent("kubeviz:playhead", { detail: {
        position: Number(d.position), end: Number(d.end), playing: d.playing === "1", complete: d.complete === "1",
      } }));
    }

    // The page's other scripts move this viewer's playhead through the same socket:
    // kubevizPlayback.send("seek", 42), .send("pause"), .send("play").
    window.kubevizPlayback = {
      send: function (action, value) {
        if (!socket) return false;
        // A follower's place is the presenter's: the page's scripts (a lesson's) do not move it;
        // the viewer's own buttons do, and detach them (kubeviz/web/playback/consumers/base.py).
        if (window.kubevizPlayback.following() && action !== "moment") return true;
        var message = { action: action };
        if (value !== undefined) message.value = value;
        socket.send(JSON.stringify(message));
        return true;
      },
      position: function () { var line = playhead(); return line ? Number(line.dataset.position) : null; },
      // Until the socket's first word, a page opened by a presenter's link counts as following.
      following: function () {
        var bar = presentBar();
        if (!bar) return false;
        return bar.dataset.role === "follower" || (bar.dataset.role === "" && Boolean(presenter));
      },
      // A lesson's script tells the socket its moment; the server passes on only a presenter's.
      moment: function (value) { return window.kubevizPlayback.send("moment", String(value)); },
    };

    // Present mode's bar: the link to give the class, the token that takes the presentation back
    // (kept in browser storage per page, so that a reload, a reconnect or a second tab of this page
    // presents again), and the presenter's lesson moment for the page's other scripts.
    var by = new URLSearchParams(window.location.search).get("by");
    var presentKey = "kubeviz-present:" + window.location.pathname + (by ? "?by=" + by : "");
    var presentToken = null;
    var presentedMoment = null;
    function storedToken() { try { return localStorage.getItem(presentKey); } catch (e) { return null; } }
    function keepToken(token) {
      try { if (token) localStorage.setItem(presentKey, token); else localStorage.removeItem(presentKey); } catch (e) { /* private mode */ }
    }
    function presentBar() { return page.querySelector(".present-bar"); }
    function syncPresent() {
      var bar = presentBar();
      if (!bar) return;
      var d = bar.dataset;
      if (d.role === "presenter" && d.token) {
        if (d.token !== presentToken) keepToken(d.token);
        presentToken = d.token;
      } else if (d.forget === "1" && (presentToken || storedToken())) {
        presentToken = null;  // that presentation ended: Present starts a new one
        keepToken(null);
      }
      var link = bar.querySelector(".present-link");
      if (link && d.key) {
        // The follow link keeps how the page steps (a comparison's ?by=): the presentation is of that recording.
        link.value = window.location.origin + window.location.pathname + "?presenter=" + d.key + (by ? "&by=" + encodeURIComponent(by) : "");
      }
      page.classList.toggle("is-following", d.role === "follower");
      if (d.role === "follower" && d.moment !== undefined && d.moment !== presentedMoment) {
        presentedMoment = d.moment;
        document.dispatchEvent(new CustomEvent("kubeviz:presenter", { detail: { moment: d.moment } }));
      }
    }
    page.addEventListener("click", function (evt) {
      var copy = evt.target.closest && evt.target.closest(".present-copy");
      if (!copy) return;
      var link = copy.closest(".present-bar").querySelector(".present-link");
      link.select();
      if (navigator.clipboard) navigator.clipboard.writeText(link.value).catch(function () { document.execCommand("copy"); });
      else document.execCommand("copy");
      copy.textContent = "Copied";
    });

    if (scrub) {
      scrub.addEventListener("pointerdown", function () { dragging = true; });
      document.addEventListener("pointerup", function () { dragging = false; });
      scrub.addEventListener("input", function () { if (output) output.textContent = scrub.value; });
      // The throttled ws-send drops inputs that come within its window, so the slider's final
      // position (mouse up, a key press) is always sent here.
      scrub.addEventListener("change", function () {
        if (socket) socket.send(JSON.stringify({ action: "seek", value: Number(scrub.value) }));
      });
    }
    if (speed) speed.addEventListener("change", function () { prefs.speed = speed.value; save(); });
    page.querySelectorAll(".play-btn").forEach(function (b) { b.addEventListener("click", function () { prefs.autoplay = true; save(); }); });
    page.querySelectorAll(".pause-btn").forEach(function (b) { b.addEventListener("click", function () { prefs.autoplay = false; save(); }); });

    // Keyboard: space plays / pauses, arrows step (not while typing). A held key repeats at most
    // eight times a second: well within the messages a page may send (docs/limits.md).
    var repeated = 0;
    document.addEventListener("keydown", function (evt) {
      var tag = (evt.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "select" || tag === "textarea" || evt.metaKey || evt.ctrlKey || evt.altKey) return;
      if (evt.repeat) {
        if (Date.now() - repeated < 125) { evt.preventDefault(); return; }
        repeated = Date.now();
      }
      var selector = null;
      if (evt.key === " ") selector = page.classList.contains("is-playing") ? ".pause-btn" : ".play-btn";
      else selector = '[data-key="' + evt.key + '"]';
      var button = page.querySelector(selector);
      if (button) { evt.preventDefault(); button.click(); }
    });

    // After a network blip htmx reconnects by itself; pick up where this viewer was. A presenter's
    // page (reloaded, reconnected, or a second tab; not one opened by the follow link) takes the
    // presentation back with its token, at the presentation's place.
    document.body.addEventListener("htmx:wsOpen", function (evt) {
      opened += 1;
      socket = evt.detail.socketWrapper;
      var line = playhead();
      if (opened > 1 && line) {
        resuming = true;
        evt.detail.socketWrapper.send(JSON.stringify({ action: "hello", value: Number(line.dataset.position) }));
      }
      var token = presentToken || (presenter ? null : storedToken());
      if (token) evt.detail.socketWrapper.send(JSON.stringify({ action: "resume", value: token }));
    });
    // A close the server explains is not one htmx reconnects after (1013, try again later, is:
    // htmx tries again by itself): say what happened where the controls answer. 1009: this page
    // sent a message over its limit; 1008: too many messages; 1013: too many sockets from here,
    // or a pause after a flood; 4410: the run was deleted (kubeviz/web/playback/consumers/guards.py).
    var CLOSED = {
      1008: "The live connection was closed: this page sent the server too many messages",
      1009: "The live connection was closed: this page sent the server a message over its limit",
      1013: "The live connection was refused for now",
      4410: "The live connection was closed",
    };
    document.body.addEventListener("htmx:wsClose", function (evt) {
      var closed = evt.detail && evt.detail.event;
      var line = page.querySelector(".control-message");
      if (!closed || !CLOSED[closed.code] || !line) return;
      line.classList.add("error");
      var after = closed.code === 1013 ? " The page tries again by itself." : closed.code === 4410 ? "" : " Reload the page to watch again.";
      line.textContent = CLOSED[closed.code] + " (" + (closed.reason || "code " + closed.code) + ")." + after;
    });
    // The new socket first sends the page's starting moment; the reply to "hello" (the whole
    // frame at this viewer's moment) follows, so drop the first one rather than flicker back.
    document.body.addEventListener("htmx:wsBeforeMessage", function (evt) {
      if (!resuming) return;
      resuming = false;
      evt.preventDefault();
    });
    document.body.addEventListener("htmx:wsAfterMessage", sync);
    document.body.addEventListener("htmx:wsAfterMessage", syncPresent);
    document.body.addEventListener("htmx:wsAfterMessage", function () {
      drawGrids();
      page.querySelectorAll(".node-search").forEach(function (box) {
        if (box.value.trim()) box.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
    document.body.addEventListener("htmx:afterSettle", sync);

    // The grid travels as data: data-names (space separated), data-values (one token per cell,
    // "<level><flags>.<cpu>.<memory>.<gpu>.<pods>", a sixth ".<devices>" in a cluster with DRA
    // devices (empty for a node that reaches none), or "-" for a node not added yet), and the
    // zones' .cells boxes (data-from / data-to). A frame's changes come in .grid-delta
    // (data-changes="index=token …"), applied once to the grid of its section. A grid too big for
    // one message (data-pieces="K") comes as K .grid-piece elements, each with its own data-from
    // (its first cell's index), names, values and zone boxes, drawn as each arrives.
    var FLAGS = { s: "chosen", v: "victims here", n: "nominated pod", r: "reserved", x: "rejected", c: "cordoned" };
    function escapeHtml(text) {
      return text.replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
    }
    function cellId(prefix, name) { return prefix + "cell-" + name.replace(/[^A-Za-z0-9_.-]/g, "-"); }
    function describe(name, token) {
      if (token === "-") return { cls: "cell pending", title: name + ": not added yet (it joins at t = 0)" };
      var parts = token.split(".");
      var head = /^(\d+)([a-z]*)$/.exec(parts[0]) || [null, "0", ""];
      var cls = "cell a" + head[1];
      var notes = [];
      for (var i = 0; i < head[2].length; i++) { cls += " f" + head[2][i]; notes.push(FLAGS[head[2][i]]); }
      var pods = Number(parts[4]);
      // The sixth field is the share of the node's devices in use (node_grid.cell_token), what
      // the cell's shade then says: the title names it first.
      var devices = parts.length < 6 ? "" : (parts[5] !== "" ? parts[5] + "% of its devices in use" : "no devices") + " · ";
      var title = name + ": " + devices + "cpu " + parts[1] + "% · memory " + parts[2] + "%"
        + (parts[3] !== "" ? " · GPU " + parts[3] + "%" : "")
        + " · " + pods + " pod" + (pods === 1 ? "" : "s") + (notes.length ? " · " + notes.join(", ") : "");
      return { cls: cls, title: title };
    }
    function drawCells(piece, prefix, offset) {
      var names = (piece.dataset.names || "").split(" ");
      var values = (piece.dataset.values || "").split(" ");
      piece.querySelectorAll(".cells").forEach(function (box) {
        var html = [];
        for (var i = Number(box.dataset.from); i < Number(box.dataset.to); i++) {
          var d = describe(names[i - offset], values[i - offset] || "-");
          var name = escapeHtml(names[i - offset]);
          html.push('<i id="' + escapeHtml(cellId(prefix, names[i - offset])) + '" class="' + d.cls + '" data-node="' + name
            + '" data-i="' + i + '" title="' + escapeHtml(d.title) + '" tabindex="-1"></i>');
        }
        box.innerHTML = html.join("");
      });
      piece.kubevizNames = names;
      piece.kubevizDrawn = true;
    }
    // Draws what is not drawn yet; true when it drew anything.
    function drawGrid(grid) {
      var prefix = grid.closest(".nodes-body").id.replace(/run-nodes-body$/, "");
      var names = [];
      var drew = false;
      if (grid.dataset.pieces === undefined) {
        if (grid.kubevizCells) return false;
        drawCells(grid, prefix, 0);
        names = grid.kubevizNames;
        drew = true;
      } else {
        grid.querySelectorAll(".grid-piece").forEach(function (piece) {
          if (piece.dataset.names === undefined) return;  // its slot: the piece comes in a later message
          var from = Number(piece.dataset.from);
          if (!piece.kubevizDrawn) { drawCells(piece, prefix, from); drew = true; }
          piece.kubevizNames.forEach(function (name, j) { names[from + j] = name; });
        });
        if (!drew && grid.kubevizCells) return false;
      }
      grid.kubevizCells = grid.querySelectorAll(".cell");
      grid.kubevizNames = names;
      grid.dataset.drawn = String(grid.kubevizCells.length);
      return drew;
    }
    function applyDelta(delta) {
      delta.kubevizApplied = true;
      var section = delta.closest(".nodes");
      var grid = section && section.querySelector(".node-cells[data-grid]");
      if (!grid || !grid.kubevizCells || !delta.dataset.changes) return;
      delta.dataset.changes.split(" ").forEach(function (pair) {
        var at = pair.indexOf("=");
        var index = Number(pair.slice(0, at));
        var cell = grid.kubevizCells[index];
        if (!cell) return;
        var d = describe(grid.kubevizNames[index], pair.slice(at + 1));
        // Keep what other scripts put on the cell (search match, open card, a lesson's highlight).
        var kept = Array.prototype.filter.call(cell.classList, function (c) { return !/^(cell|pending|a\d+|f[a-z])$/.test(c); });
        cell.className = d.cls + (kept.length ? " " + kept.join(" ") : "");
        cell.title = d.title;
      });
    }
    function drawGrids() {
      var drawn = 0;
      document.querySelectorAll(".node-cells[data-grid]").forEach(function (grid) { if (drawGrid(grid)) drawn += 1; });
      document.querySelectorAll(".grid-delta").forEach(function (delta) { if (!delta.kubevizApplied) applyDelta(delta); });
      // New cells: other scripts (a lesson's highlights) mark them again.
      if (drawn) document.dispatchEvent(new CustomEvent("kubeviz:grid"));
    }
    window.kubevizGrid = { draw: drawGrids };

    // The node grid: a click on a cell opens that node's card in a panel over the page (on a wide
    // screen beside the clicked cell, kept within the viewport as the page scrolls; a sheet at
    // the bottom on a phone); Escape or its button closes it. The search box marks matching
    // cells, and Enter in it (or a single match) opens the first one's card.
    var nodeUrl = page.dataset.nodeUrl;
    var PHONE = "(max-width: 600px)";  // run.css's phone layout: the card is a bottom sheet there
    var GAP = 12;  // px between the cell and its card, and kept from the viewport's edges
    function placeCard(slot) {
      var cell = slot.kubevizCell;
      if (!slot.classList.contains("open") || !cell) return;
      if (window.matchMedia(PHONE).matches || !cell.isConnected) {
        slot.style.left = slot.style.top = "";
        slot.classList.remove("beside");
        return;
      }
      slot.classList.add("beside");
      var r = cell.getBoundingClientRect();
      var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
      var w = slot.offsetWidth, h = slot.offsetHeight;
      // Right of the cell, else left of it, else over the grid as near to the cell as fits.
      var left = r.right + GAP;
      if (left + w > vw - GAP) left = r.left - GAP - w >= GAP ? r.left - GAP - w : Math.max(GAP, vw - GAP - w);
      // Its top level with the cell, moved up as far as it must to stay on screen.
      var top = Math.max(GAP, Math.min(r.top - GAP, vh - GAP - h));
      slot.style.left = Math.round(left) + "px";
      slot.style.top = Math.round(top) + "px";
    }
    function placeOpenCards() { page.querySelectorAll(".node-card-slot.open").forEach(placeCard); }
    document.addEventListener("scroll", placeOpenCards, { capture: true, passive: true });  // the page's and a zone's own scroll
    window.addEventListener("resize", placeOpenCards);
    document.addEventListener("kubeviz:grid", function () {
      // A whole grid redrawn: the card stays with the node's new cell.
      page.querySelectorAll(".node-card-slot.open").forEach(function (slot) {
        var cell = slot.kubevizCell;
        if (cell && !cell.isConnected) {
          var again = cellOf(slot.closest(".nodes"), cell.dataset.node);
          if (again) { again.classList.add("opened"); slot.kubevizCell = again; }
        }
        placeCard(slot);
      });
    });
    function cellOf(section, name) {
      var found = null;
      if (section) section.querySelectorAll(".nodes-grid .cell").forEach(function (c) { if (!found && c.dataset.node === name) found = c; });
      return found;
    }
    function closeCard(slot) {
      slot.innerHTML = "";
      slot.classList.remove("open", "beside");
      slot.style.left = slot.style.top = "";
      slot.kubevizCell = null;
    }
    function openCard(cell) {
      var slot = cell.closest(".nodes") && cell.closest(".nodes").querySelector(".node-card-slot");
      var line = playhead();
      if (!slot || !nodeUrl || !window.htmx) return;
      var seq = line ? line.dataset.position : "";
      page.querySelectorAll(".cell.opened").forEach(function (c) { c.classList.remove("opened"); });
      cell.classList.add("opened");
      var request = window.htmx.ajax("GET", nodeUrl + "?name=" + encodeURIComponent(cell.dataset.node) + "&seq=" + seq, { target: slot, swap: "innerHTML" });
      var done = function () {
        if (!slot.firstElementChild) return;
        var close = document.createElement("button");
        close.type = "button";
        close.className = "card-close";
        close.setAttribute("aria-label", "Close the node's card");
        close.textContent = "×";
        close.addEventListener("click", function () { closeCard(slot); });
        slot.insertBefore(close, slot.firstChild);
        slot.kubevizCell = cell;
        slot.classList.add("open");
        placeCard(slot);
      };
      if (request && request.then) request.then(done); else done();
    }
    document.addEventListener("keydown", function (evt) {
      if (evt.key !== "Escape") return;
      page.querySelectorAll(".node-card-slot.open").forEach(closeCard);
    });
    page.addEventListener("click", function (evt) {
      var cell = evt.target.closest && evt.target.closest(".nodes-grid .cell");
      if (cell && !cell.classList.contains("pending")) openCard(cell);
    });
    page.addEventListener("keydown", function (evt) {
      if (evt.key !== "Enter" || !evt.target.matches || !evt.target.matches(".node-search")) return;
      var first = evt.target.closest(".nodes").querySelector(".nodes-grid .cell.match");
      if (first) { evt.preventDefault(); openCard(first); }
    });
    page.addEventListener("input", function (evt) {
      if (!evt.target.matches || !evt.target.matches(".node-search")) return;
      var section = evt.target.closest(".nodes");
      var text = evt.target.value.trim().toLowerCase();
      var found = [];
      section.querySelectorAll(".nodes-grid .cell").forEach(function (cell) {
        var hit = text !== "" && cell.dataset.node.toLowerCase().indexOf(text) >= 0;
        if (cell.classList.contains("match") !== hit) cell.classList.toggle("match", hit);
        if (hit) found.push(cell);
      });
      section.classList.toggle("searching", text !== "");
      if (found.length === 1 && evt.isTrusted) openCard(found[0]);  // typed, not re-applied after an update
    });
    drawGrids();
    sync();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
