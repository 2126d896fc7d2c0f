// The lesson player (docs/lessons.md): plays the run page's playhead to each moment of the
// lesson's script, pauses exactly there, shows the moment's text, asks its question, and
// outlines the parts of the run page the moment names. Talks to the playhead only through
// playback.js (kubevizPlayback.send and the "kubeviz:playhead" event).
(function () {
  "use strict";

  var HIGHLIGHT = "lesson-highlight";

  function init() {
    var panel = document.getElementById("lesson-panel");
    var data = document.getElementById("lesson-script");
    var runPage = document.getElementById("run-page");
    if (!panel || !data || !runPage) return;
    var moments = JSON.parse(data.textContent).moments;
    var column = Number(panel.dataset.column);
    var el = function (cls) { return panel.querySelector("." + cls); };
    var reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

    var index = Number(panel.dataset.start);  // the moment shown, or being played to
    var phase = "playing";  // playing (to moments[index]) | shown | complete | left
    var answered = {};  // moment index -> the choice picked
    var lit = [];  // selectors highlighted now
    var queue = [];  // messages waiting for the socket
    var open = false;

    function send(action, value) {
      if (open && window.kubevizPlayback && window.kubevizPlayback.send(action, value)) return;
      queue.push([action, value]);
    }
    document.body.addEventListener("htmx:wsOpen", function () {
      open = true;
      // playback.js keeps the socket in its own wsOpen handler, registered before this one.
      var waiting = queue;
      queue = [];
      waiting.forEach(function (m) { send(m[0], m[1]); });
    });

    function position() {
      var p = window.kubevizPlayback && window.kubevizPlayback.position();
      return p === null || p === undefined ? 0 : p;
    }

    // Highlights: outline every element the moment names; a missing one is simply not there.
    function applyHighlights() {
      runPage.querySelectorAll("." + HIGHLIGHT).forEach(function (n) { n.classList.remove(HIGHLIGHT); });
      lit.forEach(function (selector) {
        runPage.querySelectorAll(selector).forEach(function (n) { n.classList.add(HIGHLIGHT); });
      });
    }
    function highlight(selectors) {
      lit = selectors || [];
      applyHighlights();
      var first = runPage.querySelector("." + HIGHLIGHT);
      if (first) first.scrollIntoView({ block: "nearest", behavior: reduced ? "auto" : "smooth" });
    }
    // The run page re-renders its fragments as the playhead moves: outline them again.
    document.body.addEventListener("htmx:wsAfterMessage", applyHighlights);
    document.body.addEventListener("htmx:afterSettle", applyHighlights);
    document.addEventListener("kubeviz:grid", applyHighlights);  // a big cluster's grid was (re)drawn

    function setStatus(text) {
      var status = el("lesson-status");
      status.textContent = text;
      status.hidden = !text;
    }

    function render() {
      var m = moments[index];
      el("lesson-n").textContent = String(index + 1);
      el("lesson-back").disabled = index === 0 && phase !== "complete";
      el("lesson-next").disabled = phase === "playing";
      el("lesson-next").textContent = phase === "shown" && index === moments.length - 1 ? "Finish" : "Next";
      el("lesson-complete").hidden = phase !== "complete";
      var article = el("lesson-moment");
      article.hidden = phase !== "shown";
      if (phase === "playing") setStatus(index === 0 ? "Playing to the first moment…" : "Playing to the next moment…");
      else setStatus("");
      if (phase !== "shown") return;
      el("lesson-moment-title").textContent = m.title;
      el("lesson-text").textContent = m.text;
      var q = m.question;
      var picked = answered[index];
      // The text says what happens at the moment: with a question, it comes with the reveal.
      el("lesson-text").hidden = Boolean(q) && picked === undefined;
      var box = el("lesson-question");
      var reveal = el("lesson-reveal");
      box.hidden = !q;
      reveal.hidden = true;
      if (!q) { highlight(m.highlight); return; }
      el("lesson-prompt").textContent = q.prompt;
      var choices = el("lesson-choices");
      choices.textContent = "";
      q.choices.forEach(function (text, i) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "btn secondary lesson-choice";
        b.textContent = text;
        b.dataset.choice = String(i);
        if (picked !== undefined) {
          b.disabled = true;
          if (i === q.answer) b.classList.add("is-right");
          if (i === picked && picked !== q.answer) b.classList.add("is-wrong");
        }
        choices.appendChild(b);
      });
      var verdict = el("lesson-verdict");
      if (picked === undefined) {
        verdict.textContent = "";
        verdict.className = "lesson-verdict";
        highlight([]);  // the highlights would give the answer away: they come with the reveal
        return;
      }
      var right = picked === q.answer;
      verdict.textContent = right ? "Right." : "Not quite — the answer is " + q.choices[q.answer] + ".";
      verdict.className = "lesson-verdict " + (right ? "is-right" : "is-wrong");
      reveal.textContent = q.reveal;
      reveal.hidden = false;
      highlight(m.highlight);
    }

    // Where the playhead stands for a moment: a question is asked a step before the moment's
    // event (services/lessons.py: ask_seq), so the answer is not on the page yet.
    function stop(i) {
      var m = moments[i];
      return m.question && answered[i] === undefined ? m.ask_seq : m.seq;
    }

    function arrive() {
      phase = "shown";
      send("pause");
      send("seek", stop(index));
      render();
    }

    // Play towards moments[index]; arrive at once if the playhead is already there.
    function playTo(i) {
      if (moments[i].column !== column) {
        window.location.assign("?m=" + i);  // that moment plays in the lesson's other run
        return;
      }
      index = i;
      phase = "playing";
      highlight([]);
      render();
      if (position() >= stop(index)) arrive();
      else send("play");
    }

    document.addEventListener("kubeviz:playhead", function (evt) {
      if (phase !== "playing") return;
      if (evt.detail.position >= stop(index)) arrive();
      else if (evt.detail.complete && !evt.detail.playing && evt.detail.position >= evt.detail.end) arrive();
    });

    el("lesson-choices").addEventListener("click", function (evt) {
      var b = evt.target.closest && evt.target.closest(".lesson-choice");
      if (!b || phase !== "shown" || answered[index] !== undefined) return;
      answered[index] = Number(b.dataset.choice);
      send("seek", moments[index].seq);  // the moment itself: now the page shows the answer
      render();
    });
    el("lesson-next").addEventListener("click", function () {
      if (phase === "complete") return;
      if (index === moments.length - 1) {
        phase = "complete";
        highlight([]);
        render();
        return;
      }
      playTo(index + 1);
    });
    el("lesson-back").addEventListener("click", function () {
      var i = phase === "complete" ? index : index - 1;
      if (i < 0) return;
      if (moments[i].column !== column) { window.location.assign("?m=" + i); return; }
      index = i;
      arrive();
    });
    el("lesson-leave").addEventListener("click", function () {
      phase = "left";
      highlight([]);
      el("lesson-script").hidden = true;
      el("lesson-resume").hidden = false;
      panel.classList.add("is-left");
    });
    el("lesson-resume").addEventListener("click", function () {
      el("lesson-script").hidden = false;
      el("lesson-resume").hidden = true;
      panel.classList.remove("is-left");
      arrive();  // back where the script was
    });

    render();
    if (stop(index) <= position()) arrive();
    else send("play");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
