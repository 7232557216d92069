/* Studio helpers: copy buttons. Without JavaScript the buttons stay hidden and the values sit in
   read-only fields that can be selected and copied by hand. No inline scripts (CSP). */
(function () {
  "use strict";

  function announce(id, text) {
    var status = document.querySelector('[data-copy-status="' + id + '"]');
    if (status) status.textContent = text;
  }

  function selectText(field) {
    field.focus();
    field.select();
    field.setSelectionRange(0, field.value.length);
  }

  function copy(button) {
    var id = button.getAttribute("data-copy");
    var field = document.getElementById(id);
    if (!field) return;
    var fallback = function () {
      selectText(field);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      announce(id, ok ? "Copied." : "Selected: press Ctrl+C (or Cmd+C) to copy.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () {
        announce(id, "Copied.");
      }, fallback);
    } else {
      fallback();
    }
  }

  function setUp() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = false;
      buttons[i].addEventListener("click", function (event) { copy(event.currentTarget); });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
