/* The writing page: live word and sentence counts with a gentle band note, draft autosave
   (every few seconds and when the box loses focus, plus a copy in this browser so a closed tab
   loses nothing), and writing-behaviour measures sent with the reply in hidden fields.
   The counting rules mirror writing/text_rules.py. No inline script (CSP). */
(function () {
  "use strict";

  var SAVE_EVERY_MS = 5000;
  var IDLE_AFTER_MS = 5000;   // typing pauses longer than this are not active writing time
  var AWAY_WINDOW_MS = 10000; // an insertion this soon after coming back counts as "after away"

  function words(text) { var t = text.trim(); return t ? t.split(/\s+/).length : 0; }
  function sentences(text) {
    return text.split(/[.!?\u2026]+(?=\s|$)/).filter(function (p) { return p.trim(); }).length;
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function bandNote(text, band) {
    var w = words(text), s = sentences(text);
    if (!text.trim()) return "";
    var range = band.minW + "-" + band.maxW + " words suit.";
    if (w < band.minW) return "A little short: about " + range;
    if (w > band.maxW) return "A little long: about " + range;
    if (s > band.maxS) return "Consider " + band.minS + "-" + band.maxS + " sentences.";
    return "";
  }

  // The hard limit the submit enforces (writing/text_rules.py: limit_note says the same).
  function limitNote(text, maxWords) {
    var w = words(text);
    if (w > maxWords) {
      return "Over the limit: " + w + " words, at most " + maxWords + " can be submitted. Please shorten it.";
    }
    if (w === maxWords) return "At the limit: " + maxWords + " words is the most a reply may have.";
    return "";
  }

  function load(key) {
    try { return JSON.parse(window.localStorage.getItem(key) || "null"); } catch (e) { return null; }
  }
  function store(key, value) {
    try { window.localStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* full or off */ }
  }

  function init(form) {
    var box = form.querySelector("textarea[name=text]");
    var key = form.dataset.draftKey;
    var band = {
      minW: Number(form.dataset.bandMinWords), maxW: Number(form.dataset.bandMaxWords),
      minS: Number(form.dataset.bandMinSentences), maxS: Number(form.dataset.bandMaxSentences)
    };
    var saved = load(key) || {};
    var m = saved.metrics || {
      active_ms: 0, keystrokes: 0, inserted_chars: 0, focus_lost: 0,
      longest_insert: 0, insert_after_away: 0
    };
    // A copy in this browser newer than the server's draft wins (typed after the last save).
    if (saved.text && saved.text !== box.value && saved.t > Number(form.dataset.savedAt || 0)) {
      box.value = saved.text;
    }
    var lastInput = 0, backAt = 0, lastSent = box.value, prevLength = box.value.length, status = form.querySelector(".save-status");

    function updateCounts() {
      var text = box.value;
      form.querySelector(".count-words").textContent = plural(words(text), "word", "words");
      form.querySelector(".count-sentences").textContent = plural(sentences(text), "sentence", "sentences");
      var limit = limitNote(text, Number(form.dataset.maxWords));
      var note = limit ? "" : bandNote(text, band);
      form.querySelector(".band-note").textContent = note ? "\u00b7 " + note : "";
      var limitBox = form.querySelector(".limit-note");
      if (limitBox && limitBox.textContent !== limit) limitBox.textContent = limit;
    }
    function keep() { store(key, { text: box.value, t: Date.now(), metrics: m }); }

    function inserted(n) {
      m.inserted_chars += n;
      m.longest_insert = Math.max(m.longest_insert, n);
      if (backAt && Date.now() - backAt < AWAY_WINDOW_MS && n >= 20) m.insert_after_away = 1;
    }

    box.addEventListener("keydown", function (event) {
      if (event.key.length === 1 || event.key === "Backspace" || event.key === "Delete" || event.key === "Enter") {
        m.keystrokes += 1;
      }
    });
    box.addEventListener("beforeinput", function (event) {
      var type = event.inputType || "";
      var typed = type === "insertText" || type === "insertLineBreak" || type === "insertCompositionText" || type.indexOf("delete") === 0;
      if (typed) return;
      if ((type === "insertFromPaste" || type === "insertFromDrop") && form.dataset.blockPaste === "1") {
        refuseInsert(event);
        return;
      }
      var data = event.data || (event.dataTransfer && event.dataTransfer.getData("text")) || "";
      if (type.indexOf("insert") === 0) inserted(data.length);
    });
    function refuseInsert(event) {
      if (form.dataset.blockPaste !== "1") return;
      event.preventDefault();
      if (status) status.textContent = "Pasting is switched off in this study: please type your reply.";
    }
    box.addEventListener("paste", refuseInsert);
    box.addEventListener("drop", refuseInsert);
    box.addEventListener("input", function (event) {
      // Autofill and some assistive inputs fire no beforeinput with a type: count the growth.
      if (!event.inputType && box.value.length > prevLength) inserted(box.value.length - prevLength);
      prevLength = box.value.length;
      lastInput = Date.now();
      updateCounts();
      keep();
    });
    window.addEventListener("blur", function () { m.focus_lost += 1; keep(); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") backAt = Date.now();
    });
    window.addEventListener("focus", function () { backAt = Date.now(); });

    window.setInterval(function () {
      if (lastInput && Date.now() - lastInput < IDLE_AFTER_MS && document.visibilityState === "visible") {
        m.active_ms += 1000;
      }
    }, 1000);

    function save() {
      if (box.value === lastSent) return;
      var text = box.value, body = new FormData();
      body.append("text", text);
      fetch(form.dataset.saveUrl, {
        method: "POST", body: body, credentials: "same-origin",
        headers: { "X-CSRFToken": form.querySelector("input[name=csrfmiddlewaretoken]").value }
      }).then(function (response) { return response.json(); }).then(function (data) {
        lastSent = text;
        if (status) status.textContent = data.saved ? "Draft saved at " + data.at + "." : (data.error || "This reply can no longer be saved.");
      }).catch(function () {
        if (status) status.textContent = "Draft kept in this browser; it will be saved when the connection is back.";
      });
    }
    window.setInterval(save, SAVE_EVERY_MS);
    box.addEventListener("blur", save);

    form.addEventListener("submit", function () {
      m.measured = 1;
      form.querySelectorAll("input.behaviour").forEach(function (input) {
        if (input.name === "measured") input.value = "1";
        else input.value = String(m[input.name] || 0);
      });
      keep();
    });
    updateCounts();
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector("form.write-form");
    if (form) init(form);
  });
})();
