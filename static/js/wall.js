// The wall's keyboard map, "N new" pills, relative times, drag reorder and pull to refresh.
// Everything that talks to the server goes through Datastar attributes in the page (or the
// page's own forms); this file only moves focus, counts and clicks those.

const wall = () => document.getElementById("wall-columns");
const columns = () => [...document.querySelectorAll(".wall .column")];
const itemsOf = (column) => [...column.querySelectorAll(".items > .item")];
const phone = () => window.matchMedia("(max-width: 639px)").matches;

// Focus -------------------------------------------------------------------------------

let current = { column: 0, item: -1 };

function focusColumn(index, { scroll = true } = {}) {
  const all = columns();
  if (!all.length) return;
  current.column = Math.max(0, Math.min(index, all.length - 1));
  current.item = -1;
  const column = all[current.column];
  column.querySelector(".column-head h2")?.setAttribute("tabindex", "-1");
  column.querySelector(".column-head h2")?.focus({ preventScroll: true });
  if (scroll) column.scrollIntoView({ behavior: "smooth", inline: "start", block: "nearest" });
  markChip(column);
}

function focusItem(step) {
  const all = columns();
  const column = all[current.column];
  if (!column) return;
  const items = itemsOf(column);
  if (!items.length) return;
  const at = items.indexOf(document.activeElement);
  const next = at < 0 ? (step > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(at + step, items.length - 1));
  items[next].focus();
  items[next].scrollIntoView({ block: "nearest" });
}

function currentItem() {
  const active = document.activeElement;
  return active?.classList.contains("item") ? active : null;
}

function syncFromFocus(event) {
  const column = event.target.closest?.(".column");
  if (column) current.column = columns().indexOf(column);
}

// Keys ----------------------------------------------------------------------------------

function typing(target) {
  return target.closest("input, textarea, select, [contenteditable], dialog, .editor");
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  const key = event.key;
  const column = columns()[current.column];
  const item = currentItem();
  // Enter opens a post's original only on the post itself: elsewhere it is the focused
  // link's, button's or menu's own (swallowing it left "+ Column" and every link shut).
  if (key === "Enter" && !item) return;
  const act = {
    j: () => focusItem(1),
    k: () => focusItem(-1),
    ArrowDown: () => focusItem(1),
    ArrowUp: () => focusItem(-1),
    h: () => focusColumn(current.column - 1),
    l: () => focusColumn(current.column + 1),
    ArrowLeft: () => focusColumn(current.column - 1),
    ArrowRight: () => focusColumn(current.column + 1),
    c: () => document.getElementById("add-column")?.click(),
    o: () => item?.querySelector("a.original")?.click(),
    Enter: () => item?.querySelector("a.original")?.click(),
    s: () => item?.querySelector("button.save")?.click(),
    r: () => column?.querySelector("[data-refresh]")?.click(),
    "/": () => document.getElementById("wall-search")?.focus(),
    "?": () => document.getElementById("keymap")?.showModal(),
  }[key];
  if (act) {
    event.preventDefault();
    act();
  } else if (/^[1-9]$/.test(key)) {
    event.preventDefault();
    focusColumn(Number(key) - 1);
  }
}

// "N new": new rows wait above a reader who scrolled down -----------------------------------

const unseen = new WeakMap();

function pillOf(column) {
  return column.querySelector(".new-pill");
}

function showPill(column) {
  const pill = pillOf(column);
  if (!pill) return;
  const count = unseen.get(column) || 0;
  pill.hidden = count === 0;
  pill.textContent = count === 1 ? pill.dataset.one || "1 new" : (pill.dataset.many || "{n} new").replace("{n}", count.toLocaleString(document.documentElement.lang || undefined));
}

function scrollerOf(column) {
  return column.querySelector(".column-body");
}

function watchList(list) {
  if (list.dataset.watched) return;
  list.dataset.watched = "1";
  new MutationObserver((records) => {
    const column = list.closest(".column");
    const fresh = records.flatMap((r) => [...r.addedNodes]).filter((n) => n.nodeType === 1 && n.classList.contains("item"));
    if (!fresh.length || !column) return;
    relativeTimes(list);
    // Prepended rows are new posts; appended ones are an older page.
    const items = itemsOf(column);
    const top = fresh.filter((node) => items.indexOf(node) < fresh.length).length;
    const scroller = scrollerOf(column);
    if (top && scroller && scroller.scrollTop > 40) {
      unseen.set(column, (unseen.get(column) || 0) + top);
      showPill(column);
    }
  }).observe(list, { childList: true });
}

function watchScroll(column) {
  const body = column.querySelector(".column-body");
  if (!body || body.dataset.watched) return;
  body.dataset.watched = "1";
  body.addEventListener("scroll", () => {
    if (body.scrollTop <= 40 && unseen.get(column)) {
      unseen.set(column, 0);
      showPill(column);
    }
  }, { passive: true });
  pillOf(column)?.addEventListener("click", () => {
    unseen.set(column, 0);
    showPill(column);
    scrollerOf(column)?.scrollTo({ top: 0, behavior: "smooth" });
  });
}

// Older pages -----------------------------------------------------------------------------------

// A column's first page is the stream's; the older pages a reader loaded sit below it in a list
// of their own, which the stream's whole state (a reconnect, columns added, moved or renamed)
// leaves alone: that state holds the first page only. So the rows new posts push past the first
// page go on at the top of the older rows, or the two lists would have a hole between them.
const shownFirst = new Map(); // column id -> the first page's rows as last seen (id -> row)

function keepOlder(column) {
  const id = column.dataset.column;
  const first = document.getElementById(`col-${id}-items`);
  const older = document.getElementById(`col-${id}-older-items`);
  if (!first || !older) return;
  const rows = [...first.children];
  const before = shownFirst.get(id) || new Map();
  shownFirst.set(id, new Map(rows.map((row) => [row.id, row])));
  if (!older.children.length) return;
  const kept = [...before.keys()].filter((rowId) => first.querySelector(`:scope > #${CSS.escape(rowId)}`));
  if (!kept.length) {
    // Nothing the reader saw is on the first page any more (away through a page of posts): the
    // posts between it and the older rows are not here, so the older rows go and "Load older"
    // goes on from the first page.
    older.replaceChildren();
    document.getElementById(`col-${id}-older-more`)?.replaceChildren();
    return;
  }
  const order = [...before.keys()];
  const fell = order.slice(order.indexOf(kept.at(-1)) + 1)
    .filter((rowId) => !document.getElementById(rowId))
    .map((rowId) => before.get(rowId));
  const past = rows.slice(Number(first.dataset.page) || rows.length);
  older.prepend(...past, ...fell);
  // One row per post (a page that was loading while rows moved): the first page's is the live one.
  for (const row of [...older.children]) {
    if (first.querySelector(`:scope > #${CSS.escape(row.id)}`)) row.remove();
  }
  shownFirst.set(id, new Map([...first.children].map((row) => [row.id, row])));
}

// "Load older" goes (hidden, or replaced by the next page's): the reader goes on at the first
// post it brought, or the focus fell to the page and Tab started again at the top.
let loading = null;

function noteLoadOlder(link) {
  const column = link.closest(".column");
  if (column) loading = { column, before: itemsOf(column).length, until: Date.now() + 15_000 };
}

function focusLoaded() {
  if (!loading || Date.now() > loading.until) {
    loading = null;
    return;
  }
  const first = itemsOf(loading.column)[loading.before];
  if (!first) return;
  loading = null;
  first.focus({ preventScroll: true });
  first.scrollIntoView({ block: "nearest" });
}

// Relative times ("5 min"), the exact time stays in the title ------------------------------

const format = new Intl.RelativeTimeFormat(document.documentElement.lang || undefined, { numeric: "auto", style: "short" });

// Each unit up to where the next takes over (seconds); the value is rounded before the unit is
// chosen, or 59.7 s read "60 sec." and 59 min 50 s "60 min.".
const UNITS = [["second", 1, 60], ["minute", 60, 3600], ["hour", 3600, 86400], ["day", 86400, 604800], ["week", 604800, 2629800], ["month", 2629800, 31557600]];

function relative(date) {
  const seconds = (date.getTime() - Date.now()) / 1000;
  for (const [unit, size, limit] of UNITS) {
    const value = Math.round(seconds / size);
    if (Math.abs(value * size) < limit) return format.format(value, unit);
  }
  return format.format(Math.round(seconds / 31557600), "year");
}

function relativeTimes(root = document) {
  for (const time of root.querySelectorAll("time.ago[datetime]")) {
    const date = new Date(time.getAttribute("datetime"));
    const text = Number.isNaN(date.getTime()) ? "" : relative(date);
    if (text && time.textContent !== text) time.textContent = text;
  }
}

// Drag to reorder (desktop) -------------------------------------------------------------------

let dragged = null;

function onDragStart(event) {
  const head = event.target.closest?.(".column-head[draggable=true]");
  if (!head) return;
  dragged = head.closest(".column");
  dragged.classList.add("dragging");
  event.dataTransfer.effectAllowed = "move";
  event.dataTransfer.setData("text/plain", dragged.dataset.column);
}

function onDragOver(event) {
  if (!dragged) return;
  const over = event.target.closest?.(".column");
  if (!over || over === dragged) return;
  event.preventDefault();
  const box = over.getBoundingClientRect();
  const after = event.clientX > box.left + box.width / 2;
  over.parentNode.insertBefore(dragged, after ? over.nextSibling : over);
}

function onDragEnd() {
  if (!dragged) return;
  dragged.classList.remove("dragging");
  dragged = null;
  const form = document.getElementById("wall-actions");
  const ids = columns().map((c) => c.dataset.column).join(",");
  const body = new URLSearchParams(new FormData(form));
  body.set("ordered_ids", ids);
  fetch("/wall/columns/reorder", { method: "POST", body, headers: { "Datastar-Request": "true" } });
}

// Phone: the chip bar follows the column on screen; pull to refresh fetches new posts --------

function markChip(column) {
  for (const chip of document.querySelectorAll(".wall-chips .chip")) {
    const here = chip.dataset.chip === column?.dataset.column;
    chip.toggleAttribute("aria-current", here);
    if (here) showChip(chip);
  }
  // The address names the column a phone shows, so a reload (or a tab the phone dropped)
  // comes back to it (`created` below goes to it) instead of to the first one.
  if (column && phone() && location.hash !== `#${column.id}`) {
    history.replaceState(history.state, "", `#${column.id}`);
  }
}

// The chip bar scrolls too: the sixth column's chip was marked out of sight.
function showChip(chip) {
  const bar = chip.parentElement.getBoundingClientRect();
  const box = chip.getBoundingClientRect();
  if (box.left < bar.left) chip.parentElement.scrollBy({ left: box.left - bar.left - 16 });
  else if (box.right > bar.right) chip.parentElement.scrollBy({ left: box.right - bar.right + 16 });
}

function onTrackScroll() {
  const track = document.getElementById("wall-track");
  if (!track || !phone()) return;
  const index = Math.round(track.scrollLeft / Math.max(1, track.clientWidth));
  const column = columns()[index];
  if (column && current.column !== index) {
    current.column = index;
    markChip(column);
  }
}

let pull = null;

function onTouchStart(event) {
  const column = event.target.closest?.(".column");
  if (!phone() || !column || scrollerOf(column).scrollTop > 0) return;
  pull = { column, y: event.touches[0].clientY, pulled: 0 };
}

function onTouchMove(event) {
  if (!pull) return;
  pull.pulled = event.touches[0].clientY - pull.y;
  pull.column.classList.toggle("pulling", pull.pulled > 70);
}

function onTouchEnd() {
  if (!pull) return;
  // The same as the menu's "Fetch new posts now" for those who may; else our database again.
  if (pull.pulled > 70) pull.column.querySelector("[data-refresh], [data-reload]")?.click();
  pull.column.classList.remove("pulling");
  pull = null;
}

// Widths ------------------------------------------------------------------------------------

// Widths are each reader's own (their stylesheet sets `--width` per column): the shared
// menu learns which one is pressed when it opens.
function markWidth(event) {
  const menu = event.target;
  if (!menu.matches?.(".column-menu") || !menu.open) return;
  const width = getComputedStyle(menu.closest(".column")).getPropertyValue("--width").trim() || "medium";
  for (const button of menu.querySelectorAll("[data-width]")) {
    button.setAttribute("aria-pressed", String(button.dataset.width === width));
  }
}

// A column menu's action ------------------------------------------------------------------------

// The focus stays with the column: the chosen action hides with its menu, so it goes to the
// menu's "⋯" (and there Escape from the editor returns). A move or a removal re-renders the
// wall and the focus fell to the page: once it has, it goes to the column in its new place, or
// to the column now where the removed one was.
let refocus = null;

function closeChosenMenu(action) {
  const menu = action.closest("details");
  const column = menu.closest(".column");
  menu.querySelector("summary")?.focus({ preventScroll: true });
  menu.removeAttribute("open");
  if (action.matches("[data-move], .danger")) {
    refocus = { id: column.id, index: columns().indexOf(column), until: Date.now() + 10_000 };
  }
}

function restoreFocus() {
  if (!refocus || Date.now() > refocus.until) {
    refocus = null;
    return;
  }
  if (document.activeElement && document.activeElement !== document.body) return;
  const column = document.getElementById(refocus.id);
  const index = refocus.index;
  refocus = null;
  if (!column) {
    focusColumn(index);
    return;
  }
  column.querySelector(".column-menu summary")?.focus({ preventScroll: true });
  column.scrollIntoView({ behavior: "smooth", inline: "nearest", block: "nearest" });
}

// The editor drawer ----------------------------------------------------------------------------

// A <dialog> the server opens by sending it without `hidden` and closes by sending it with.
// On a phone it is a bottom sheet over the wall, so it opens modal: the browser keeps Tab in
// it until it closes (Tab went on to the posts hidden behind it). On a desk it is a drawer
// beside the columns, which stay in reach. It comes after every column in the page, so it
// takes the focus when it opens (a refused form: the field to mend); a fresh drawer from the
// server lacks the mark (the morph drops it), so it is focused once. Escape closes it, back
// to the control that opened it.
let opener = null;
let pressed = null; // the last control pressed outside the drawer (a tap may not focus it)

function syncEditor() {
  const editor = document.getElementById("editor");
  if (!editor?.showModal) return;
  if (editor.hidden && editor.open) {
    editor.close();
  } else if (!editor.hidden && !editor.open && editor.querySelector("form")) {
    const active = document.activeElement;
    opener = active && active !== document.body && !editor.contains(active) ? active : pressed;
    if (phone()) editor.showModal();
    else editor.show();
  }
}

function focusEditor() {
  const editor = document.getElementById("editor");
  if (!editor?.open || editor.dataset.focused || !editor.querySelector("form")) return;
  editor.dataset.focused = "1";
  const field = editor.querySelector('[aria-invalid="true"]') || editor.querySelector("input:not([type=hidden]), textarea");
  field?.focus();
}

// Where the focus goes back to: the opener, or the "⋯" of the column menu it was in (the menu
// closed when its Edit was chosen: a closed <details> keeps its content laid out but hidden,
// so offsetParent says nothing), or "+ Column".
function openerOrNearest() {
  const menu = opener?.isConnected && opener.closest(".column-menu");
  const back = opener?.isConnected && opener.checkVisibility() ? opener : menu ? menu.querySelector("summary") : document.getElementById("add-column");
  opener = null;
  return back;
}

// However it closed (Escape, ×, Cancel, saved), it is marked closed; the focus goes back
// unless something took it meanwhile (a column just made). The event comes a task later: a
// drawer opened again meanwhile ("+ Column" right after a save) stays open.
function onEditorClosed(event) {
  const editor = event.target;
  if (editor.id !== "editor" || editor.open) return;
  editor.hidden = true;
  delete editor.dataset.focused;
  const active = document.activeElement;
  const back = openerOrNearest();
  if (active && active !== document.body && !editor.contains(active)) return;
  back?.focus();
}

// Escape closes an open column menu, back to its "⋯" (live patches keep menus open).
function closeMenu(event) {
  const menu = event.key === "Escape" && event.target.closest?.(".column-menu[open]");
  if (!menu) return;
  menu.removeAttribute("open");
  menu.querySelector("summary")?.focus();
}

// A modal dialog closes on Escape by itself; the desk's drawer is not modal.
function closeEditor(event) {
  const editor = document.getElementById("editor");
  if (event.key === "Escape" && editor?.open) editor.close();
}

// A column just made ---------------------------------------------------------------------------

// The person who adds a column is taken to it (on a phone it is a swipe past the last screen):
// the saved editor names it (`data-created`), a plain form's redirect as `/wall#col-<id>`. The
// column itself arrives with the live stream, before or after that.
let created = location.hash.match(/^#col-(\d+)$/)?.[1] || null;

function showCreated() {
  const editor = document.querySelector("#editor[data-created]");
  if (editor) {
    created = editor.dataset.created;
    editor.removeAttribute("data-created");
  }
  const column = created && document.getElementById(`col-${created}`);
  if (!column) return;
  created = null;
  focusColumn(columns().indexOf(column));
}

// Wiring ------------------------------------------------------------------------------------

function inWall(node) {
  return Boolean((node.nodeType === 1 ? node : node.parentElement)?.closest(".wall"));
}

function attach() {
  for (const column of columns()) {
    keepOlder(column);
    watchScroll(column);
    const list = column.querySelector(".items");
    if (list) watchList(list);
  }
  relativeTimes();
  showCreated();
  // A phone shows one column: its chip is marked from the start, not after the first swipe.
  if (phone() && !created && !document.querySelector(".wall-chips .chip[aria-current]")) {
    markChip(columns()[current.column]);
  }
}

document.addEventListener("keydown", onKey);
document.addEventListener("keydown", closeEditor);
document.addEventListener("keydown", closeMenu);
document.addEventListener("focusin", syncFromFocus);
document.addEventListener("dragstart", onDragStart);
document.addEventListener("dragover", onDragOver);
document.addEventListener("dragend", onDragEnd);
document.addEventListener("touchstart", onTouchStart, { passive: true });
document.addEventListener("touchmove", onTouchMove, { passive: true });
document.addEventListener("touchend", onTouchEnd);
document.addEventListener("close", onEditorClosed, { capture: true });
document.addEventListener("click", (event) => {
  if (!event.target.closest?.("#editor")) pressed = event.target.closest?.("a, button, summary") || pressed;
  // A menu closes once one of its actions is chosen (live patches keep it open otherwise).
  const action = event.target.closest?.(".column-menu .menu a, .column-menu .menu button");
  if (action) closeChosenMenu(action);
  const older = event.target.closest?.(".column .load-more a");
  if (older) noteLoadOlder(older);
  if (event.target.closest?.("#keymap-open")) document.getElementById("keymap")?.showModal();
  const chip = event.target.closest?.(".wall-chips .chip");
  if (chip) {
    event.preventDefault();
    const column = document.getElementById(`col-${chip.dataset.chip}`);
    if (column) focusColumn(columns().indexOf(column));
  }
});
document.addEventListener("toggle", markWidth, { capture: true });
document.addEventListener("scroll", onTrackScroll, { capture: true, passive: true });
// The live stream replaces the wall on (re)connect: attach to the new columns each time.
new MutationObserver((records) => {
  const touched = new Set(records.map((r) => r.target.closest?.(".column")).filter(Boolean));
  for (const column of touched) keepOlder(column);
  const fresh = records.some((r) => [...r.addedNodes].some((n) => n.nodeType === 1 && (n.matches(".wall, .column, .items") || n.querySelector?.(".column"))));
  if (fresh) attach();
  // A whole state morphs a time's text back to the server's date: a text change, watched too.
  else if (records.some((r) => (r.addedNodes.length || r.type === "characterData") && inWall(r.target))) relativeTimes();
  syncEditor();
  if (created || document.querySelector("#editor[data-created]")) showCreated();
  restoreFocus();
  focusLoaded();
  focusEditor();
}).observe(document.getElementById("main") || document.body, { childList: true, subtree: true, characterData: true });
setInterval(relativeTimes, 30_000);
attach();
