/* Rater page helpers (no build step; every page also works without JavaScript):
   - keys 1-5 pick a scale point, Enter submits, focus follows the new item;
   - the first invalid field gets focus and its message is announced;
   - a failed request (server error, expired page, network drop) shows a visible message with
     "Try again", and the answer stays in the form (also across a reload, in sessionStorage);
   - a 503 with Retry-After (the database briefly away) sends the answer again by itself;
   - a heartbeat keeps the item reserved while the rater is active on the open page;
   - a live character counter under the reason box. */
(function () {
  "use strict";

  var HEARTBEAT_MS = 45000;       // well inside the shortest lease
  var ACTIVE_WINDOW_MS = 300000;  // no heartbeat after 5 minutes without any activity
  var lastActivity = Date.now();
  var lastForm = null;

  function judgeForm() { return document.querySelector("form.judge-form"); }

  function csrfToken() {
    try {
      var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      return headers["X-CSRFToken"] || "";
    } catch (e) { return ""; }
  }

  function typingInField(target) {
    if (!target) return false;
    var tag = target.tagName;
    return tag === "TEXTAREA" || (tag === "INPUT" && target.type !== "radio" && target.type !== "checkbox");
  }

  /* --- visible alert with retry ---------------------------------------------------------- */
  function showAlert(text, canRetry) {
    var box = document.getElementById("rater-alert");
    if (!box) return;
    document.getElementById("rater-alert-text").textContent = text;
    document.getElementById("rater-retry").hidden = !canRetry;
    document.getElementById("rater-reload").href = window.location.href;
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
    if (canRetry) document.getElementById("rater-retry").focus();
  }

  function hideAlert() {
    var box = document.getElementById("rater-alert");
    if (box) box.hidden = true;
  }

  function announce(text) {
    var status = document.getElementById("rater-status");
    if (status) { status.textContent = ""; window.setTimeout(function () { status.textContent = text; }, 50); }
  }

  function failureText(status) {
    if (status === 403) return "This page has expired, so your answer was not sent. Reload the page: your answer is kept and you can send it again.";
    if (status === 404) return "This item is no longer available to you. Reload the page to get your current item.";
    if (status === 429) return "Too many requests just now. Please wait a moment, then try again.";
    if (status >= 500) return "Something went wrong on our side and your answer was not saved yet. Please try again.";
    return "Your answer could not be sent (error " + status + "). Please try again.";
  }

  /* 503 with Retry-After: the database is briefly away (a restart). The answer was not
     stored; send it again by itself after the wait, for up to about five minutes. */
  var autoRetries = 0;
  var MAX_AUTO_RETRIES = 60;
  function retryLater(xhr) {
    var seconds = Number(xhr.getResponseHeader("Retry-After")) || 5;
    var form = (lastForm && document.body.contains(lastForm)) ? lastForm : judgeForm();
    if (!form || autoRetries >= MAX_AUTO_RETRIES) return false;
    autoRetries += 1;
    showAlert("The study is briefly unavailable. Your answer is kept and is sent again in " + seconds + " seconds.", true);
    window.setTimeout(function () {
      if (document.body.contains(form) && typeof form.requestSubmit === "function") form.requestSubmit();
    }, seconds * 1000);
    return true;
  }

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail && event.detail.xhr;
    var status = xhr ? xhr.status : 0;
    if (status === 503 && xhr.getResponseHeader("Retry-After") && retryLater(xhr)) return;
    showAlert(failureText(status), status !== 404);
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful) autoRetries = 0;
  });
  document.addEventListener("htmx:sendError", function () {
    showAlert("Could not reach the server: check your connection. Your answer is kept; try again when you are back online.", true);
  });
  document.addEventListener("htmx:timeout", function () {
    showAlert("The server took too long to answer. Your answer is kept; please try again.", true);
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    lastForm = event.detail && event.detail.elt;
    hideAlert();
  });

  document.addEventListener("click", function (event) {
    if (event.target && event.target.id === "rater-retry") {
      var form = (lastForm && document.body.contains(lastForm)) ? lastForm : judgeForm();
      hideAlert();
      if (form && typeof form.requestSubmit === "function") form.requestSubmit();
    }
  });

  /* --- keep the answer across a failed send and a reload -------------------------------- */
  /* One draft per form: the item's submit URL, or the form's own data-draft (a qualification
     item's form posts to the page's own URL, the same for every item: keyed by that URL, one
     item's answer came back ticked on the next item). A form naming neither keeps none. */
  function draftKey(form) {
    var name = form.getAttribute("data-draft") || form.getAttribute("action");
    return name ? "heart-draft:" + name : null;
  }

  function saveDraft() {
    var form = judgeForm();
    if (!form || !window.sessionStorage || !draftKey(form)) return;
    var data = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === "csrfmiddlewaretoken") return;
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) return;
      data[el.name] = el.value;
    });
    try { window.sessionStorage.setItem(draftKey(form), JSON.stringify(data)); } catch (e) { /* full */ }
  }

  function restoreDraft() {
    var form = judgeForm();
    if (!form || !window.sessionStorage || !draftKey(form)) return;
    var raw = window.sessionStorage.getItem(draftKey(form));
    if (!raw) return;
    var data;
    try { data = JSON.parse(raw); } catch (e) { return; }
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || !(el.name in data)) return;
      if (el.type === "radio") { if (!form.querySelector("input[name='" + el.name + "']:checked")) el.checked = el.value === data[el.name]; }
      else if (el.tagName === "TEXTAREA" && !el.value) el.value = data[el.name];
    });
  }

  function clearDrafts() {
    if (!window.sessionStorage) return;
    var form = judgeForm();
    var keep = form ? draftKey(form) : null;
    for (var i = window.sessionStorage.length - 1; i >= 0; i--) {
      var key = window.sessionStorage.key(i);
      if (key && key.indexOf("heart-draft:") === 0 && key !== keep) window.sessionStorage.removeItem(key);
    }
  }

  document.addEventListener("change", function (event) { if (event.target.form === judgeForm()) saveDraft(); });
  document.addEventListener("input", function (event) {
    if (event.target.form === judgeForm()) { saveDraft(); updateCounter(); }
  });

  /* --- the reason box's counter ---------------------------------------------------------- */
  var counterTimer = null;
  function updateCounter() {
    var box = document.getElementById("id_rationale");
    var counter = document.getElementById("rationale-count");
    if (!box || !counter) return;
    var max = Number(counter.getAttribute("data-max")) || 0;
    var left = max - box.value.length;
    counter.textContent = box.value.length + " of " + max + " characters" + (left <= 0 ? " (limit reached)" : "");
    counter.classList.toggle("over", left <= 0);
    // Screen readers hear the count only when the rater pauses, and near the limit.
    window.clearTimeout(counterTimer);
    if (left < 100) counterTimer = window.setTimeout(function () { announce(left + " characters left"); }, 800);
  }

  /* --- focus: the new item's heading, or the first field that needs fixing --------------- */
  function focusItem() {
    var form = judgeForm();
    var first = form && form.getAttribute("data-first-error");
    if (first) {
      var field = first === "choice" ? form.querySelector("input[name=choice]") : document.getElementById("id_rationale");
      var message = document.getElementById(first + "-error");
      if (field) {
        field.focus();
        field.scrollIntoView({ block: "center" });
        if (message) announce(message.textContent);
        return;
      }
    }
    var heading = document.getElementById("item-heading");
    if (heading) { heading.focus(); window.scrollTo(0, 0); }
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail && event.detail.target && event.detail.target.id === "item-region") {
      clearDrafts();
      restoreDraft();
      updateCounter();
      focusItem();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    restoreDraft();
    updateCounter();
    var form = judgeForm();
    if (form && form.getAttribute("data-first-error")) focusItem();
  });

  /* --- keyboard ---------------------------------------------------------------------------- */
  document.addEventListener("keydown", function (event) {
    lastActivity = Date.now();
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var form = judgeForm();
    if (!form || typingInField(event.target)) return;
    if (event.key >= "1" && event.key <= "5") {
      var radios = form.querySelectorAll("input[name=choice]");
      var radio = radios[Number(event.key) - 1];
      if (radio) {
        radio.checked = true;
        radio.focus();
        saveDraft();
        event.preventDefault();
      }
    } else if (event.key === "Enter") {
      var button = event.target && event.target.tagName === "BUTTON";
      if (button) return;  // a focused button submits by itself
      event.preventDefault();
      // htmx takes over swapped-in content only at its settle step (20 ms later): a fast Enter
      // would otherwise submit the new form without htmx, as a whole-page POST.
      if (window.htmx) window.htmx.process(form);
      if (typeof form.requestSubmit === "function") form.requestSubmit();
      else form.submit();
    }
  });

  /* --- heartbeat: the item stays reserved while the rater is here -------------------------- */
  ["mousemove", "mousedown", "scroll", "touchstart", "input"].forEach(function (name) {
    document.addEventListener(name, function () { lastActivity = Date.now(); }, { passive: true });
  });

  window.setInterval(function () {
    var form = judgeForm();
    if (!form || document.visibilityState !== "visible") return;
    if (Date.now() - lastActivity > ACTIVE_WINDOW_MS) return;
    var url = form.getAttribute("data-heartbeat-url");
    if (!url || !window.fetch) return;
    window.fetch(url, {
      method: "POST",
      headers: { "X-CSRFToken": csrfToken() },
      credentials: "same-origin",
    }).catch(function () { /* a missed heartbeat only shortens the reservation */ });
  }, HEARTBEAT_MS);
})();
