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
async function newPage(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
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
    await page.getByTestId('invite-link').filter({ hasText: '/invite/' }).waitFor();
    await page.waitForFunction((prev) => {
      const el = document.querySelector('[data-testid=invite-link]');
      return el && el.textContent !== prev;
    }, Object.values(state.links).at(-1) || '');
    state.links[who] = await page.getByTestId('invite-link').textContent();
  }
  await page.goto(local(adminLink));
  await page.getByText('has been used').waitFor({ timeout: 15000 });
  await page.goto(base + '/admin');
  await page.getByText('admin@example.org').last().waitFor();
  await page.screenshot({ path: shot('admin'), fullPage: true });
});

test('annotator logs in by invite, ranks by drag and by keyboard, reloads and finds it saved', async () => {
  const page = state.ann1 = await newPage();
  await acceptInvite(page, state.links.ann1, 'Annotator One');
  assert(page.url().endsWith('/annotate'), `annotator lands on /annotate: ${page.url()}`);
  await page.getByTestId('batches').waitFor();
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
  await page.locator('.comment textarea').fill('Third candidate is the surprising one.');
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
  const resp = await page.request.get(base + `/api/responses/${state.rid}`);
  assert(resp.status() === 403, `status ${resp.status()}`);
  const body = await resp.json();
  assert(body.code === 'forbidden', JSON.stringify(body));
  const own = await state.ann1.request.get(base + `/api/responses/${state.rid}`);
  assert(own.status() === 200, `the author reads it: ${own.status()}`);
  // Rank by keyboard only and submit.
  await page.goto(base + `/annotate/q/${state.qid}`);
  await page.getByTestId('question-text').waitFor();
  const o = await order(page);
  await page.locator(`li.cand[data-cand="${o[1]}"]`).focus();
  await page.keyboard.press('ArrowUp');
  await page.locator('.confidence label', { hasText: '3' }).click();
  await page.getByTestId('submit').click();
  await page.getByTestId('save-state').filter({ hasText: 'submitted' }).waitFor({ timeout: 15000 });
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
