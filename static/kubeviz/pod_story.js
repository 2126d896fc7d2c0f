// A pod's story: a click on any pod chip ([data-pod]) of the run page opens #pod-story with
// that pod's events up to this viewer's playhead (GET data-pod-url?name=ns/name&seq=N, HTML
// from kubeviz/web/views/pod_story.py). Each line's "show" moves the playhead there through
// the viewer's socket (window.kubevizPlayback, playback.js); without a socket the link opens
// the run at that event. The panel marks the line at the playhead and fetches again when the
// playhead moves past what it shows.
(function () {
  "use strict";

  function init() {
    var page = document.querySelector(".run-page[data-pod-url]");
    var panel = document.getElementById("pod-story");
    if (!page || !panel) return;
    var body = panel.querySelector(".pod-story-body");
    var url = page.dataset.podUrl;
    var current = null;  // the pod shown
    var upto = -1;  // the last event the shown story covers
    var opener = null;  // the chip that opened the panel, focused again on close
    var refetch = null;

    function position() {
      var p = window.kubevizPlayback && window.kubevizPlayback.position();
      return p === null || p === undefined || isNaN(p) ? null : p;
    }

    function mark(pos) {
      if (pos === null) return;
      var lines = body.querySelectorAll(".story-line");
      var now = null;
      lines.forEach(function (line) {
        var seq = Number(line.dataset.seq);
        line.classList.toggle("ahead", seq > pos);
        line.classList.remove("is-now");
        if (seq <= pos) now = line;
      });
      if (now) now.classList.add("is-now");
    }

    function load(pod, seq) {
      var query = "?name=" + encodeURIComponent(pod) + (seq === null ? "" : "&seq=" + seq);
      return fetch(url + query, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
        .then(function (response) {
          return response.text().then(function (text) {
            if (!response.ok && (response.headers.get("Content-Type") || "").indexOf("text/html") !== 0) {
              body.textContent = "Could not load the story: " + text;  // a 400 names the parameter
              return;
            }
            var scroll = panel.scrollTop;
            body.innerHTML = text;
            panel.scrollTop = scroll;
            var story = body.querySelector(".story");
            upto = story ? Number(story.dataset.upto) : -1;
            mark(position());
          });
        })
        .catch(function () { body.textContent = "Could not load the story (network)."; });
    }

    function open(pod, chip) {
      var changed = pod !== current;
      current = pod;
      opener = chip || null;
      panel.hidden = false;
      if (changed) { body.innerHTML = '<p class="empty">Loading ' + "…</p>"; panel.scrollTop = 0; }
      load(pod, position()).then(function () {
        var close = panel.querySelector(".pod-story-close");
        if (changed && close) close.focus();
      });
    }

    function close() {
      panel.hidden = true;
      current = null;
      if (opener && document.contains(opener)) opener.focus();
    }

    page.addEventListener("click", function (evt) {
      var chip = evt.target.closest && evt.target.closest("button.chip[data-pod]");
      if (chip && !panel.contains(chip)) { evt.preventDefault(); open(chip.dataset.pod, chip); return; }
      var seek = evt.target.closest && evt.target.closest("#pod-story a[data-seek]");
      if (seek && window.kubevizPlayback && window.kubevizPlayback.send("seek", Number(seek.dataset.seek))) {
        evt.preventDefault();
        mark(Number(seek.dataset.seek));
      }
    });
    panel.querySelector(".pod-story-close").addEventListener("click", close);
    document.addEventListener("keydown", function (evt) {
      if (evt.key === "Escape" && !panel.hidden) close();
    });
    // The playhead moved: mark the line at it; past the story's end, fetch the rest (once it settles).
    document.addEventListener("kubeviz:playhead", function (evt) {
      if (panel.hidden || !current) return;
      var pos = evt.detail.position;
      mark(pos);
      if (pos > upto) {
        clearTimeout(refetch);
        var pod = current;
        refetch = setTimeout(function () { if (pod === current) load(pod, pos); }, 400);
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
