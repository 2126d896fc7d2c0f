// A viewer's playback page (run or comparison). htmx does the talking (ws-connect, ws-send);
// this keeps the slider and buttons in step with the viewer's playhead line, remembers the
// viewer's speed and whether they like to start playing, resumes at the playhead after a
// reconnect, and runs the node grid's search box and click-for-card.
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
        var message = { action: action };
        if (value !== undefined) message.value = value;
        socket.send(JSON.stringify(message));
        return true;
      },
      position: function () { var line = playhead(); return line ? Number(line.dataset.position) : null; },
    };

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

    // Keyboard: space plays / pauses, arrows step (not while typing).
    document.addEventListener("keydown", function (evt) {
      var tag = (evt.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "select" || tag === "textarea" || evt.metaKey || evt.ctrlKey || evt.altKey) return;
      var selector = null;
      if (evt.key === " ") selector = page.classList.contains("is-playing") ? ".pause-btn" : ".play-btn";
      else selector = '[data-key="' + evt.key + '"]';
      var button = page.querySelector(selector);
      if (button) { evt.preventDefault(); button.click(); }
    });

    // After a network blip htmx reconnects by itself; pick up where this viewer was.
    document.body.addEventListener("htmx:wsOpen", function (evt) {
      opened += 1;
      socket = evt.detail.socketWrapper;
      var line = playhead();
      if (opened > 1 && line) {
        resuming = true;
        evt.detail.socketWrapper.send(JSON.stringify({ action: "hello", value: Number(line.dataset.position) }));
      }
    });
    // A close the server explains (1009: this page sent a message over its limit) is not one htmx
    // reconnects after: say what happened where the controls answer.
    document.body.addEventListener("htmx:wsClose", function (evt) {
      var closed = evt.detail && evt.detail.event;
      var line = page.querySelector(".control-message");
      if (!closed || closed.code !== 1009 || !line) return;
      line.classList.add("error");
      line.textContent = "The live connection was closed: this page sent the server a message over its limit (" +
        (closed.reason || "code 1009") + "). Reload the page to watch again.";
    });
    // The new socket first sends the page's starting moment; the reply to "hello" (the whole
    // frame at this viewer's moment) follows, so drop the first one rather than flicker back.
    document.body.addEventListener("htmx:wsBeforeMessage", function (evt) {
      if (!resuming) return;
      resuming = false;
      evt.preventDefault();
    });
    document.body.addEventListener("htmx:wsAfterMessage", sync);
    document.body.addEventListener("htmx:wsAfterMessage", function () {
      page.querySelectorAll(".node-search").forEach(function (box) {
        if (box.value.trim()) box.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
    document.body.addEventListener("htmx:afterSettle", sync);

    // The node grid: a click on a cell opens that node's card; the search box marks matching
    // cells, and Enter in it (or a single match) opens the first one's card.
    var nodeUrl = page.dataset.nodeUrl;
    function openCard(cell) {
      var slot = cell.closest(".nodes") && cell.closest(".nodes").querySelector(".node-card-slot");
      var line = playhead();
      if (!slot || !nodeUrl || !window.htmx) return;
      var seq = line ? line.dataset.position : "";
      window.htmx.ajax("GET", nodeUrl + "?name=" + encodeURIComponent(cell.dataset.node) + "&seq=" + seq, { target: slot, swap: "innerHTML" });
    }
    page.addEventListener("click", function (evt) {
      var cell = evt.target.closest && evt.target.closest(".nodes-grid .cell");
      if (cell) openCard(cell);
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
        cell.classList.toggle("match", hit);
        if (hit) found.push(cell);
      });
      section.classList.toggle("searching", text !== "");
      if (found.length === 1 && evt.isTrusted) openCard(found[0]);  // typed, not re-applied after an update
    });
    sync();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
