// The lesson player (docs/lessons.md). A moment with a question stops on the state just before
// the decision it asks about (ask_seq) and shows the moment's text with the question; going on
// takes an answer, or an explicit "Show me the answer"; then the page plays the decision (seq)
// and outlines what the moment names.
//
// One run: the run page's playhead, through playback.js only (kubevizPlayback.send and the
// "kubeviz:playhead" event). Between moments it walks from decision to decision by seeking,
// never by playing, so it never passes the next stop and never shows a decision early.
// Two runs side by side: the columns of each moment come from the server (data-columns-url).
//
// While a question is open the run is held at it: nothing on the page may show what comes
// after (see "hold" below): the run's own playback controls, their keys and the slider, the
// fork form, the story's "show" links and every link that leads to the run, its trace or the
// comparison page are disabled until the learner answers or asks for the answer.
(function () {
  "use strict";

  var HIGHLIGHT = "lesson-highlight";
  var PHONE = "(max-width: 700px)";
  var HELD = "Answer the question, or ask for the answer, to go on: the run is held here.";
  var WALKING = "Playing to the next question: the run is held there until you answer it.";
  // What moves the playhead, or forks the run from it (playback_controls.html, fork.html,
  // pod_story.html). The speed select and present mode's buttons stay: they show nothing new.
  var MOVING = ".run-controls .buttons button, #scrub, .fork-form [type=submit], #pod-story a[data-seek], .lesson-leave";

  function init() {
    var panel = document.getElementById("lesson-panel");
    var data = document.getElementById("lesson-script");
    var stage = document.getElementById("lesson-stage");
    var layout = document.getElementById("lesson-layout");
    if (!panel || !data || !stage || !layout) return;
    var script = JSON.parse(data.textContent);
    var moments = script.moments;
    var paired = Boolean(script.side_by_side);
    var runPage = document.getElementById("run-page");
    var column = Number(panel.dataset.column);
    var el = function (cls) { return panel.querySelector("." + cls); };
    var reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

    var index = Number(panel.dataset.start);  // the moment shown, or being walked to
    var phase = "playing";  // playing (to moments[index]) | shown | complete | left
    var answered = {};  // moment index -> the choice picked, or -1: "Show me the answer"
    var lit = [];  // selectors highlighted now
    var queue = [];  // messages waiting for the socket
    var open = false;
    var target = null;  // the position being walked to (one run)
    var timer = null;
    var fetching = 0;  // side by side: the latest columns request

    var held = false;  // a question is open: the page cannot show what comes after it

    function setPhaseClass() {
      layout.classList.toggle("is-complete", phase === "complete" || phase === "left");
    }

    // -- one run: the playhead ---------------------------------------------------------
    if (runPage) {
      // A learner who likes autoplay would see the run play past the question: the lesson
      // moves the playhead itself (playback.js has put the preference on the URL already).
      var url = runPage.getAttribute("ws-connect");
      if (url) runPage.setAttribute("ws-connect", url.replace(/&play=1\b/, ""));
    }
    function send(action, value) {
      if (open && window.kubevizPlayback && window.kubevizPlayback.send(action, value)) return;
      queue.push([action, value]);
    }
    document.body.addEventListener("htmx:wsOpen", function () {
      open = true;
      var waiting = queue;
      queue = [];
      waiting.forEach(function (m) { send(m[0], m[1]); });
    });
    function position() {
      var p = window.kubevizPlayback && window.kubevizPlayback.position();
      return p === null || p === undefined ? 0 : p;
    }
    function delay() {
      var speed = document.querySelector("#run-page .speed-select");
      var value = speed ? speed.value : "2";
      if (value === "max" || value === "0") return 0;
      var rate = Number(value) || 2;
      return Math.max(40, 1000 / rate);
    }
    // The decision stops strictly between ``from`` and ``to`` in this run.
    function waypoints(from, to) {
      return (script.stops[column] || []).filter(function (s) { return s > from && s < to; });
    }
    function walk(to) {
      clearTimeout(timer);
      target = to;
      var here = position();
      var steps = to > here ? waypoints(here, to) : [];
      var wait = delay();
      if (!wait) steps = [];
      function next() {
        if (target !== to) return;
        if (steps.length) {
          send("seek", steps.shift());
          timer = setTimeout(next, wait);
        } else {
          send("seek", to);
        }
      }
      send("pause");
      next();
    }

    // -- highlights ------------------------------------------------------------------------
    function scope() {
      if (!paired) return runPage;
      return document.getElementById("lesson-col-" + moments[index].column) || stage;
    }
    function applyHighlights() {
      stage.querySelectorAll("." + HIGHLIGHT).forEach(function (n) { n.classList.remove(HIGHLIGHT); });
      var root = scope();
      if (!root) return;
      lit.forEach(function (selector) {
        root.querySelectorAll(selector).forEach(function (n) { n.classList.add(HIGHLIGHT); });
      });
    }
    // Scroll the first outlined element into the part of the screen the lesson panel leaves
    // free (on a phone the panel is a sheet over the bottom of the screen).
    function reveal(first) {
      var box = first.getBoundingClientRect();
      var sheet = window.matchMedia(PHONE).matches ? panel.getBoundingClientRect() : null;
      var bottom = sheet ? sheet.top : window.innerHeight;
      if (box.top >= 8 && box.bottom <= bottom - 8) return;
      var room = bottom - 16;
      var offset = box.height < room ? (room - box.height) / 3 : 0;
      window.scrollTo({ top: Math.max(0, window.scrollY + box.top - 8 - offset), behavior: reduced ? "auto" : "smooth" });
    }
    function highlight(selectors) {
      lit = selectors || [];
      applyHighlights();
      var root = scope();
      var first = root && root.querySelector("." + HIGHLIGHT);
      if (first) reveal(first);
    }
    document.body.addEventListener("htmx:wsAfterMessage", applyHighlights);
    document.body.addEventListener("htmx:afterSettle", applyHighlights);
    document.addEventListener("kubeviz:grid", applyHighlights);

    // -- the hold: while a question is open -------------------------------------------------
    // The lesson moves the playhead itself (kubevizPlayback.send); everything a learner could use
    // to move it, or to open the run, its trace or the comparison elsewhere, waits for the answer.
    // playback.js and pod_story.js know nothing of lessons: the hold is disabled controls, links
    // without their href, and capture-phase listeners that stop a click or key before theirs.
    var note = document.createElement("p");  // next to the run's controls: why they do not move
    note.className = "lesson-held-note";
    note.setAttribute("role", "status");
    note.hidden = true;
    var controls = runPage && runPage.querySelector(".run-controls");
    if (controls) controls.insertBefore(note, controls.firstChild);
    else stage.insertBefore(note, document.getElementById("lesson-columns"));

    // A link to this lesson's run (at any seq, or its trace) or to the comparison page.
    function leadsOff(a) {
      var href = a.getAttribute("href");
      if (!href || href.charAt(0) === "#") return false;
      var url;
      try { url = new URL(href, window.location.href); } catch (e) { return false; }
      return url.origin === window.location.origin && /^\/(runs|compare)\//.test(url.pathname);
    }
    function holdLinks() {
      layout.querySelectorAll("a[href]").forEach(function (a) {
        if (!leadsOff(a)) return;
        a.dataset.lessonHref = a.getAttribute("href");
        a.removeAttribute("href");
        a.setAttribute("aria-disabled", "true");
        a.title = HELD;
      });
    }
    function releaseLinks() {
      layout.querySelectorAll("a[data-lesson-href]").forEach(function (a) {
        a.setAttribute("href", a.dataset.lessonHref);
        delete a.dataset.lessonHref;
        a.removeAttribute("aria-disabled");
        a.removeAttribute("title");
      });
    }
    // The cycle panel's "The verdict comes in the next events: step forward (›) to see it" (or
    // "Deciding…") invites a step the learner cannot take: lesson.css hides it and this says why.
    function holdCycles() {
      stage.querySelectorAll(".cycle .outcome").forEach(function (outcome) {
        var undecided = outcome.querySelector(":scope > p.muted");
        var mine = outcome.querySelector(".lesson-held-verdict");
        if (undecided && !mine) {
          mine = document.createElement("p");
          mine.className = "lesson-held-verdict";
          mine.textContent = "The verdict is what the question asks: answer it, or ask for the answer, to see it.";
          outcome.appendChild(mine);
        } else if (!undecided && mine) {
          mine.remove();
        }
      });
    }
    function applyHold() {
      if (!held) return;
      layout.querySelectorAll(MOVING).forEach(function (c) {
        if (c.disabled || c.dataset.lessonHeld) return;
        c.dataset.lessonHeld = "1";
        if (c.tagName === "A") c.setAttribute("aria-disabled", "true");
        else c.disabled = true;
      });
      holdLinks();
      holdCycles();
    }
    function release() {
      layout.querySelectorAll("[data-lesson-held]").forEach(function (c) {
        delete c.dataset.lessonHeld;
        if (c.tagName === "A") c.removeAttribute("aria-disabled");
        else c.disabled = false;
      });
      releaseLinks();
      stage.querySelectorAll(".lesson-held-verdict").forEach(function (n) { n.remove(); });
    }
    function setHeld(on, why) {
      layout.classList.toggle("is-held", on);
      note.textContent = why || HELD;
      note.hidden = !on;
      el("lesson-hint").textContent = HELD;
      if (on === held) { applyHold(); return; }
      held = on;
      if (on) applyHold(); else release();
    }
    // Said again (and pulsed) when a held control is tried, so the learner sees why.
    function tried() {
      [note, el("lesson-hint")].forEach(function (n) {
        n.classList.remove("is-tried");
        void n.offsetWidth;  // restart the pulse
        n.classList.add("is-tried");
      });
    }
    // The run page re-renders its fragments (and a pod's story, the columns) as they come: hold
    // what arrives while held.
    var pending = false;
    new MutationObserver(function () {
      if (!held || pending) return;
      pending = true;
      Promise.resolve().then(function () { pending = false; applyHold(); });
    }).observe(layout, { childList: true, subtree: true });

    function heldTarget(evt) {
      var t = evt.target;
      if (!held || !t || !t.closest || !layout.contains(t)) return null;
      return t.closest(MOVING + ", a[data-lesson-href]");
    }
    function refuse(evt) {
      evt.preventDefault();
      evt.stopImmediatePropagation();
      tried();
    }
    ["click", "auxclick", "dblclick"].forEach(function (type) {
      window.addEventListener(type, function (evt) { if (heldTarget(evt)) refuse(evt); }, true);
    });
    // The slider (disabled, but a script or an old browser could still send its events).
    ["input", "change", "pointerdown"].forEach(function (type) {
      window.addEventListener(type, function (evt) {
        if (held && evt.target && evt.target.id === "scrub") refuse(evt);
      }, true);
    });
    window.addEventListener("submit", function (evt) {
      if (held && evt.target && evt.target.closest && evt.target.closest(".fork-form")) refuse(evt);
    }, true);
    // playback.js's keys: space plays, and each [data-key] button's key presses it. Stopped before
    // they reach it; not prevented, so space still presses a focused choice or scrolls the page.
    window.addEventListener("keydown", function (evt) {
      if (!held || !runPage || evt.metaKey || evt.ctrlKey || evt.altKey) return;
      var tag = (evt.target && evt.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "select" || tag === "textarea") return;
      var keyed = evt.key === " " || Array.prototype.some.call(
        runPage.querySelectorAll("[data-key]"), function (b) { return b.dataset.key === evt.key; });
      if (!keyed) return;
      evt.stopImmediatePropagation();
      tried();
    }, true);

    // On a phone the sheet grows while a question is open (lesson.css); the page keeps room
    // under its content for the sheet, whatever its height, so nothing is out of reach under it.
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        layout.style.setProperty("--lesson-sheet", Math.ceil(panel.getBoundingClientRect().height) + "px");
      }).observe(panel);
    }

    // -- the panel -------------------------------------------------------------------------
    function setStatus(text) {
      var status = el("lesson-status");
      status.textContent = text;
      status.hidden = !text;
    }
    function waiting() {
      var m = moments[index];
      return phase === "shown" && Boolean(m.question) && answered[index] === undefined;
    }

    // Present mode (kubeviz/web/playback/presenting.py): a presenter's page tells its followers
    // which moment it is on, whether its answer is out, and its phase ("3.a.shown"); a
    // follower's panel follows (the presenter's playhead moves the page itself). A follower
    // still answers on their own; the presenter's reveal reveals theirs.
    function presenting() { return Boolean(document.querySelector(".present-bar[data-role=presenter]")); }
    function tellFollowers() {
      if (!presenting() || !window.kubevizPlayback || !window.kubevizPlayback.moment) return;
      window.kubevizPlayback.moment(index + "." + (answered[index] !== undefined ? "a" : "q") + "." + phase);
    }
    document.addEventListener("kubeviz:presenter", function (evt) {
      var parts = String(evt.detail.moment || "").split(".");
      var i = Number(parts[0]);
      if (paired || parts.length !== 3 || !(i >= 0 && i < moments.length)) return;
      clearTimeout(timer);
      target = null;
      index = i;
      if (parts[1] === "a" && answered[i] === undefined) answered[i] = -1;
      phase = parts[2] === "complete" ? "complete" : "shown";
      render();
    });
    // Whoever starts presenting mid-lesson tells their followers where they are at once.
    document.body.addEventListener("htmx:wsAfterMessage", function () {
      var now = presenting();
      if (now && !wasPresenting) tellFollowers();
      wasPresenting = now;
    });
    var wasPresenting = false;

    function render() {
      var m = moments[index];
      tellFollowers();
      setPhaseClass();
      el("lesson-n").textContent = String(index + 1);
      el("lesson-back").disabled = index === 0 && phase !== "complete";
      // A question must be answered (or its answer asked for) before going on.
      el("lesson-next").disabled = phase === "playing" || waiting();
      el("lesson-hint").hidden = !waiting();
      // Walking to a question holds too: a Play pressed on the way would carry the run past it.
      var toQuestion = !paired && phase === "playing" && Boolean(m.question) && answered[index] === undefined;
      setHeld(waiting() || toQuestion, toQuestion ? WALKING : HELD);
      el("lesson-next").textContent = phase === "shown" && index === moments.length - 1 ? "Finish" : "Next";
      el("lesson-complete").hidden = phase !== "complete";
      el("lesson-moment").hidden = phase !== "shown";
      if (phase === "playing") setStatus(index === 0 ? "Playing to the first moment…" : "Playing to the next moment…");
      else setStatus("");
      if (phase !== "shown") return;
      el("lesson-moment-title").textContent = m.title;
      // The text says what is on screen and what the question needs; the outcome is the reveal.
      el("lesson-text").textContent = m.text;
      var q = m.question;
      var picked = answered[index];
      var box = el("lesson-question");
      var revealBox = el("lesson-reveal");
      box.hidden = !q;
      revealBox.hidden = true;
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
      el("lesson-skip").hidden = picked !== undefined;
      if (picked === undefined) {
        verdict.textContent = "";
        verdict.className = "lesson-verdict";
        highlight([]);  // the highlights would give the answer away: they come with the reveal
        return;
      }
      if (picked < 0) {
        verdict.textContent = "The answer is " + q.choices[q.answer] + ".";
        verdict.className = "lesson-verdict is-shown";
      } else {
        var right = picked === q.answer;
        verdict.textContent = right ? "Right." : "Not quite — the answer is " + q.choices[q.answer] + ".";
        verdict.className = "lesson-verdict " + (right ? "is-right" : "is-wrong");
      }
      revealBox.textContent = q.reveal;
      revealBox.hidden = false;
      highlight(m.highlight);
    }

    // Where a moment stands: before its answer, just before the decision it asks about.
    function stop(i) {
      var m = moments[i];
      return m.question && answered[i] === undefined ? m.ask_seq : m.seq;
    }

    function shown() {
      phase = "shown";
      target = null;
      render();
    }

    // -- side by side: the columns come from the server ------------------------------------
    function loadColumns(i, then) {
      var ticket = ++fetching;
      var m = moments[i];
      var done = !m.question || answered[i] !== undefined;
      var href = panel.dataset.columnsUrl + "?m=" + i + (done ? "&answered=1" : "");
      fetch(href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error("columns " + r.status); return r.text(); })
        .then(function (html) {
          if (ticket !== fetching) return;
          document.getElementById("lesson-columns").innerHTML = html;
          then();
        })
        .catch(function () { setStatus("The runs could not be loaded. Reload the page to try again."); });
    }

    function goTo(i) {
      index = i;
      phase = "playing";
      highlight([]);
      render();
      if (paired) { loadColumns(i, shown); return; }
      var to = stop(i);
      if (position() === to && open) { send("pause"); shown(); return; }
      walk(to);
    }

    document.addEventListener("kubeviz:playhead", function (evt) {
      if (paired || target === null) return;
      if (evt.detail.position === target) {
        if (phase === "playing") shown();
        else { target = null; highlight(lit); }
      }
    });

    function answer(choice) {
      if (phase !== "shown" || answered[index] !== undefined) return;
      answered[index] = choice;
      render();
      // On a phone the sheet shrinks back once the run is released: its verdict and the reveal
      // are what to read now, so they come to its top.
      if (window.matchMedia(PHONE).matches) panel.scrollTop = Math.max(0, el("lesson-verdict").offsetTop - 8);
      // Now the page plays the decision: the moment's own event.
      if (paired) loadColumns(index, render);
      else walk(moments[index].seq);
    }
    el("lesson-choices").addEventListener("click", function (evt) {
      var b = evt.target.closest && evt.target.closest(".lesson-choice");
      if (b) answer(Number(b.dataset.choice));
    });
    el("lesson-skip").addEventListener("click", function () { answer(-1); });
    el("lesson-next").addEventListener("click", function () {
      if (phase !== "shown" || waiting()) return;
      if (index === moments.length - 1) {
        phase = "complete";
        highlight([]);
        render();
        return;
      }
      goTo(index + 1);
    });
    el("lesson-back").addEventListener("click", function () {
      var i = phase === "complete" ? index : index - 1;
      if (i < 0) return;
      goTo(i);
    });
    el("lesson-leave").addEventListener("click", function () {
      phase = "left";
      clearTimeout(timer);
      target = null;
      highlight([]);
      setPhaseClass();
      el("lesson-script").hidden = true;
      el("lesson-resume").hidden = false;
      panel.classList.add("is-left");
    });
    el("lesson-resume").addEventListener("click", function () {
      el("lesson-script").hidden = false;
      el("lesson-resume").hidden = true;
      panel.classList.remove("is-left");
      goTo(index);  // back where the script was
    });

    // The page is served at the first moment's stop: it is on screen already.
    if (paired) { shown(); return; }
    target = stop(index);
    send("pause");
    send("seek", target);
    shown();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
