// Browser tests of the annotation app: headless Debian Chromium via playwright-core.
// Usage: node tests/e2e/annotate.mjs http://127.0.0.1:PORT ADMIN_INVITE_LINK
// The server must run on a throwaway SQLite file holding the imported SerenQA questionnaire
// and the one-time link of a bootstrapped admin (see scripts/test.sh). The steps build on each
// other: admin → invites → annotators rank → reviewer reads aggregates. Screenshots go to
// tests/e2e/artifacts/annotate-*.png; prints "N passed, N failed" and exits non-zero on failure.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const tools = process.env.SERENQA_TOOLS || path.join(process.env.HOME || '/root', '.cache/serenqa-tools');
const require = createRequire(path.join(tools, 'node_modules', 'noop.js'));
const { chromium } = require('playwright-core');

const base = process.argv[2] || 'http://127.0.0.1:8080';
const adminLink = process.argv[3];
if (!adminLink) { console.error('usage: annotate.mjs BASE ADMIN_INVITE_LINK'); process.exit(2); }
const here = path.dirname(fileURLToPath(import.meta.url));
const shots = path.join(here, 'artifacts');
mkdirSync(shots, { recursive: true });
const shot = (name) => path.join(shots, `annotate-${name}.png`);

function assert(cond, msg) { if (!cond) throw new Error(msg); }
const local = (link) => base + new URL(link).pathname;
const PW = 'a long enough password';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const contexts = [];
// Every console message of every page: the last test asserts that no Leptos panic (e.g. "Tried
// to access a reactive value that has already been disposed") was logged.
const consoleLog = [];
async function newPage(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => { page.errors.push(String(e)); consoleLog.push(`pageerror: ${e}`); });
  page.on('console', (m) => consoleLog.push(`${m.type()}: ${m.text()}`));
  return page;
}

async function acceptInvite(page, link, name) {
  await page.goto(local(link));
  await page.getByTestId('invite-email').waitFor({ timeout: 15000 });
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Choose a password').fill(PW);
  await page.getByLabel('Repeat the password').fill(PW);
  await page.getByRole('button', { name: 'Create my account' }).click();
  await page.getByTestId('whoami').waitFor({ timeout: 15000 });
}

const order = (page) => page.locator('li.cand').evaluateAll((els) => els.map((e) => e.dataset.cand));
const ranks = (page) => page.getByTestId('rank').allTextContents();

const state = {};
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('admin accepts the one-time link and invites two annotators and a reviewer', async () => {
  const page = state.admin = await newPage();
  await acceptInvite(page, adminLink, 'Admin');
  assert(page.url().endsWith('/admin'), `admin lands on /admin: ${page.url()}`);
  state.links = {};
  for (const [who, role] of [['ann1', 'annotator'], ['ann2', 'annotator'], ['rev', 'reviewer']]) {
    await page.locator('input[name=invite-email]').fill(`${who}@example.org`);
    await page.locator('select[name=invite-role]').selectOption(role);
    await page.getByRole('button', { name: 'Create invite link' }).click();
    await page.waitForFunction((prev) => {
      const el = document.querySelector('[data-testid=invite-link]');
      return el && el.value.includes('/invite/') && el.value !== prev;
    }, Object.values(state.links).at(-1) || '');
    state.links[who] = await page.getByTestId('invite-link').inputValue();
  }
  await page.goto(local(adminLink));
  await page.getByText('has already been used; sign in instead').waitFor({ timeout: 15000 });
  await page.goto(base + '/admin');
  await page.getByText('admin@example.org').last().waitFor();
  await page.screenshot({ path: shot('admin'), fullPage: true });
});

// The link field of the last created invite, once it shows a link other than `prev`.
async function newLink(page, prev) {
  await page.waitForFunction((p) => {
    const el = document.querySelector('[data-testid=invite-link]');
    return el && el.value.includes('/invite/') && el.value !== p;
  }, prev || '');
  return page.getByTestId('invite-link').inputValue();
}

// What the invite page says when the link cannot be used.
async function inviteRefusal(link) {
  const p = await newPage();
  await p.goto(local(link));
  const err = p.locator('p.error');
  await err.waitFor({ timeout: 15000 });
  const text = await err.textContent();
  assert(await p.getByTestId('invite-email').count() === 0, 'no form for a dead link');
  await p.context().close();
  return text;
}

test('invites: copy button, one valid link per address (re-inviting invalidates the first), pending list with new link and revoke', async () => {
  const page = state.admin;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await page.goto(base + '/admin');
  const invite = async (email, role = 'annotator') => {
    await page.locator('input[name=invite-email]').fill(email);
    await page.locator('select[name=invite-role]').selectOption(role);
    await page.getByRole('button', { name: 'Create invite link' }).click();
  };
  await invite('dup@example.org');
  const first = await newLink(page, Object.values(state.links).at(-1));
  assert(!(await page.getByTestId('invite-replaced').count()), 'nothing replaced the first time');
  await page.getByTestId('copy-link').click();
  await page.getByTestId('copied').waitFor();
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  assert(clip === first, `the clipboard holds the link: ${clip}`);
  const pending = page.getByTestId('pending-invites');
  await pending.locator('li[data-email="dup@example.org"]').waitFor();
  await page.getByTestId('invites').screenshot({ path: shot('invites-1280') });

  // The same address again: a new link, the old one named as dead, one pending row.
  await invite('dup@example.org', 'reviewer');
  const second = await newLink(page, first);
  const replaced = await page.getByTestId('invite-replaced').textContent();
  assert(replaced === 'The earlier link for dup@example.org no longer works.', replaced);
  await pending.locator('li[data-email="dup@example.org"] .tag', { hasText: 'reviewer' }).waitFor();
  assert(await pending.locator('li[data-email="dup@example.org"]').count() === 1, 'one pending invite per address');
  const r1 = await inviteRefusal(first);
  assert(/replaced by a newer one/.test(r1), `the first link is refused: ${r1}`);

  // "New link" on a pending row re-issues (the old one stops working); "Revoke" withdraws.
  await invite('pend@example.org');
  const p1 = await newLink(page, second);
  await pending.locator('li[data-email="pend@example.org"]').getByTestId('reissue').click();
  const p2 = await newLink(page, p1);
  assert((await page.getByTestId('invite-replaced').textContent()).includes('pend@example.org'), 'the re-issue says the old link is dead');
  assert(/replaced by a newer one/.test(await inviteRefusal(p1)), 'the re-issued link replaced the pending one');
  await pending.locator('li[data-email="dup@example.org"]').getByTestId('revoke').click();
  const revoked = await page.getByTestId('invite-revoked').textContent();
  assert(revoked === 'Revoked: the link for dup@example.org no longer works.', revoked);
  await page.waitForFunction(() => !document.querySelector('[data-testid=pending-invites] li[data-email="dup@example.org"]'));
  const r2 = await inviteRefusal(second);
  assert(/withdrawn by an administrator/.test(r2), `the revoked link is refused: ${r2}`);
  // The re-issued link still works.
  const ok = await newPage();
  await ok.goto(local(p2));
  await ok.getByTestId('invite-email').waitFor({ timeout: 15000 });
  await ok.context().close();

  // 390 px: the contents list, the invites and the pending list fit; the link can be copied.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/admin');
  await page.getByTestId('admin-toc').waitFor();
  await page.screenshot({ path: shot('admin-top-390'), fullPage: false });
  await invite('narrow@example.org');
  await newLink(page, '');
  await pending.locator('li[data-email="narrow@example.org"]').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `admin page overflows by ${overflow}px at 390px`);
  await page.getByTestId('invites').screenshot({ path: shot('invites-390') });
  // The contents list reaches the weights panel at the bottom of the long page.
  await page.getByTestId('admin-toc').getByRole('link', { name: 'Weights in force' }).click();
  await page.waitForFunction(() => {
    const r = document.getElementById('weights').getBoundingClientRect();
    return r.top >= -2 && r.top < 120;
  }, null, { timeout: 5000 });
  await page.setViewportSize({ width: 1280, height: 900 });
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('annotator logs in by invite, ranks by drag and by keyboard, reloads and finds it saved', async () => {
  const page = state.ann1 = await newPage();
  await acceptInvite(page, state.links.ann1, 'Annotator One');
  assert(page.url().endsWith('/annotate'), `annotator lands on /annotate: ${page.url()}`);
  await page.getByTestId('batches').waitFor();
  // This annotator's tests stay on the question they submit (auto-advance is tested with ann2).
  await page.evaluate(() => localStorage.setItem('serenqa:auto-advance', '0'));
  if (await page.getByTestId('guidelines').count()) await page.getByTestId('guidelines-close').click();
  await page.screenshot({ path: shot('batches'), fullPage: true });
  await page.getByRole('link', { name: 'Start' }).first().click();
  await page.getByTestId('question-text').waitFor();
  // A question with five candidates in the first batch.
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const batch = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const q = batch.questions.find((x) => x.candidates >= 5);
  state.qid = q.id;
  await page.goto(base + `/annotate/q/${q.id}`);
  await page.getByTestId('question-text').waitFor();
  assert(await page.locator('li.cand a.src').count() >= 5, 'every candidate links to its source database');
  const start = await order(page);
  assert(start.length >= 5, `${start.length} candidates`);

  // Drag the third candidate by its handle to the top.
  const handle = page.locator(`li.cand[data-cand="${start[2]}"] .handle`);
  const top = page.locator(`li.cand[data-cand="${start[0]}"]`);
  const hb = await handle.boundingBox();
  const tb = await top.boundingBox();
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2 + (tb.y + 5 - (hb.y + hb.height / 2)) * i / 10);
  }
  await page.mouse.up();
  const dragged = await order(page);
  assert(dragged[0] === start[2], `drag moved ${start[2]} to the top: ${dragged}`);

  // Keyboard: focus the last candidate, move it up twice, tie it with the one above, mark unsure.
  const last = dragged.at(-1);
  await page.locator(`li.cand[data-cand="${last}"]`).focus();
  const f0 = await page.evaluate(() => document.activeElement?.outerHTML?.slice(0, 120));
  await page.keyboard.press('ArrowUp');
  const o1 = await order(page);
  assert(o1.indexOf(last) === o1.length - 2, `first ArrowUp: ${o1}; focus was ${f0}`);
  await page.waitForTimeout(50); // a person does not press keys 1 ms apart
  await page.keyboard.press('ArrowUp');
  await page.waitForTimeout(50);
  const moved = await order(page);
  assert(moved.indexOf(last) === moved.length - 3, `keyboard moved ${last} up twice: ${moved}`);
  const focused = await page.evaluate(() => document.activeElement?.dataset?.cand);
  assert(focused === last, `focus stays on the moved candidate (${focused})`);
  await page.keyboard.press('t');
  await page.waitForTimeout(50);
  await page.keyboard.press('u');
  const r = await ranks(page);
  assert(r.at(-3) === r.at(-4), `tie shares the rank: ${r}`);
  await page.locator('.confidence label', { hasText: '4' }).click();
  // A long note in another script: the box keeps 4,000 characters (8,000 bytes of "ä"), says
  // it is at the limit, and the autosave of that draft is accepted (the server counts
  // characters too), so the ranking and confidence reach the server with it.
  const longSave = page.waitForResponse((r) => /\/api\/annotate\/questions\/\d+\/response$/.test(r.url()) && r.request().method() !== 'GET' && (r.request().postData() || '').includes('ääää'), { timeout: 15000 });
  await page.locator('.comment textarea').fill('ä'.repeat(4100));
  const long = await page.locator('.comment textarea').inputValue();
  assert(long.length <= 4000, `the box holds at most 4000 characters: ${long.length}`);
  if (long.length === 4000) assert(/the limit/.test(await page.getByTestId('comment-count').textContent()), 'the counter says the limit was reached');
  const saved = await longSave;
  assert(saved.status() === 200, `the long comment's autosave is accepted: ${saved.status()} ${await saved.text()}`);
  await page.locator('.comment textarea').fill('Third candidate is the surprising one.');
  assert(/^38 \/ 4000 characters$/.test((await page.getByTestId('comment-count').textContent()).trim()), 'the counter counts characters');
  await page.getByTestId('submit').click();
  await page.getByTestId('save-state').filter({ hasText: 'submitted' }).waitFor({ timeout: 15000 });
  await page.waitForTimeout(700); // let the debounced autosave of the comment land too
  await page.getByTestId('save-state').filter({ hasText: 'Saved' }).waitFor({ timeout: 15000 });
  const savedOrder = await order(page);
  const savedRanks = await ranks(page);
  await page.screenshot({ path: shot('question'), fullPage: true });

  await page.reload();
  await page.getByTestId('question-text').waitFor();
  await page.locator('li.cand').first().waitFor();
  assert(JSON.stringify(await order(page)) === JSON.stringify(savedOrder), `order after reload: ${await order(page)} vs ${savedOrder}`);
  assert(JSON.stringify(await ranks(page)) === JSON.stringify(savedRanks), `ranks after reload: ${await ranks(page)} vs ${savedRanks}`);
  assert(await page.locator(`li.cand[data-cand="${last}"].unsure`).count() === 1, 'unsure kept');
  assert(await page.locator('.confidence label.on').textContent() === '4', 'confidence kept');
  assert((await page.locator('.comment textarea').inputValue()).startsWith('Third candidate'), 'comment kept');
  assert((await page.getByTestId('save-state').textContent()).includes('submitted'), 'still submitted');
  const mine = await (await page.request.get(base + '/api/annotate/responses')).json();
  state.rid = mine[0].id;
  await page.goto(base + '/annotate');
  await page.getByTestId('batches').waitFor();
  assert((await page.getByTestId('batches').textContent()).includes('1 of 349 submitted'), 'progress counts the submission');
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('another annotator cannot open the first one\'s response (403) and ranks the same question', async () => {
  const page = state.ann2 = await newPage();
  await acceptInvite(page, state.links.ann2, 'Annotator Two');
  // First visit: the guidelines open by themselves; dismissing them is remembered.
  await page.getByTestId('guidelines').waitFor({ timeout: 10000 });
  const gtext = await page.getByTestId('guidelines').textContent();
  assert(/Relevant/.test(gtext) && /Novel/.test(gtext) && /Surprising/.test(gtext) && /Example 1/.test(gtext) && /Example 2/.test(gtext), `guidelines: ${gtext.slice(0, 200)}`);
  await page.screenshot({ path: shot('guidelines-1280'), fullPage: true });
  const resp = await page.request.get(base + `/api/responses/${state.rid}`);
  assert(resp.status() === 403, `status ${resp.status()}`);
  const body = await resp.json();
  assert(body.code === 'forbidden', JSON.stringify(body));
  const own = await state.ann1.request.get(base + `/api/responses/${state.rid}`);
  assert(own.status() === 200, `the author reads it: ${own.status()}`);
  // Rank by keyboard only and submit.
  await page.goto(base + `/annotate/q/${state.qid}`);
  await page.getByTestId('question-text').waitFor();
  // Still open on the question page (not dismissed yet); "Got it" closes it for good.
  await page.getByTestId('guidelines').waitFor();
  await page.getByTestId('guidelines-close').click();
  assert(await page.getByTestId('guidelines').count() === 0, 'closed');
  await page.reload();
  await page.getByTestId('question-text').waitFor();
  assert(await page.getByTestId('guidelines').count() === 0, 'dismissal remembered after a reload');
  await page.getByTestId('guidelines-toggle').click();
  await page.getByTestId('guidelines').waitFor();
  await page.getByTestId('guidelines-toggle').click();
  // The known answers: every candidate, alphabetically, with its place in the batch.
  const names = await page.locator('li.cand .cand-name strong').allTextContents();
  const known = await page.locator('[data-testid=known-answers] li').evaluateAll((els) => els.map((e) => e.firstChild.textContent));
  assert(JSON.stringify(known) === JSON.stringify([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()))), `known answers ${known} vs candidates ${names}`);
  assert(/^Question \d+ of 349$/.test(await page.getByTestId('q-position').textContent()), await page.getByTestId('q-position').textContent());
  const o = await order(page);
  await page.locator(`li.cand[data-cand="${o[1]}"]`).focus();
  await page.keyboard.press('ArrowUp');
  await page.locator('.confidence label', { hasText: '3' }).click();
  assert(await page.getByTestId('auto-advance').isChecked(), 'auto-advance is on by default');
  await page.getByTestId('submit').click();
  // Submitted → on to the next question still to do, saying so.
  await page.waitForURL((u) => u.searchParams.get('submitted') === String(state.qid), { timeout: 15000 });
  await page.getByTestId('advanced').waitFor();
  await page.getByTestId('question-text').waitFor();
  const view = await (await page.request.get(base + `/api/annotate/questions/${state.qid}`)).json();
  assert(view.response && view.response.status === 'complete', 'the submission is stored');
  assert(page.url().includes(`/annotate/q/${view.next_todo}`), `advanced to ${page.url()}, next to do is ${view.next_todo}`);
  await page.setViewportSize({ width: 390, height: 844 });
  const qOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(qOverflow <= 1, `the question page overflows by ${qOverflow}px at 390px`);
  await page.screenshot({ path: shot('question-390'), fullPage: true });
  await page.screenshot({ path: shot('question-390-top'), fullPage: false });
  await page.getByTestId('guidelines-toggle').click();
  await page.getByTestId('guidelines').waitFor();
  await page.screenshot({ path: shot('question-guidelines-390'), fullPage: true });
  await page.getByTestId('guidelines-toggle').click();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: shot('question-advanced-1280'), fullPage: true });
});

// Every key of a JSON value, at any depth.
function keysOf(v, out = []) {
  if (Array.isArray(v)) v.forEach((x) => keysOf(x, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.push(k); keysOf(x, out); }
  return out;
}

test('no `position` (or LLM rank) reaches an annotator: every API reply the pages load, and the obvious endpoints', async () => {
  const page = await newPage();
  await page.context().addCookies(await state.ann2.context().cookies());
  const replies = [];
  page.on('response', async (r) => {
    if (!r.url().includes('/api/') || !(r.headers()['content-type'] || '').includes('json')) return;
    try { replies.push({ url: r.url(), body: await r.json() }); } catch { /* a keepalive or aborted reply */ }
  });
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  await page.goto(base + '/annotate');
  await page.getByTestId('batches').waitFor();
  await page.goto(base + `/annotate/batch/${batches[0].batch.id}`);
  await page.getByTestId('question-list').waitFor();
  await page.goto(base + `/annotate/q/${state.qid}`);
  await page.locator('li.cand').first().waitFor();
  await page.waitForTimeout(300);
  for (const path of ['/api/annotate/batches', `/api/annotate/batches/${batches[0].batch.id}`, `/api/annotate/questions/${state.qid}`, '/api/annotate/responses']) {
    replies.push({ url: path, body: await (await page.request.get(base + path)).json() });
  }
  assert(replies.some((r) => r.url.includes('/api/annotate/questions/')), `the question reply was seen: ${replies.map((r) => r.url)}`);
  for (const r of replies) {
    const bad = keysOf(r.body).filter((k) => k === 'position' || k === 'llm_rank');
    assert(bad.length === 0, `${r.url} sends ${bad}`);
  }
  // The order on the page is not the id order (ids ascend by name, the page shows a shuffle
  // the annotator's own ranking then rearranges); the DOM carries no position either.
  assert(await page.locator('[data-position], [data-llm-rank]').count() === 0, 'no position in the DOM');
  await page.context().close();
});

test('the batch page lists every question at full height, with "to do only", search and clean categories', async () => {
  const page = state.ann2;
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(base + `/annotate/batch/${batches[0].batch.id}`);
    const list = page.getByTestId('question-list');
    await list.waitFor();
    const n = await list.locator('li').count();
    assert(n === 349, `${n} questions listed`);
    const box = await list.evaluate((el) => ({ sh: el.scrollHeight, ch: el.clientHeight, oy: getComputedStyle(el).overflowY }));
    assert(box.sh <= box.ch + 1 && box.oy !== 'auto' && box.oy !== 'scroll' && box.ch > 349 * 20, `no inner scroll box: ${JSON.stringify(box)}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const wide = await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 3).map((e) => `${e.tagName}.${e.className}: ${(e.textContent || '').slice(0, 40)}`));
    assert(overflow <= 1, `overflows by ${overflow}px at ${w}px: ${wide}`);
    const text = await list.textContent();
    assert(!text.includes(':None'), 'no ":None" category labels');
    assert((await list.locator('li .qnum').first().textContent()) === '1' && (await list.locator('li .qnum').last().textContent()) === '349', 'numbered 1–349');
    await page.screenshot({ path: shot(`batch-${w}`), fullPage: false });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const list = page.getByTestId('question-list');
  // ann2 submitted one question: "to do only" hides it.
  await page.getByTestId('todo-only').check();
  assert(await list.locator('li').count() === 348, `to do only: ${await list.locator('li').count()}`);
  assert(await list.locator('li[data-status=submitted]').count() === 0, 'no submitted question under "to do only"');
  assert((await page.getByTestId('shown-count').textContent()) === 'showing 348 of 349', await page.getByTestId('shown-count').textContent());
  await page.getByTestId('todo-only').uncheck();
  // Search over the text (case-insensitive).
  const some = (await list.locator('li a').nth(10).textContent()).split(' ').slice(2, 5).join(' ');
  await page.getByTestId('question-search').fill(some.toUpperCase());
  const hits = await list.locator('li a').allTextContents();
  assert(hits.length >= 1 && hits.every((t) => t.toLowerCase().includes(some.toLowerCase())), `search "${some}": ${hits.length} hits`);
  await page.getByTestId('question-search').fill('no question says this zzqx');
  await list.getByText('No question matches.').waitFor();
  await page.getByTestId('question-search').fill('');
  assert(await list.locator('li').count() === 349, 'all back');
});

test('ties stay with their items when another item moves', async () => {
  const page = state.ann2;
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const batch = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const q = batch.questions.find((x) => x.candidates >= 4 && !x.status);
  await page.goto(base + `/annotate/q/${q.id}`);
  await page.locator('li.cand').first().waitFor();
  const o = await order(page);
  // [a, b, c=b, d]: c tied with b. Moving b above a must not tie c to a.
  await page.locator(`li.cand[data-cand="${o[2]}"]`).focus();
  await page.keyboard.press('t');
  let r = await ranks(page);
  assert(r[1] === r[2], `c tied with b: ${r}`);
  await page.locator(`li.cand[data-cand="${o[1]}"]`).focus();
  await page.keyboard.press('ArrowUp');
  const moved = await order(page);
  assert(moved[0] === o[1] && moved[1] === o[0] && moved[2] === o[2], `moved: ${moved}`);
  r = await ranks(page);
  assert(r[1] !== r[2], `c did not re-attach to a: ${r}`);
  // Moving b back between a and c puts it into a group only where it lands between two tied items.
  await page.locator(`li.cand[data-cand="${o[3]}"]`).focus();
  await page.keyboard.press('t'); // d tied with c
  await page.locator(`li.cand[data-cand="${o[1]}"]`).focus();
  for (let k = 0; k < 2; k++) { await page.keyboard.press('ArrowDown'); await page.waitForTimeout(50); }
  // [a, b, c, d=c] → b lands between c and the d tied to it: it joins their group (and shows it).
  const o2 = await order(page);
  r = await ranks(page);
  assert(JSON.stringify(o2) === JSON.stringify([o[0], o[2], o[1], o[3]]) && JSON.stringify(r) === '["1","2","2","2"]', `b joined the c–d group: ${o2} ${r}`);
  assert(await page.locator(`li.cand[data-cand="${o[1]}"] .tag.tie`).count() === 1, 'b shows as tied');
  await page.screenshot({ path: shot('ties-1280'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: shot('ties-390'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('a save while offline says so in plain words and is sent as soon as the connection is back', async () => {
  const page = state.ann2;
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const batch = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const q = batch.questions.filter((x) => x.candidates >= 3 && !x.status)[3];
  await openQuestion(page, q.id);
  await page.context().setOffline(true);
  const wanted = await moveSecondUp(page);
  const st = page.getByTestId('save-state');
  await st.filter({ hasText: 'offline' }).waitFor({ timeout: 10000 });
  const t = await st.textContent();
  assert(!/TypeError|Failed to fetch/.test(t) && /sent automatically/.test(t), `save state: ${t}`);
  assert(await st.evaluate((e) => e.classList.contains('warn')), 'shown as a warning');
  await st.scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot('offline-1280'), fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await st.scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot('offline-390'), fullPage: false });
  await page.setViewportSize({ width: 1280, height: 900 });
  // Let the back-off grow past the first retries, then reconnect: the save goes at once.
  await page.waitForTimeout(3500);
  await page.context().setOffline(false);
  const back = Date.now();
  await st.filter({ hasText: 'Saved' }).waitFor({ timeout: 15000 });
  const took = Date.now() - back;
  assert(took < 2500, `saved ${took} ms after reconnecting (the back-off alone would wait longer)`);
  await waitSaved(page, q.id, wanted, 'saved after reconnecting');
});

test('dragging near the bottom edge scrolls the page', async () => {
  const page = await newPage({ width: 390, height: 600 });
  await page.context().addCookies(await state.ann2.context().cookies());
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const batch = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const q = batch.questions.filter((x) => x.candidates >= 5 && !x.status)[2];
  await openQuestion(page, q.id);
  await page.evaluate(() => localStorage.setItem('serenqa:guidelines-seen', '1'));
  const first = (await order(page))[0];
  const handle = page.locator(`li.cand[data-cand="${first}"] .handle`);
  await handle.scrollIntoViewIfNeeded();
  const y0 = await page.evaluate(() => window.scrollY);
  const hb = await handle.boundingBox();
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  await page.mouse.move(hb.x + hb.width / 2, 590, { steps: 8 });
  await page.waitForTimeout(1200);
  const y1 = await page.evaluate(() => window.scrollY);
  await page.mouse.up();
  assert(y1 > y0 + 100, `scrolled while holding near the edge: ${y0} → ${y1}`);
  const after = await order(page);
  assert(after.indexOf(first) > 0, `the dragged item moved down: ${after}`);
  await page.context().close();
});

// ----- saving: leaving a question, conflicts, edits of a submission -----

// The saved ranking of a question as candidate ids in list order (API, the page's own session).
async function savedOrder(page, qid) {
  const v = await (await page.request.get(base + `/api/annotate/questions/${qid}`)).json();
  if (!v.response) return null;
  const r = v.response.pending ? v.response.pending.ranking : v.response.ranking;
  return r.map((e) => String(e.candidate));
}
async function waitSaved(page, qid, expected, what) {
  const deadline = Date.now() + 8000;
  let got = null;
  while (Date.now() < deadline) {
    got = await savedOrder(page, qid);
    if (JSON.stringify(got) === JSON.stringify(expected)) return;
    await page.waitForTimeout(100);
  }
  throw new Error(`${what}: stored ${got}, expected ${expected}`);
}
async function openQuestion(page, qid) {
  await page.goto(base + `/annotate/q/${qid}`);
  await page.getByTestId('question-text').waitFor();
  await page.locator('li.cand').first().waitFor();
}
// Moves the second candidate to the top with the keyboard; returns the new order.
async function moveSecondUp(page) {
  const o = await order(page);
  await page.locator(`li.cand[data-cand="${o[1]}"]`).focus();
  await page.keyboard.press('ArrowUp');
  const moved = await order(page);
  assert(moved[0] === o[1], `moved: ${moved} from ${o}`);
  return moved;
}

test('a change followed, before the autosave pause ends, by "Next →", the back link or a reload is saved', async () => {
  const page = state.ann1;
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const batch = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const fresh = batch.questions.filter((x) => x.id !== state.qid && x.candidates >= 3 && !x.status);
  assert(fresh.length >= 8, `${fresh.length} fresh questions`);
  state.fresh = fresh.map((x) => x.id);
  const ways = [
    ['Next →', async () => { await page.getByRole('link', { name: 'Next →' }).click(); await page.waitForURL((u) => !u.pathname.endsWith(`/${qid}`)); }],
    ['the back link', async () => { await page.locator('a[href^="/annotate/batch/"]').first().click(); await page.waitForURL(/\/annotate\/batch\//); }],
    ['a reload (pagehide)', async () => { await page.reload(); }],
  ];
  // The page's clock stands still from just before the change until the save is stored, so
  // the 400 ms autosave pause never ends: a save that reaches the server was sent by leaving,
  // however slow this machine is (no wall-clock bound in the test).
  const puts = [];
  page.on('request', (r) => { if (r.method() === 'PUT' && r.url().includes('/response')) puts.push(r.url()); });
  await page.clock.install();
  let qid;
  for (const [i, [how, leave]] of ways.entries()) {
    qid = state.fresh[i];
    await openQuestion(page, qid);
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 50);
    const expected = await moveSecondUp(page);
    try {
      await leave();
      await waitSaved(page, qid, expected, `left by ${how} with the autosave pause not over`);
    } finally {
      await page.clock.resume(); // the later tests use this page with time flowing
    }
    // (The reload's keepalive request is not reported by the unloading page; that the change
    // is stored at all proves it was sent, since the old page's pause never ended.)
    const sent = puts.some((u) => u.includes(`/questions/${qid}/response`));
    assert(how.startsWith('a reload') || sent, `left by ${how}: no save was sent`);
    await openQuestion(page, qid);
    assert(JSON.stringify(await order(page)) === JSON.stringify(expected), `after ${how} and a reload: ${await order(page)} vs ${expected}`);
    assert(await page.getByTestId('restore').count() === 0, 'nothing left to restore once saved');
  }
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('a save based on an old revision gets the conflict view: take theirs, keep mine', async () => {
  const a = state.ann1;
  const qid = state.fresh[4];
  await openQuestion(a, qid);
  await moveSecondUp(a);
  await a.getByTestId('save-state').filter({ hasText: 'revision 1' }).waitFor({ timeout: 15000 });
  // A second tab of the same annotator saves revision 2 first.
  const b = await newPage();
  await b.context().addCookies(await a.context().cookies());
  await openQuestion(b, qid);
  const theirs = await moveSecondUp(b);
  await b.getByTestId('save-state').filter({ hasText: 'revision 2' }).waitFor({ timeout: 15000 });
  // The first tab, still on revision 1, saves: 409 stale_revision → the conflict view.
  const o = await order(a);
  await a.locator(`li.cand[data-cand="${o[2]}"]`).focus();
  await a.keyboard.press('ArrowUp');
  await a.getByTestId('conflict').waitFor({ timeout: 15000 });
  assert((await a.getByTestId('conflict').textContent()).includes('revision 2'), await a.getByTestId('conflict').textContent());
  assert(await a.getByTestId('theirs').count() === 1, 'their ranking is shown');
  assert((await a.getByTestId('save-state').textContent()).includes('changed elsewhere'), 'the state says it was not saved');
  await a.screenshot({ path: shot('conflict'), fullPage: true });
  await waitSaved(a, qid, theirs, 'the stale save stored nothing');
  await a.getByTestId('take-theirs').click();
  assert(await a.getByTestId('conflict').count() === 0, 'resolved');
  assert(JSON.stringify(await order(a)) === JSON.stringify(theirs), `took theirs: ${await order(a)} vs ${theirs}`);
  const next = await moveSecondUp(a);
  await a.getByTestId('save-state').filter({ hasText: 'revision 3' }).waitFor({ timeout: 15000 });
  await waitSaved(a, qid, next, 'saving on after taking theirs');
  // Now the second tab is behind: its next change conflicts; "Keep mine" stores it.
  const mine = await moveSecondUp(b);
  await b.getByTestId('conflict').waitFor({ timeout: 15000 });
  await b.getByTestId('keep-mine').click();
  await b.getByTestId('save-state').filter({ hasText: 'revision 4' }).waitFor({ timeout: 15000 });
  await waitSaved(b, qid, mine, 'kept mine');
  // An injected PUT based on an old revision is refused with the stored state.
  const stale = await b.request.put(base + `/api/annotate/questions/${qid}/response`, {
    headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': (await (await b.request.get(base + '/api/auth/me')).json()).csrf },
    data: { submission_id: 'e2e-stale-1', base_revision: 1, status: 'draft', confidence: null, comment: '', ranking: mine.map((c, k) => ({ candidate: Number(c), rank: k + 1, unsure: false })).reverse() },
  });
  assert(stale.status() === 409, `stale PUT: ${stale.status()}`);
  const body = await stale.json();
  assert(body.code === 'stale_revision' && body.revision === 4 && body.current.revision === 4, JSON.stringify(body).slice(0, 300));
  assert(a.errors.length === 0 && b.errors.length === 0, a.errors.concat(b.errors).join('; '));
});

test('edits of a submitted ranking stay a draft until "Update submission"', async () => {
  const page = state.ann1;
  const qid = state.qid;
  const submitted = async () => (await (await page.request.get(base + `/api/annotate/questions/${qid}`)).json()).response;
  const before = await submitted();
  assert(before.status === 'complete' && !before.pending, 'submitted earlier');
  await openQuestion(page, qid);
  assert((await page.getByTestId('submit').textContent()).includes('Update submission'), 'the button says Update submission');
  const edited = await moveSecondUp(page);
  await page.getByTestId('save-state').filter({ hasText: 'Edits saved as a draft' }).waitFor({ timeout: 15000 });
  const during = await submitted();
  assert(JSON.stringify(during.ranking) === JSON.stringify(before.ranking), 'the submission is unchanged by the edit');
  assert(during.pending && String(during.pending.ranking[0].candidate) === edited[0], 'the edit is kept as a draft');
  // Discard goes back to the submission.
  await page.getByTestId('discard-edits').click();
  await page.getByTestId('save-state').filter({ hasText: 'Saved, submitted' }).waitFor({ timeout: 15000 });
  assert(!(await submitted()).pending, 'discarded');
  const again = await moveSecondUp(page);
  await page.getByTestId('save-state').filter({ hasText: 'Edits saved as a draft' }).waitFor({ timeout: 15000 });
  await page.getByTestId('submit').click();
  await page.getByTestId('save-state').filter({ hasText: 'Saved, submitted' }).waitFor({ timeout: 15000 });
  const after = await submitted();
  assert(!after.pending && after.status === 'complete' && String(after.ranking[0].candidate) === again[0], 'updated submission');
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('changes this device could not save are offered back', async () => {
  const page = state.ann1;
  const qid = state.fresh[5];
  await openQuestion(page, qid);
  // As if the session had ended before the save: a copy on this device, never acknowledged.
  const me = await (await page.request.get(base + '/api/auth/me')).json();
  const o = await order(page);
  const wanted = [o[2], o[0], o[1], ...o.slice(3)];
  await page.evaluate(([key, copy]) => localStorage.setItem(key, JSON.stringify(copy)), [`serenqa:unsaved:${me.user.id}:${qid}`, {
    base_revision: 0, saved_at: Date.now(), content: { confidence: 2, comment: 'kept on the device', ranking: wanted.map((c, k) => ({ candidate: Number(c), rank: k + 1, unsure: false })) },
  }]);
  await openQuestion(page, qid);
  await page.getByTestId('restore').waitFor();
  await page.getByTestId('restore-yes').click();
  assert(JSON.stringify(await order(page)) === JSON.stringify(wanted), `restored order ${await order(page)}`);
  await waitSaved(page, qid, wanted, 'restored changes saved');
  assert((await page.locator('.comment textarea').inputValue()) === 'kept on the device', 'comment restored');
  await openQuestion(page, qid);
  assert(await page.getByTestId('restore').count() === 0, 'the copy is gone once saved');
});

test('a session that ends before the save: the page says so, and after signing in again the change is offered back', async () => {
  const page = state.ann1;
  const qid = state.fresh[6];
  await openQuestion(page, qid);
  // The session ends on the server (as at expiry) while the question is open.
  const me = await (await page.request.get(base + '/api/auth/me')).json();
  const out = await page.request.post(base + '/api/auth/logout', { headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': me.csrf } });
  assert(out.status() === 200, `logout ${out.status()}`);
  const wanted = await moveSecondUp(page);
  await page.getByTestId('signed-out').waitFor({ timeout: 15000 });
  assert((await page.getByTestId('save-state').textContent()).includes('session has ended'), await page.getByTestId('save-state').textContent());
  await page.getByTestId('signed-out').getByRole('link', { name: 'Sign in again' }).click();
  await page.locator('input[name=email]').fill('ann1@example.org');
  await page.locator('input[name=password]').fill(PW);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname === `/annotate/q/${qid}`, { timeout: 15000 });
  await page.getByTestId('restore').waitFor({ timeout: 15000 });
  await page.getByTestId('restore-yes').click();
  await waitSaved(page, qid, wanted, 'the change made while signed out, restored');
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('tablet (768 px): the question fits and the controls are touch-sized', async () => {
  const page = await newPage({ width: 768, height: 1024 });
  await page.context().addCookies(await state.ann1.context().cookies());
  await page.goto(base + `/annotate/q/${state.qid}`);
  await page.getByTestId('question-text').waitFor();
  await page.locator('li.cand').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `overflows by ${overflow}px at 768px`);
  const hb = await page.locator('li.cand .handle').first().boundingBox();
  assert(hb.width >= 44 && hb.height >= 44, `drag handle ${hb.width}x${hb.height}`);
  await page.screenshot({ path: shot('tablet-768'), fullPage: true });
});

test('reviewer sees aggregates (W, α, expert set) and no annotator identities', async () => {
  const page = state.rev = await newPage();
  await acceptInvite(page, state.links.rev, 'Reviewer');
  assert(page.url().endsWith('/review'), `reviewer lands on /review: ${page.url()}`);
  const table = page.getByTestId('batch-aggregates');
  await table.waitFor({ timeout: 30000 });
  const row = table.locator('tbody tr').first();
  const cells = await row.locator('td').allTextContents();
  assert(cells[3] === '2' && cells[4] === '2', `2 responses by 2 annotators: ${cells}`);
  await row.locator('button').click();
  const qa = page.getByTestId('question-aggregates');
  await qa.waitFor({ timeout: 30000 });
  const qcells = await qa.locator('tbody tr').first().locator('td').allTextContents();
  assert(qcells[1] === '2', `annotators ${qcells}`);
  assert(/^-?\d\.\d{3}$/.test(qcells[2]) && /^-?\d\.\d{3}$/.test(qcells[3]), `W and α shown: ${qcells}`);
  assert(qcells[4].length > 0, 'expert serendipity set shown');
  const text = await page.locator('main').textContent();
  assert(!text.includes('ann1@') && !text.includes('ann2@'), 'no annotator identities');
  const csv = await page.request.get(base + '/api/review/export.csv');
  assert(csv.status() === 200 && !(await csv.text()).includes('ann1@'), 'CSV export without identities');
  const er = await (await page.request.get(base + '/api/review/expert-rankings?source=serenqa')).json();
  assert(er.format === 'serenqa-expert-rankings' && er.questions.length === 1, JSON.stringify(er).slice(0, 200));
  const forbidden = await page.request.get(base + `/api/responses/${state.rid}`);
  assert(forbidden.status() === 403, `reviewer reading a response: ${forbidden.status()}`);
  await page.screenshot({ path: shot('review'), fullPage: true });
});

test('admin reads each annotator\'s progress, ranking and comment; the reviewer sees the same under a pseudonym, never the e-mail', async () => {
  const COMMENT = 'Third candidate is the surprising one.';
  const page = state.admin;
  await page.goto(base + '/admin');
  await page.getByTestId('admin-toc').getByRole('link', { name: 'Progress' }).click();
  const prog = page.getByTestId('progress');
  const row = prog.locator('tbody tr', { hasText: 'ann1@example.org' });
  await row.waitFor({ timeout: 15000 });
  const cells = await row.locator('td').allTextContents();
  assert(/^A\d+ · ann1@example\.org/.test(cells[0]) && cells[0].includes('Annotator One'), `who: ${cells[0]}`);
  assert(Number(cells[3]) >= 1 && cells[7] !== 'never', `submitted and last save: ${cells}`);
  const pseudo = cells[0].match(/^(A\d+)/)[1];
  // "Rankings" on the row: that annotator's submissions, with names and the comment.
  await row.getByTestId('show-rankings').click();
  // Every card shown is that annotator's, and one holds the comment.
  const onlyBy = (p, who, comment) => p.waitForFunction(([w, c]) => {
    const cards = [...document.querySelectorAll('[data-testid=ranking-card]')];
    return cards.length > 0 && cards.every((e) => e.dataset.annotator === w) && cards.some((e) => e.textContent.includes(c));
  }, [who, comment], { timeout: 15000 });
  await onlyBy(page, pseudo, COMMENT);
  const card = page.getByTestId('ranking-card').filter({ hasText: COMMENT });
  assert(await page.getByTestId('ranking-card').filter({ hasNotText: 'ann1@example.org' }).count() === 0, 'only ann1\'s rankings');
  const ct = await card.textContent();
  assert(ct.includes(`${pseudo} · ann1@example.org`), `the card names the annotator: ${ct.slice(0, 120)}`);
  assert(/confidence 4\/5/.test(ct) && /on task/.test(ct) && /save/.test(ct), `facts: ${ct}`);
  assert(await card.locator('.rc-order li').count() >= 5 && await card.locator('.rc-order .tag', { hasText: 'unsure' }).count() === 1, 'the order by name with the unsure mark');
  assert(/2 submissions/.test(ct), `the update after submitting is counted: ${ct}`);
  // Every ranking of that question: both annotators.
  const qid = await card.getAttribute('data-question');
  await card.getByTestId('rc-question').click();
  await page.waitForFunction((q) => {
    const cards = [...document.querySelectorAll('[data-testid=ranking-card]')];
    return cards.length >= 2 && cards.every((e) => e.dataset.question === q) && new Set(cards.map((e) => e.dataset.annotator)).size >= 2;
  }, qid, { timeout: 15000 });
  await page.getByTestId('rankings').screenshot({ path: shot('admin-rankings-1280') });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `admin page overflows by ${overflow}px at 390px`);
  await page.getByTestId('rankings').screenshot({ path: shot('admin-rankings-390') });
  await page.getByTestId('progress').screenshot({ path: shot('admin-progress-390') });
  await page.setViewportSize({ width: 1280, height: 900 });

  const rev = state.rev;
  await rev.goto(base + '/review');
  const rprog = rev.getByTestId('progress');
  await rprog.locator(`tbody tr[data-annotator="${pseudo}"]`).waitFor({ timeout: 15000 });
  await rev.getByTestId('rank-annotator').selectOption(pseudo);
  await onlyBy(rev, pseudo, COMMENT);
  const rcard = rev.getByTestId('ranking-card').filter({ hasText: COMMENT });
  assert((await rcard.getByTestId('rc-annotator').textContent()) === pseudo, 'the reviewer sees the pseudonym');
  // Nobody's e-mail or name but the reviewer's own ("Signed in as rev@…").
  const text = (await rev.locator('main').textContent()).replace('rev@example.org', '');
  assert(!text.includes('@example.org') && !text.includes('Annotator One'), 'no e-mail or name of another person on the review page');
  for (const p of ['/api/review/progress', '/api/review/rankings?limit=100']) {
    const body = await (await rev.request.get(base + p)).text();
    assert(!body.includes('@') && !body.includes('Annotator One'), `${p} carries an identity`);
  }
  await rev.getByTestId('rankings').screenshot({ path: shot('review-rankings-1280') });
  await rev.setViewportSize({ width: 390, height: 844 });
  const rover = await rev.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(rover <= 1, `review page overflows by ${rover}px at 390px`);
  await rev.getByTestId('rankings').screenshot({ path: shot('review-rankings-390') });
  await rev.screenshot({ path: shot('review-390'), fullPage: true });
  await rev.setViewportSize({ width: 1280, height: 900 });
  // Annotators cannot read these.
  assert((await state.ann1.request.get(base + '/api/review/rankings')).status() === 403, 'an annotator is refused the rankings');
  assert(page.errors.length === 0 && rev.errors.length === 0, [...page.errors, ...rev.errors].join('; '));
});

test('admin and review pages are gated by role: no forms for those who cannot use them', async () => {
  const ann = state.ann1;
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await ann.setViewportSize({ width: w, height: h });
    await ann.goto(base + '/admin');
    await ann.getByTestId('role-gate').waitFor();
    assert((await ann.getByTestId('role-gate').textContent()).includes('needs the admin role'), await ann.getByTestId('role-gate').textContent());
    assert(await ann.locator('input[name=invite-email]').count() === 0 && await ann.getByRole('button', { name: 'Calibrate' }).count() === 0, 'no admin forms for an annotator');
    await ann.screenshot({ path: shot(`gate-admin-${w}`), fullPage: true });
  }
  await ann.goto(base + '/annotate');
  await ann.getByTestId('batches').waitFor();
  await ann.screenshot({ path: shot('batches-390'), fullPage: false });
  await ann.setViewportSize({ width: 1280, height: 900 });
  await ann.goto(base + '/review');
  await ann.getByTestId('role-gate').waitFor();
  assert((await ann.getByTestId('role-gate').textContent()).includes('reviewer or admin role'), 'review needs reviewer or admin');
  assert(await ann.getByTestId('batch-aggregates').count() === 0 && await ann.getByText('Export responses').count() === 0, 'no review content for an annotator');
  await ann.getByTestId('role-gate').getByRole('link', { name: 'Go to your page' }).click();
  await ann.waitForURL((u) => u.pathname === '/annotate');
  const rev = state.rev;
  await rev.goto(base + '/admin');
  await rev.getByTestId('role-gate').waitFor();
  assert(await rev.locator('input[name=invite-email]').count() === 0, 'no admin forms for a reviewer');
  await rev.goto(base + '/annotate');
  await rev.getByTestId('role-gate').waitFor();
  // Signed out: a sign-in link that comes back to the page.
  const anon = await newPage();
  await anon.goto(base + '/annotate/batch/1');
  await anon.getByTestId('sign-in-prompt').waitFor();
  const href = await anon.getByTestId('sign-in-prompt').getByRole('link', { name: 'Sign in' }).getAttribute('href');
  assert(href === '/login?next=%2Fannotate%2Fbatch%2F1', href);
  await anon.screenshot({ path: shot('sign-in-prompt-1280'), fullPage: true });
  // A next that leaves the site is ignored.
  await anon.goto(base + '/login?next=//evil.example/x');
  await anon.locator('input[name=email]').fill('ann1@example.org');
  await anon.locator('input[name=password]').fill(PW);
  await anon.getByRole('button', { name: 'Sign in' }).click();
  await anon.waitForURL((u) => u.pathname === '/annotate' && u.host === new URL(base).host, { timeout: 15000 });
  // The admin still has the forms.
  await state.admin.goto(base + '/admin');
  await state.admin.locator('input[name=invite-email]').waitFor();
});

test('a signed-in user\'s shortlist is kept with the account: a list kept before signing in moves there, another browser sees it', async () => {
  const page = await newPage();
  await page.goto(base + '/entity/Disease::DOID:2841');
  const rows = page.locator('[data-testid=candidates] tbody tr');
  await rows.first().waitFor({ timeout: 60000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.dataset.place === 'local', null, { timeout: 10000 });
  const first = await rows.nth(0).getAttribute('data-candidate');
  await rows.nth(0).getByTestId('keep').click();
  await page.waitForFunction(() => JSON.parse(localStorage.getItem('serenqa.shortlist.v1') || '[]').length === 1, null, { timeout: 5000 });
  const signIn = async (p) => {
    await p.goto(base + '/login?next=/shortlist');
    await p.locator('input[name=email]').fill('ann1@example.org');
    await p.locator('input[name=password]').fill(PW);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL((u) => u.pathname === '/shortlist', { timeout: 15000 });
    await p.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.dataset.place === 'server', null, { timeout: 10000 });
  };
  await signIn(page);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 1, null, { timeout: 10000 });
  assert(/your account/.test(await page.getByTestId('shortlist-where').textContent()), 'kept with the account');
  assert(await page.evaluate(() => localStorage.getItem('serenqa.shortlist.v1') === null), 'the browser copy moved to the account');
  // Another browser, same account: the same list; an item kept there is here after a reload.
  const other = await newPage();
  await signIn(other);
  await other.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 1, null, { timeout: 10000 });
  assert((await other.getByTestId('shortlist').locator('tbody tr').first().getAttribute('data-candidate')) === first, 'the same item');
  await other.goto(base + '/entity/Disease::DOID:2841');
  const rows2 = other.locator('[data-testid=candidates] tbody tr');
  await rows2.first().waitFor({ timeout: 60000 });
  await other.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.dataset.place === 'server', null, { timeout: 10000 });
  assert((await rows2.nth(0).getByTestId('keep').getAttribute('aria-pressed')) === 'true', 'marked as kept');
  await rows2.nth(1).getByTestId('keep').click();
  await other.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]').textContent.trim() === '2', null, { timeout: 10000 });
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 2, null, { timeout: 10000 });
  await page.screenshot({ path: shot('shortlist-signed-in-1280'), fullPage: true });
  // Removing on the account.
  await page.getByTestId('shortlist').locator('tbody tr').nth(1).getByTestId('shortlist-remove').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 1, null, { timeout: 10000 });
  await other.reload();
  await other.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.textContent.trim() === '1', null, { timeout: 15000 });
});

// A fresh question of the first batch that no other test uses (from the end of the list).
function spare(k) {
  const q = state.fresh.at(-1 - k);
  assert(q, `spare question ${k}`);
  return q;
}
async function myResponse(page, qid) {
  return (await (await page.request.get(base + `/api/annotate/questions/${qid}`)).json()).response;
}

test('an untouched order cannot be submitted without the confirmation; all unsure is a skip', async () => {
  const page = state.ann1;
  const qid = spare(0);
  await openQuestion(page, qid);
  // Nothing moved: the page asks for the confirmation, and Submit without it sends nothing.
  await page.getByTestId('confirm-block').waitFor();
  await page.locator('.confidence label', { hasText: '2' }).click();
  const completes = [];
  const onReq = (r) => { if (r.method() === 'PUT' && r.url().includes('/response') && (r.postData() || '').includes('"complete"')) completes.push(r); };
  page.on('request', onReq);
  await page.getByTestId('submit').click();
  const err = page.getByTestId('confirm-error');
  await err.waitFor();
  assert(/move at least one candidate/.test(await err.textContent()), await err.textContent());
  assert(await page.evaluate(() => document.activeElement?.id) === 'confirm-shown', 'the focus goes to the confirmation');
  await page.screenshot({ path: shot('confirm-1280'), fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('confirm-block').scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot('confirm-390'), fullPage: false });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `the question page overflows by ${overflow}px at 390px`);
  await page.setViewportSize({ width: 1280, height: 900 });
  assert(completes.length === 0, 'no submission was sent');
  const before = await myResponse(page, qid);
  assert(!before || before.status === 'draft', `nothing submitted: ${JSON.stringify(before)}`);
  // The server holds the same rule: the shown order submitted without the confirmation is 422.
  const csrf = (await (await page.request.get(base + '/api/auth/me')).json()).csrf;
  const shown = await order(page);
  const direct = await page.request.put(base + `/api/annotate/questions/${qid}/response`, {
    headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': csrf },
    data: { submission_id: 'e2e-untouched-1', base_revision: before ? before.revision : 0, status: 'complete', confidence: 2, comment: '', ranking: shown.map((c, k) => ({ candidate: Number(c), rank: k + 1, unsure: false })) },
  });
  assert(direct.status() === 422 && (await direct.json()).code === 'untouched_order', `direct PUT: ${direct.status()}`);
  // Confirmed: submitted, and recorded as confirmed with the order shown and a time on task.
  await page.getByTestId('confirm-shown').check();
  assert(await err.count() === 0, 'the error goes once the box is ticked');
  await page.getByTestId('submit').click();
  await page.getByTestId('save-state').filter({ hasText: 'submitted' }).waitFor({ timeout: 15000 });
  page.off('request', onReq);
  const r = await myResponse(page, qid);
  assert(r.status === 'complete' && r.confirmed_shown_order === true, JSON.stringify(r).slice(0, 200));
  assert(JSON.stringify(r.presented.map(String)) === JSON.stringify(shown), `presented ${r.presented} vs shown ${shown}`);
  assert(r.time_ms > 0, `time on task recorded: ${r.time_ms}`);

  // Every candidate unsure: the page says it will be a skip; the batch's coverage ignores it.
  const q2 = spare(1);
  await openQuestion(page, q2);
  await moveSecondUp(page);
  const boxes = page.locator('li.cand .cand-controls label:has-text("unsure") input');
  for (let i = 0; i < await boxes.count(); i++) await boxes.nth(i).check();
  await page.getByTestId('skip-note').waitFor();
  await page.locator('.confidence label', { hasText: '1' }).click();
  await page.getByTestId('submit').click();
  await page.getByTestId('save-state').filter({ hasText: 'submitted' }).waitFor({ timeout: 15000 });
  const bid = (await (await page.request.get(base + `/api/annotate/questions/${q2}`)).json()).question.batch_id;
  const asg = await (await state.admin.request.get(base + '/api/admin/assignments')).json();
  const b = asg.find((a) => a.batch.id === bid);
  const batch = await (await page.request.get(base + `/api/annotate/batches/${bid}`)).json();
  const idx = batch.questions.findIndex((x) => x.id === q2);
  assert(b.coverage[idx] === 0, `a skip covers nothing: ${b.coverage[idx]}`);
  const ex = await (await state.admin.request.get(base + '/api/review/export.json')).json();
  const row = ex.find((x) => x.question_id === q2);
  assert(row && row.skipped === true && row.history.length >= 1, `exported as a skip with its history: ${JSON.stringify(row).slice(0, 200)}`);
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('key presses in quick succession are all applied, in order', async () => {
  const page = state.ann1;
  const batches = await (await page.request.get(base + '/api/annotate/batches')).json();
  const listed = await (await page.request.get(base + `/api/annotate/batches/${batches[0].batch.id}`)).json();
  const used = [0, 1, 3].map(spare);
  const q = listed.questions.filter((x) => x.candidates >= 5 && !x.status && !used.includes(x.id)).at(-1);
  await openQuestion(page, q.id);
  const o = await order(page);
  assert(o.length >= 4, `${o.length} candidates`);
  await page.locator(`li.cand[data-cand="${o[0]}"]`).focus();
  // No pause between the presses (the old page lost those under ~50 ms apart).
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction((id) => [...document.querySelectorAll('li.cand')].findIndex((e) => e.dataset.cand === id) === 3, o[0], { timeout: 5000 });
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('u');
  await page.waitForFunction((id) => {
    const els = [...document.querySelectorAll('li.cand')];
    const i = els.findIndex((e) => e.dataset.cand === id);
    return i === 2 && els[i].classList.contains('unsure');
  }, o[0], { timeout: 5000 });
  // A press after clicking elsewhere on the page moves nothing.
  await page.locator('h1[data-testid=question-text]').click();
  const here = await order(page);
  await page.keyboard.press('ArrowDown');
  assert(JSON.stringify(await order(page)) === JSON.stringify(here), 'no move after the focus left the list');
  assert(page.errors.length === 0, page.errors.join('; '));
});

test('the conflict view names a confidence-only difference; save errors show at the field and in the status line', async () => {
  const a = state.ann1;
  const qid = spare(3);
  await openQuestion(a, qid);
  await moveSecondUp(a);
  await a.locator('.confidence label', { hasText: '3' }).click();
  await a.getByTestId('save-state').filter({ hasText: 'Saved' }).waitFor({ timeout: 15000 });
  const b = await newPage();
  await b.context().addCookies(await a.context().cookies());
  await openQuestion(b, qid);
  await b.locator('.confidence label', { hasText: '5' }).click();
  await b.getByTestId('save-state').filter({ hasText: 'Saved' }).waitFor({ timeout: 15000 });
  // Same order in both tabs; only the confidence differs.
  assert(JSON.stringify(await order(a)) === JSON.stringify(await order(b)), 'same order');
  await a.locator('.confidence label', { hasText: '2' }).click();
  await a.getByTestId('conflict').waitFor({ timeout: 15000 });
  const diffs = a.getByTestId('conflict-diffs');
  await diffs.waitFor();
  const fields = await diffs.locator('li').evaluateAll((els) => els.map((e) => e.dataset.field));
  assert(JSON.stringify(fields) === JSON.stringify(['confidence']), `differences: ${fields}`);
  const text = await diffs.textContent();
  assert(/yours: 2; theirs: 5/.test(text), text);
  // The status line stays in view at the bottom of the window and says it was not saved.
  const bar = a.getByTestId('status-bar');
  const box = await bar.boundingBox();
  const vh = a.viewportSize().height;
  assert(box && box.y + box.height <= vh + 1 && box.y > vh - 200, `status line at the bottom: ${JSON.stringify(box)}`);
  assert(/changed elsewhere/.test(await bar.textContent()), await bar.textContent());
  await a.screenshot({ path: shot('conflict-confidence-1280'), fullPage: false });
  await a.setViewportSize({ width: 390, height: 844 });
  await a.getByTestId('conflict').scrollIntoViewIfNeeded();
  await a.screenshot({ path: shot('conflict-confidence-390'), fullPage: false });
  await a.setViewportSize({ width: 1280, height: 900 });
  await a.getByTestId('take-theirs').click();
  await a.getByTestId('conflict').waitFor({ state: 'detached' });
  // A save the server refuses is shown at its field and in the status line: a comment over
  // the limit (the box's own limit is lifted to get one past it).
  await a.evaluate(() => {
    const t = document.querySelector('.comment textarea');
    t.removeAttribute('maxlength');
  });
  await a.locator('.comment textarea').fill('x'.repeat(4001));
  const fieldErr = a.getByTestId('comment-error');
  await fieldErr.waitFor({ timeout: 15000 });
  assert(/4001 characters/.test(await fieldErr.textContent()), await fieldErr.textContent());
  assert(/Not saved/.test(await a.getByTestId('status-bar').textContent()), 'and in the status line');
  await a.screenshot({ path: shot('field-error-1280'), fullPage: false });
  await a.locator('.comment textarea').fill('fine');
  await fieldErr.waitFor({ state: 'detached', timeout: 15000 });
  assert(a.errors.length === 0 && b.errors.length === 0, a.errors.concat(b.errors).join('; '));
});

test('a wrong password says so (the server\'s reason), not that a session ended', async () => {
  const page = await newPage();
  await page.goto(base + '/login');
  await page.locator('input[name=email]').fill('ann1@example.org');
  await page.locator('input[name=password]').fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const err = page.locator('form [role=alert]');
  await err.waitFor({ timeout: 15000 });
  const t = await err.textContent();
  assert(/wrong email or password/.test(t) && !/session/.test(t), t);
});

test('admin runs a calibration and sees the result or a clear reason', async () => {
  const page = state.admin;
  await page.goto(base + '/admin');
  await page.getByRole('button', { name: 'Calibrate' }).click();
  const report = page.getByTestId('calibration-report');
  const alert = page.locator('section.panel [role=alert]');
  await Promise.race([report.waitFor({ timeout: 60000 }), alert.waitFor({ timeout: 60000 })]);
  if (await report.count()) {
    assert((await report.textContent()).includes('agreement'), 'report shows agreement');
  } else {
    assert((await alert.textContent()).length > 10, 'a clear reason');
  }
  await page.screenshot({ path: shot('calibration'), fullPage: true });
});

test('admin assigns a batch to an annotator with an overlap target, sees coverage, and issues a password-reset link', async () => {
  const page = state.admin;
  await page.goto(base + '/admin');
  const rows = page.getByTestId('assign-row');
  await rows.first().waitFor();
  const bid = await rows.nth(1).getAttribute('data-batch');
  const row = page.locator(`[data-testid=assign-row][data-batch="${bid}"]`);
  const users = await (await page.request.get(base + '/api/admin/users')).json();
  const ann1 = users.find((u) => u.email === 'ann1@example.org');
  await row.locator(`input[data-user="${ann1.id}"]`).check();
  await row.getByTestId('assign-k').fill('2');
  await row.getByTestId('assign-save').click();
  await row.getByText('Saved.').waitFor();
  const head = await row.locator('.assign-head').textContent();
  assert(/1 assigned · 0 of \d+ questions have ≥ 2 submitted rankings/.test(head), head);
  const ann2Batches = await (await state.ann2.request.get(base + '/api/annotate/batches')).json();
  assert(!ann2Batches.some((b) => String(b.batch.id) === bid), 'the batch is gone for the unassigned annotator');
  const ann1Batches = await (await state.ann1.request.get(base + '/api/annotate/batches')).json();
  assert(ann1Batches.some((b) => String(b.batch.id) === bid), 'and still there for the assigned one');
  // On ann1's list the assigned batch comes first and says so.
  await state.ann1.goto(base + '/annotate');
  await state.ann1.getByTestId('batches').waitFor();
  const firstBatch = state.ann1.locator('[data-testid=batches] > li').first();
  assert(await firstBatch.getAttribute('data-assigned') === 'true' && (await firstBatch.getByTestId('assigned-mark').textContent()) === 'Assigned to you', 'the assigned batch is first and marked');
  assert(await state.ann1.getByTestId('assigned-mark').count() === 1, 'only the assigned batch is marked');
  assert((await firstBatch.locator('a').first().getAttribute('href')).endsWith(`/annotate/batch/${bid}`), 'the first batch is the assigned one');
  await state.ann1.screenshot({ path: shot('batches-assigned'), fullPage: false });
  // Coverage of the first batch: the question both annotators submitted is covered at k = 1.
  const first = rows.first();
  await first.locator('summary').click();
  assert(await first.locator('.cov.full').count() >= 1, 'a covered question is shown');
  await first.scrollIntoViewIfNeeded();
  await page.getByTestId('assignments').screenshot({ path: shot('assign-1280') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('assignments').screenshot({ path: shot('assign-390') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `admin page overflows by ${overflow}px at 390px`);
  await page.setViewportSize({ width: 1280, height: 900 });
  // Reset link for ann2: one use; it signs in with the new password and ends the old session.
  await page.getByRole('button', { name: 'Reset link for ann2@example.org' }).click();
  const link = await page.getByTestId('reset-link').textContent();
  assert(link.includes('/reset/'), link);
  const fresh = await newPage();
  await fresh.goto(local(link));
  await fresh.getByTestId('reset-email').waitFor();
  assert((await fresh.getByTestId('reset-email').textContent()) === 'ann2@example.org', 'for ann2');
  await fresh.screenshot({ path: shot('reset-1280'), fullPage: true });
  await fresh.setViewportSize({ width: 390, height: 844 });
  await fresh.screenshot({ path: shot('reset-390'), fullPage: true });
  await fresh.setViewportSize({ width: 1280, height: 900 });
  await fresh.getByLabel('New password').fill('another long password');
  await fresh.getByLabel('Repeat the password').fill('another long password');
  await fresh.getByRole('button', { name: 'Set the password and sign in' }).click();
  await fresh.waitForURL((u) => u.pathname === '/annotate', { timeout: 15000 });
  const ended = await state.ann2.request.get(base + '/api/auth/me');
  assert(ended.status() === 200 && (await ended.json()).signed_in === false, 'the old session ended (anonymous is an answer, not a 401)');
  assert((await state.ann2.request.get(base + '/api/annotate/batches')).status() === 401, 'a route that needs the session refuses it');
  await fresh.goto(local(link));
  await fresh.getByText('not valid').waitFor();
});

test('calibration below the minimum cannot be put in force; one that meets it is used after a confirmation, and reverting restores the shipped weights', async () => {
  const page = state.admin;
  const api = (p) => page.request.get(base + p).then((r) => r.json());
  const weightsLine = async () => {
    const d = await newPage();
    await d.goto(base + '/entity/Disease::DOID:1612');
    // The weights' source line sits in Discover's folded settings: attached, not necessarily shown.
    await d.getByTestId('weights-source').waitFor({ state: 'attached', timeout: 60000 });
    const t = await d.getByTestId('weights-source').textContent();
    await d.context().close();
    return t;
  };
  // The calibration of the earlier test (two annotators): stored, shown, and refused.
  await page.goto(base + '/admin');
  await page.getByTestId('weights-in-force').waitFor();
  assert(/fitted to the SerenQA/.test(await page.getByTestId('weights-in-force').textContent()), 'the shipped weights at first');
  let cals = await api('/api/admin/calibrations');
  if (cals.length) {
    const small = cals[0];
    assert(small.blocked && /too little expert data/.test(small.blocked), JSON.stringify(small).slice(0, 200));
    const item = page.locator(`li.cal[data-cal="${small.id}"]`);
    assert(await item.getByTestId('use-weights').isDisabled(), 'the button is disabled below the minimum');
    assert(/at least 30 needed/.test(await item.getByTestId('use-blocked').textContent()), 'and says why');
    const csrf = (await api('/api/auth/me')).csrf;
    const put = await page.request.put(base + '/api/admin/weights', { headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': csrf }, data: { calibration: small.id, confirm: true } });
    assert(put.status() === 422 && (await put.json()).code === 'below_minimum', `PUT below the minimum: ${put.status()}`);
  }
  // Three more annotators rank 40 questions of an open batch through the API.
  const asg = await api('/api/admin/assignments');
  const open = asg.filter((a) => a.annotators.length === 0).slice(1);
  const csrfAdmin = (await api('/api/auth/me')).csrf;
  const who = [];
  for (const name of ['cal1', 'cal2', 'cal3']) {
    const inv = await (await page.request.post(base + '/api/admin/invites', { headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': csrfAdmin }, data: { email: `${name}@example.org`, role: 'annotator' } })).json();
    const p = await newPage();
    await acceptInvite(p, inv.link, name);
    who.push(p);
  }
  // Questions of the open batches after the first (which the other tests use).
  const qs = [];
  for (const a of open) {
    if (qs.length >= 40) break;
    const batch = await (await who[0].request.get(base + `/api/annotate/batches/${a.batch.id}`)).json();
    qs.push(...batch.questions.filter((q) => q.candidates >= 3).slice(0, 40 - qs.length));
  }
  assert(qs.length === 40, `${qs.length} questions`);
  for (const [k, p] of who.entries()) {
    const csrf = (await (await p.request.get(base + '/api/auth/me')).json()).csrf;
    for (const q of qs) {
      const v = await (await p.request.get(base + `/api/annotate/questions/${q.id}`)).json();
      const ids = v.question.candidates.map((c) => c.id);
      // A deterministic, annotator-specific order (never just the shown one).
      const mine = ids.map((id, i) => [((i * 7 + k * 3) % ids.length), id]).sort((x, y) => x[0] - y[0]).map((x) => x[1]);
      const r = await p.request.put(base + `/api/annotate/questions/${q.id}/response`, {
        headers: { 'X-Requested-With': 'serenqa', 'X-CSRF-Token': csrf },
        data: { submission_id: `cal-${k}-${q.id}`, base_revision: 0, status: 'complete', confidence: 3, comment: '', confirm_shown_order: true, ranking: mine.map((c, i) => ({ candidate: c, rank: i + 1, unsure: false })) },
      });
      assert(r.status() === 200, `seed ${q.id}: ${r.status()} ${await r.text()}`);
    }
  }
  // Calibrate on them: the report shows annotators, agreement and the held-out comparison.
  await page.goto(base + '/admin');
  await page.locator('input[type=number][step="0.01"]').fill('0.25');
  await page.locator('input[type=number][step="0.01"]').dispatchEvent('change');
  await page.getByRole('button', { name: 'Calibrate' }).click();
  const report = page.getByTestId('calibration-report');
  await report.waitFor({ timeout: 300000 });
  const rt = await report.textContent();
  assert(/ranked by [3-9] annotators/.test(rt) && /Kendall's W/.test(rt), rt.slice(0, 300));
  assert(/Held out: \d+ questions/.test(await page.getByTestId('heldout').textContent()), 'the held-out comparison');
  const use = report.getByTestId('use-weights');
  assert(!(await use.isDisabled()), 'this one meets the minimum');
  await use.click();
  await report.getByTestId('confirm-weights').waitFor();
  await page.screenshot({ path: shot('weights-confirm-1280'), fullPage: false });
  await report.getByTestId('confirm-use').click();
  await page.getByTestId('weights-changed').waitFor({ timeout: 15000 });
  await page.getByTestId('weights-in-force').filter({ hasText: 'calibrated on expert rankings' }).waitFor({ timeout: 15000 });
  assert(/calibrated on expert rankings/.test(await weightsLine()), "Discover's weights line names the calibration");
  await page.getByTestId('weights-history').locator('summary').click();
  await page.screenshot({ path: shot('weights-1280'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('weights-panel').screenshot({ path: shot('weights-390') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `admin page overflows by ${overflow}px at 390px`);
  await page.setViewportSize({ width: 1280, height: 900 });
  // Revert: the shipped weights again, on Discover too; the history lists both changes.
  await page.getByTestId('revert-shipped').click();
  await page.getByTestId('weights-panel').getByTestId('confirm-use').click();
  await page.getByTestId('weights-in-force').filter({ hasText: 'fitted to the SerenQA' }).waitFor({ timeout: 15000 });
  assert(/fitted to the SerenQA/.test(await weightsLine()), "Discover's weights line shows the shipped weights again");
  const w = await api('/api/admin/weights');
  assert(w.calibration === null && w.history.length === 2 && w.history[0].calibration === null, JSON.stringify(w.history));
  for (const p of who) await p.context().close();
  assert(page.errors.length === 0, page.errors.join('; '));
});

// This server started with an empty runs directory (scripts/test.sh): it computes the
// offline baseline run in the background, and the leaderboard fills in by itself.
test('a fresh server has a populated leaderboard (the offline baseline run)', async () => {
  const page = await newPage();
  await page.goto(base + '/leaderboard');
  const t2 = page.getByTestId('table2');
  const started = Date.now();
  await t2.waitFor({ timeout: 300000 });
  assert((await t2.locator('tbody tr').count()) >= 1, 'the baseline run is listed');
  console.log(`  fresh server: leaderboard populated after ${((Date.now() - started) / 1000).toFixed(0)} s on this page`);
  await page.screenshot({ path: shot('fresh-leaderboard'), fullPage: true });
});

test('no Leptos panic or disposed reactive value in any console', async () => {
  await state.ann1.evaluate(() => console.log('e2e console probe'));
  await state.ann1.waitForTimeout(100);
  assert(consoleLog.some((l) => l.includes('e2e console probe')), 'console messages are collected');
  const bad = consoleLog.filter((l) => /disposed|panicked|RuntimeError|unreachable/i.test(l));
  assert(bad.length === 0, bad.slice(0, 5).join(' | '));
});

let passed = 0, failed = 0;
for (const t of tests) {
  const started = Date.now();
  try {
    await t.fn();
    passed++;
    console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${t.name}: ${e.message.slice(0, 600)}`);
    for (const c of contexts) for (const p of c.pages()) {
      await p.screenshot({ path: shot('failed-' + t.name.replace(/\W+/g, '-').slice(0, 60)) }).catch(() => {});
    }
  }
}
for (const c of contexts) await c.close();
await browser.close();
console.log(`e2e annotate: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
