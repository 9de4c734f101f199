// Live updates where JavaScript is on; every page works without it.
"use strict";
(function () {
  const POLL_MS = 2000;
  function poll(url, handle) {
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((value) => { if (value !== null && handle(value)) { setTimeout(() => poll(url, handle), POLL_MS); } })
      .catch(() => setTimeout(() => poll(url, handle), POLL_MS * 3));
  }
  const board = document.querySelector("[data-live=board]");
  if (board) {
    const seen = board.dataset.updated;
    poll("/api/leaderboard", (value) => {
      if (value.updated && value.updated !== seen) {
        window.location.reload();
        return false;
      }
      return true;
    });
  }
  const sub = document.querySelector("[data-live=submission]");
  if (sub && sub.dataset.state !== "scored" && sub.dataset.state !== "failed") {
    poll("/api/submissions/" + sub.dataset.id, (value) => {
      document.getElementById("status").textContent = value.status;
      if (value.state === "scored" || value.state === "failed") {
        window.location.reload();
        return false;
      }
      return true;
    });
  }
})();
