// The library's "Load more" rows. They live in #library-loaded, below the first page, which the
// live stream's whole state (a reconnect, a client that fell behind) leaves alone: that state
// covers the first page only. This file keeps the two lists one list of distinct articles. (A
// whole state also makes a client with loaded rows read them again - #library-held - so rows it
// pushed past the first page are not lost: docs/decisions/live.md.)
const firstPage = () => document.getElementById("library-rows");
const loaded = () => document.getElementById("library-loaded");

function tidy() {
  const first = firstPage();
  const more = loaded();
  if (!first || !more) return;
  // Rows a new article pushed off the first page go on just below it: a whole state would
  // drop them from the first page, and the loaded rows go on after them.
  const page = Number(first.dataset.page) || first.children.length;
  const overflow = [...first.children].slice(page);
  if (overflow.length) more.prepend(...overflow);
  // One row per article (a "Load more" that started before rows moved up, a row that came
  // back into the first page): the first page's row is the live one, else the earlier one.
  const seen = new Set([...first.children].map((row) => row.id));
  for (const row of [...more.children]) {
    if (seen.has(row.id)) row.remove();
    else seen.add(row.id);
  }
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

const list = document.getElementById("library-list");
if (list) {
  new MutationObserver(update).observe(list, { childList: true, subtree: true });
  update();
}
