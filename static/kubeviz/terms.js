// Glossary terms ([data-term]) on every page: the definition opens in a small box next to the
// term on a tap or click, on keyboard focus, and on hover, placed where it covers no neighbouring
// term (place()), so tapping the next term while one box is open opens that one; Escape, a tap
// elsewhere or moving on closes it. A hover-only tooltip (the title attribute) does nothing on a
// touch screen. A term that is a link to the glossary still goes there on a second tap, or from
// the box's own link. The definitions come once per page (#glossary-terms,
// kubeviz/web/templatetags/terms.py), not in every live fragment.
(function () {
  "use strict";
  var terms = null;
  var box = null;
  var owner = null;  // the term whose definition is open
  var hovered = false;  // opened by the pointer passing over: closes when it leaves
  var clicked = null;  // the term a click or tap opened: a second one follows its link

  function definitions() {
    if (terms === null) {
      var node = document.getElementById("glossary-terms");
      try { terms = node ? JSON.parse(node.textContent) : {}; } catch (e) { terms = {}; }
    }
    return terms;
  }
  function termOf(target) {
    return target && target.closest ? target.closest("[data-term]") : null;
  }
  function ensureBox() {
    if (box) return box;
    box = document.createElement("div");
    box.id = "term-box";
    box.className = "term-box";
    box.setAttribute("role", "tooltip");
    box.hidden = true;
    box.innerHTML = '<p class="term-text"></p><a class="term-more small" href="#">More in the glossary</a>';
    document.body.appendChild(box);
    return box;
  }
  // Where the box goes: next to the term, on the side where it covers no other term near it, so
  // a tap on a neighbouring term (the next line of a legend, the next column head) reaches that
  // term and not the box. Tried in order -- below, above, right, left, then docked at the bottom
  // or the top of the screen (a phone's narrow legend) -- each costing 100 per term within
  // NEAR px of this one that it would cover and 1 per term further away; the cheapest wins, the
  // first of equals. None fits on screen: below, or above when below runs off the screen.
  var NEAR = 80;
  function otherTerms(el, vw, vh) {
    var found = [];
    document.querySelectorAll("[data-term]").forEach(function (t) {
      if (t === el || t.contains(el) || el.contains(t)) return;
      var r = t.getBoundingClientRect();
      if (r.width && r.height && r.bottom > 0 && r.top < vh && r.right > 0 && r.left < vw) found.push(r);
    });
    return found;
  }
  function meets(a, b) {
    return a.left < b.right + 2 && b.left < a.right + 2 && a.top < b.bottom + 2 && b.top < a.bottom + 2;
  }
  function place(el) {
    var r = el.getBoundingClientRect();
    var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
    var width = Math.min(320, vw - 16);
    box.style.width = width + "px";
    var h = box.offsetHeight;
    var x = Math.max(8, Math.min(r.left, vw - width - 8));
    var y = Math.max(8, Math.min(r.top - 8, vh - h - 8));
    var spots = [
      [x, r.bottom + 6], [x, r.top - 6 - h], [r.right + 8, y], [r.left - 8 - width, y], [x, vh - 8 - h], [x, 8],
    ];
    var terms = otherTerms(el, vw, vh);
    var best = null, bestCost = Infinity;
    spots.forEach(function (spot) {
      var rect = { left: spot[0], top: spot[1], right: spot[0] + width, bottom: spot[1] + h };
      if (rect.left < 4 || rect.right > vw - 4 || rect.top < 4 || rect.bottom > vh - 4 || meets(rect, r)) return;
      var cost = 0;
      terms.forEach(function (t) {
        if (!meets(rect, t)) return;
        var gap = Math.max(0, t.top - r.bottom, r.top - t.bottom);
        cost += gap < NEAR ? 100 : 1;
      });
      if (cost < bestCost) { best = spot; bestCost = cost; }
    });
    if (!best) {
      best = [x, r.bottom + 6];
      if (r.bottom + 6 + h > vh && r.top - 6 - h > 0) best = [x, r.top - 6 - h];
    }
    box.style.left = best[0] + window.scrollX + "px";
    box.style.top = best[1] + window.scrollY + "px";
  }
  function show(el) {
    var text = definitions()[el.dataset.term];
    if (!text) return false;
    ensureBox();
    box.querySelector(".term-text").textContent = text;
    var more = box.querySelector(".term-more");
    more.href = el.getAttribute("href") || "/glossary/#" + el.dataset.term;
    if (owner && owner !== el) { owner.removeAttribute("aria-describedby"); owner.classList.remove("term-open"); clicked = null; }
    owner = el;
    el.setAttribute("aria-describedby", "term-box");
    el.classList.add("term-open");
    box.hidden = false;
    place(el);
    return true;
  }
  function hide() {
    if (!box || box.hidden) return;
    box.hidden = true;
    if (owner) { owner.removeAttribute("aria-describedby"); owner.classList.remove("term-open"); }
    owner = null;
    clicked = null;
  }
  // A term that is not focusable (a badge, a table head) becomes so, for the keyboard.
  function focusable(root) {
    (root || document).querySelectorAll("[data-term]:not(a):not([tabindex])").forEach(function (el) {
      el.setAttribute("tabindex", "0");
    });
  }

  document.addEventListener("click", function (evt) {
    var el = termOf(evt.target);
    if (el) {
      if (clicked === el && owner === el && !box.hidden) return;  // the second tap follows the link
      hovered = false;
      if (show(el)) { clicked = el; evt.preventDefault(); }
      return;
    }
    if (box && !box.contains(evt.target)) hide();
  });
  document.addEventListener("focusin", function (evt) {
    var el = termOf(evt.target);
    if (el) { hovered = false; show(el); }
    else if (!box || !box.contains(evt.target)) hide();
  });
  document.addEventListener("mouseover", function (evt) {
    var el = termOf(evt.target);
    if (el && el !== owner && show(el)) hovered = true;
  });
  document.addEventListener("mouseout", function (evt) {
    if (!hovered || !owner || termOf(evt.target) !== owner) return;
    var to = evt.relatedTarget;
    if (to && (owner.contains(to) || (box && box.contains(to)))) return;
    hovered = false;
    hide();
  });
  document.addEventListener("keydown", function (evt) { if (evt.key === "Escape") hide(); });
  window.addEventListener("resize", hide);
  document.addEventListener("DOMContentLoaded", function () { focusable(); });
  document.addEventListener("htmx:afterSettle", function (evt) { focusable(evt.target); });
  document.addEventListener("htmx:wsAfterMessage", function () { focusable(); });
})();
