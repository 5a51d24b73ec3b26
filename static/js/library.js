// The library's "Load more" rows. They live in #library-loaded, below the first page, which the
// live stream's whole state (a reconnect, a client that fell behind) leaves alone: that state
// covers the first page only. This file keeps the two lists one list of distinct articles. (A
// whole state also makes a client with loaded rows read them again - #library-held - so rows it
// pushed past the first page are not lost: docs/decisions/live.md.)
const firstPage = () => document.getElementById("library-rows");
const loaded = () => document.getElementById("library-loaded");

// The first page as this client last showed it (row id -> row): a whole state replaces the first
// page at once, and the rows it pushed past the end must move down, not go.
let shown = new Map();
// The loaded list as this client last saw it, and the rows it moved into it since it last asked
// for its held span (/articles/held): that answer replaces the list with the span as the server
// read it, which may be older than those moves. So may the rows a "Load more" appended since:
// they lie past the span's end, which was where "Load more" had reached when the client asked.
let lastLoaded = loaded();
let lastIds = new Set();
const movedSinceAsked = new Set();
const appendedSinceAsked = new Set();

// Rows of `before` that `after` pushed past its end: those after the last row both hold, when
// nothing new came in below that row and the page did not shrink. The live view's own rule for
// its patches (app/live/views.py, _list_delta), here for a whole state.
function pushedOff(before, after) {
  const stays = new Set(after);
  const had = new Set(before);
  const newBelow = after.slice(after.findLastIndex((id) => had.has(id)) + 1).some((id) => !had.has(id));
  if (newBelow || after.length < before.length) return [];
  return before.slice(before.findLastIndex((id) => stays.has(id)) + 1).filter((id) => !stays.has(id));
}

function moveBelow(more, rows) {
  if (!rows.length) return;
  more.prepend(...rows);
  for (const row of rows) movedSinceAsked.add(row.id);
}

function tidy() {
  const first = firstPage();
  const more = loaded();
  if (!first || !more) {
    shown = new Map();
    return;
  }
  if (more !== lastLoaded) {
    // The held span's answer replaced the loaded rows: the rows moved below since it was asked
    // for may be newer than its read, so they go back on top (the duplicates go below); the
    // rows "Load more" appended since go back below it - unless the answer stopped short of
    // its span (data-held-cut) and moved the "Load more" cursor back to where it stopped.
    const before = [...(lastLoaded?.children ?? [])];
    const again = before.filter((row) => movedSinceAsked.has(row.id));
    if (again.length) more.prepend(...again);
    const after = before.filter((row) => appendedSinceAsked.has(row.id) && !movedSinceAsked.has(row.id));
    if (after.length && !more.hasAttribute("data-held-cut")) more.append(...after);
    lastLoaded = more;
  } else {
    // Rows that came into the loaded list other than moved by this file: a "Load more" answer.
    for (const row of more.children) if (!lastIds.has(row.id)) appendedSinceAsked.add(row.id);
  }
  // Rows a whole state pushed off the first page go on just below it.
  const rows = [...first.children].map((row) => row.id);
  const fell = pushedOff([...shown.keys()], rows)
    .filter((id) => !document.getElementById(id))
    .map((id) => shown.get(id));
  moveBelow(more, fell);
  // So do rows a new article pushed off the first page (the stream prepends the new one): a whole
  // state would drop them from the first page, and the loaded rows go on after them.
  const page = Number(first.dataset.page) || first.children.length;
  moveBelow(more, [...first.children].slice(page));
  // One row per article (a "Load more" that started before rows moved up, a row that came back
  // into the first page): the first page's row is the live one, else the earlier one.
  const seen = new Set([...first.children].map((row) => row.id));
  for (const row of [...more.children]) {
    if (seen.has(row.id)) row.remove();
    else seen.add(row.id);
  }
  shown = new Map([...first.children].map((row) => [row.id, row]));
  lastIds = new Set([...more.children].map((row) => row.id));
}

// Rows below the first page that were written (the live view sends each write once, the row
// as it is now): a loaded row takes its fresh version, or goes if it left the list; rows this
// client did not load are dropped. The first page's rows are the stream's own.
function takeChanges() {
  const changes = document.getElementById("library-changes");
  const more = loaded();
  if (!changes || !changes.children.length) return;
  for (const fresh of [...changes.children]) {
    const id = fresh.id.replace(/^changed-/, "");
    const held = more && more.querySelector(`#${CSS.escape(id)}`);
    if (held && !fresh.hasAttribute("data-gone")) {
      fresh.id = id;
      held.replaceWith(fresh);
    } else {
      held?.remove();
      fresh.remove();
    }
  }
}

function update() {
  tidy(); // first: a changed row that a new article just pushed off the first page is loaded now
  takeChanges();
}

// A new read of the held span: rows moved below from now on may be newer than its answer.
document.addEventListener("datastar-fetch", (event) => {
  if (event.detail?.type === "started" && event.detail.el?.id === "library-held") {
    movedSinceAsked.clear();
    appendedSinceAsked.clear();
  }
});

const list = document.getElementById("library-list");
if (list) {
  new MutationObserver(update).observe(list, { childList: true, subtree: true });
  update();
}
