/* The "please try again" page (503, the database briefly away): send the same form again after
   the wait the server asked for. Without JavaScript the page's button does the same. */
(function () {
  "use strict";
  var form = document.getElementById("retry-form");
  if (!form) return;
  var seconds = Number(form.getAttribute("data-retry-after")) || 5;
  window.setTimeout(function () { form.submit(); }, seconds * 1000);
})();
