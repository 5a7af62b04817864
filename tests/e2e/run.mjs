// Browser tests: headless Debian Chromium driven by playwright-core (no browser download).
// Usage: node tests/e2e/run.mjs http://127.0.0.1:PORT
// Prints one line per test, screenshots into tests/e2e/artifacts/, and a closing
// "N passed, N failed" line; exits non-zero on any failure.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const tools = process.env.SERENQA_TOOLS || path.join(process.env.HOME || '/root', '.cache/serenqa-tools');
const require = createRequire(path.join(tools, 'node_modules', 'noop.js'));
const { chromium } = require('playwright-core');

const base = process.argv[2] || 'http://127.0.0.1:8080';
const here = path.dirname(fileURLToPath(import.meta.url));
const shots = path.join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

const tests = [];
// E2E_ONLY=substring runs only the matching tests (for working on one page).
const only = process.env.E2E_ONLY || '';
const test = (name, fn) => { if (name.includes(only)) tests.push({ name, fn }); };

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

test('overview shows the loaded Hetionet graph', async (page) => {
  await page.goto(base + '/graph');
  const nodes = page.getByTestId('node-count');
  await nodes.waitFor({ timeout: 15000 });
  const text = await nodes.textContent();
  assert(text === '47,031', `node count shows ${text}`);
  assert((await page.getByTestId('edge-count').textContent()) === '2,049,746', 'edge count');
  assert(await page.getByText('TREATS_CtD').isVisible(), 'relation table lists TREATS_CtD');
  await page.screenshot({ path: path.join(shots, 'overview.png'), fullPage: true });
});

test('home: starting points; an example question asks itself and its URL reproduces the answer', async (page) => {
  await page.goto(base + '/');
  const start = page.getByTestId('starting-points');
  await start.waitFor({ timeout: 15000 });
  assert((await start.getByRole('link').count()) >= 10, 'example diseases, drugs and questions');
  await start.getByRole('link', { name: 'What genes does metformin bind?' }).click();
  await page.waitForFunction(() => /Metformin/.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  const url = page.url();
  assert(/[?&]q=/.test(url), `the question is in the URL: ${url}`);
  // A typed question replaces it in the URL; opening that URL asks it again.
  await page.getByTestId('ask-input').fill('Which drugs treat asthma?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.waitForFunction(() => /asthma/.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  const shared = page.url();
  const other = await page.context().newPage();
  await other.goto(shared);
  await other.waitForFunction(() => /Drugs that treat asthma/.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  await other.close();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/');
  await page.getByTestId('starting-points').waitFor({ timeout: 15000 });
  await page.screenshot({ path: path.join(shots, 'home-390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(base + '/');
  await page.getByTestId('starting-points').waitFor({ timeout: 15000 });
  await page.screenshot({ path: path.join(shots, 'home-1280.png'), fullPage: true });
});

// Pairs of node names in the drawing under `root` whose drawn boxes overlap (by more than half a
// unit either way), as "A/B", and the names that run past the drawing's edges (unzoomed).
const nameClashes = (page, root) => page.evaluate((root) => {
  const ts = [...document.querySelectorAll(`${root} svg g.node text`)];
  const boxes = ts.map((t) => t.getBBox());
  const vb = document.querySelector(`${root} svg`).viewBox.baseVal;
  const cut = ts.filter((t, k) => boxes[k].x < vb.x - 0.5 || boxes[k].x + boxes[k].width > vb.x + vb.width + 0.5).map((t) => t.textContent);
  const out = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5) out.push(`${ts[i].textContent}/${ts[j].textContent}`);
    }
  }
  return { names: ts.length, clashes: out, cut };
}, root);

test('discover: "why?" opens the explanation in view, takes the focus, and Esc closes it', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:2841');
  const why = page.getByTestId('candidates').getByRole('button', { name: 'why?' }).nth(7);
  await why.waitFor({ timeout: 60000 });
  await why.scrollIntoViewIfNeeded();
  await why.click();
  const drawer = page.getByTestId('explain-drawer');
  await drawer.waitFor({ state: 'visible', timeout: 5000 });
  const box = await drawer.boundingBox();
  const vh = page.viewportSize().height;
  assert(box && box.y >= 0 && box.y < vh / 2 && box.height > vh / 2, `the drawer is in view: ${JSON.stringify(box)}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=explain-drawer]').contains(document.activeElement), null, { timeout: 5000 });
  await drawer.getByTestId('explanation').waitFor({ timeout: 60000 });
  // The score's standing reads in words: "above 95.5% of the drugs scored for asthma".
  const standing = await drawer.getByTestId('explain-score').textContent();
  assert(/^Plausibility \d\.\d{3}: (above \d+\.\d% of|the highest of) the drugs scored for asthma; (above \d+\.\d% of|the highest of) the diseases scored for /.test(standing), `the score line: ${standing}`);
  await page.screenshot({ path: path.join(shots, 'why-drawer-1280.png') });
  await page.keyboard.press('Escape');
  await drawer.waitFor({ state: 'hidden', timeout: 5000 });
  // On a phone the drawer takes the whole width, and its close button works too.
  await page.setViewportSize({ width: 390, height: 844 });
  await why.scrollIntoViewIfNeeded();
  await why.click();
  await drawer.waitFor({ state: 'visible', timeout: 5000 });
  await drawer.getByTestId('explanation').waitFor({ timeout: 60000 });
  await page.screenshot({ path: path.join(shots, 'why-drawer-390.png') });
  // The explanation graph is drawn upright on a phone: its names stay readable.
  const sg = drawer.locator('.subgraph svg');
  await sg.scrollIntoViewIfNeeded();
  const drawn = await sg.evaluate((s) => {
    const r = s.getBoundingClientRect();
    const t = s.querySelector('.node text');
    return { w: r.width, h: r.height, name: t ? t.getBoundingClientRect().height : 0 };
  });
  assert(drawn.h > drawn.w && drawn.name >= 8, `the graph at 390 px: ${JSON.stringify(drawn)} (upright, names at least 8 px high)`);
  const phone = await nameClashes(page, '[data-testid=explain-drawer] .subgraph');
  assert(phone.names > 2 && phone.clashes.length === 0, `names drawn over each other at 390 px: ${phone.clashes.join(', ')}`);
  assert(phone.cut.length === 0, `names cut by the drawing's edge at 390 px: ${phone.cut.join(', ')}`);
  await drawer.locator('.subgraph').screenshot({ path: path.join(shots, 'why-graph-390.png') });
  // Turning the phone (here: widening the window) lays the open drawing out again for the new
  // shape, and back.
  const drawnWidth = (w) => page.waitForFunction((w) => document.querySelector('[data-testid=explain-drawer] .subgraph svg')?.viewBox.baseVal.width === w, w, { timeout: 5000 });
  await page.setViewportSize({ width: 1280, height: 900 });
  await drawnWidth(800);
  await page.setViewportSize({ width: 390, height: 844 });
  await drawnWidth(400);
  await page.getByTestId('explain-close').click();
  await drawer.waitFor({ state: 'hidden', timeout: 5000 });
});

test('search: diseases and drugs first, apostrophes folded, misspellings and abbreviations forgiven', async (page) => {
  await page.goto(base + '/');
  const input = page.getByTestId('search-input');
  for (const [typed, first] of [['asth', 'asthma'], ['alzheimers', "Alzheimer's disease"], ['asprin', 'Acetylsalicylic acid'], ['copd', 'chronic obstructive pulmonary disease']]) {
    await input.fill(typed);
    await page.waitForFunction((want) => {
      const o = document.querySelector('[data-testid=suggestions] [role=option]');
      return o && o.textContent.includes(want);
    }, first, { timeout: 15000 }).catch(async () => {
      const got = await page.getByTestId('suggestions').textContent().catch(() => '(no list)');
      throw new Error(`search "${typed}": first suggestion should be ${first}, list: ${got}`);
    });
  }
  await page.screenshot({ path: path.join(shots, 'search-ranking.png') });
});

test('discover: search a disease by keyboard, open it, draw the explanation subgraph', async (page) => {
  await page.goto(base + '/');
  await page.getByRole('button', { name: 'Diseases' }).click();
  const input = page.getByTestId('search-input');
  await input.fill('breast can');
  await page.getByTestId('suggestions').getByText('breast cancer').waitFor({ timeout: 15000 });
  await page.screenshot({ path: path.join(shots, 'discover-autocomplete.png') });
  await input.press('ArrowDown');
  await input.press('ArrowUp');
  await input.press('Enter');
  await page.getByTestId('entity-name').waitFor({ timeout: 15000 });
  assert((await page.getByTestId('entity-name').textContent()) === 'breast cancer', 'entity page for breast cancer');
  assert(page.url().endsWith('/entity/Disease::DOID:1612'), `url ${page.url()}`);
  const treated = page.locator('article[data-relation="TREATS_CtD"]');
  assert((await treated.locator('h3').textContent()).startsWith('is treated by'), 'known treatments group');
  assert(await page.getByRole('link', { name: /Disease Ontology/ }).isVisible(), 'source link');
  await treated.locator('.link-button').first().click();
  await page.getByTestId('subgraph').waitFor({ timeout: 20000 });
  const paths = page.locator('[data-testid=paths] li');
  assert((await paths.count()) >= 2, 'several explanation paths');
  await paths.nth(1).hover();
  assert((await page.locator('.edge.lit').count()) >= 2, 'hovering a path highlights its edges');
  // A legend of the node colours, and exports of what is drawn: a valid standalone SVG with
  // every drawn node, and Cytoscape JSON with every node and edge.
  const sg = page.getByTestId('subgraph');
  assert((await sg.getByTestId('subgraph-legend').locator('li').count()) >= 2, 'a colour legend');
  const drawn = await sg.locator('svg g.node').count();
  const drawnEdges = await sg.locator('svg g.edge').count();
  const exported = await page.evaluate(([svgHref, cyHref]) => {
    const svgText = decodeURIComponent(svgHref.slice(svgHref.indexOf(',') + 1));
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    const cy = JSON.parse(decodeURIComponent(cyHref.slice(cyHref.indexOf(',') + 1)));
    return { root: doc.documentElement.nodeName, errors: doc.getElementsByTagName('parsererror').length, circles: doc.getElementsByTagName('circle').length, cyNodes: cy.elements.nodes.length, cyEdges: cy.elements.edges.length };
  }, [await sg.getByTestId('export-svg').getAttribute('href'), await sg.getByTestId('export-cyjs').getAttribute('href')]);
  assert(exported.root === 'svg' && exported.errors === 0, `the exported SVG parses: ${JSON.stringify(exported)}`);
  assert(exported.circles === drawn && exported.cyNodes === drawn && exported.cyEdges === drawnEdges, `exports hold every drawn node and edge: ${JSON.stringify(exported)} vs ${drawn} nodes, ${drawnEdges} edges`);
  const before = await page.locator('.subgraph svg').getAttribute('viewBox');
  await page.getByRole('button', { name: 'Zoom in' }).click();
  assert((await page.locator('.subgraph svg').getAttribute('viewBox')) !== before, 'zoom changes the view');
  await page.getByTestId('subgraph').screenshot({ path: path.join(shots, 'subgraph.png') });
  await page.screenshot({ path: path.join(shots, 'entity-breast-cancer.png'), fullPage: true });
});

test('subgraph: edge labels never overlap (the rest on hover, every edge titled), nodes open their pages, PNG export', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:1612');
  await page.locator('article[data-relation="TREATS_CtD"] .link-button').first().click();
  const sg = page.getByTestId('subgraph');
  await sg.waitFor({ timeout: 20000 });
  // Measured with nothing highlighted: the click that opened the drawing leaves the pointer
  // where the drawing appears, and a hovered edge shows its label whether or not it has a spot.
  const labels = async () => {
    await page.mouse.move(0, 0);
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=subgraph] svg g.edge.lit').length === 0, null, { timeout: 5000 });
    return measureLabels();
  };
  const measureLabels = () => page.evaluate(() => {
    const all = [...document.querySelectorAll('[data-testid=subgraph] svg .edge-label')];
    const shown = all.filter((t) => getComputedStyle(t).display !== 'none');
    const boxes = shown.map((t) => t.getBBox());
    let overlaps = [];
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5) overlaps.push(`${shown[i].textContent}/${shown[j].textContent}`);
      }
    }
    const titled = [...document.querySelectorAll('[data-testid=subgraph] svg g.edge')].filter((g) => (g.querySelector('title')?.textContent || '').length > 3).length;
    return { total: all.length, shown: shown.length, overlaps, titled, edges: document.querySelectorAll('[data-testid=subgraph] svg g.edge').length };
  });
  const l = await labels();
  console.log(`     edge labels: ${l.shown} of ${l.total} drawn without overlap, the rest on hover`);
  assert(l.shown >= 1 && l.overlaps.length === 0, `overlapping edge labels: ${l.overlaps.slice(0, 3).join(', ')} (${JSON.stringify(l)})`);
  assert(l.titled === l.edges, `every edge has a title: ${l.titled} of ${l.edges}`);
  const wide = await nameClashes(page, '[data-testid=subgraph]');
  assert(wide.names > 2 && wide.clashes.length === 0, `names drawn over each other: ${wide.clashes.join(', ')}`);
  assert(wide.cut.length === 0, `names cut by the drawing's edge: ${wide.cut.join(', ')}`);
  // Highlighting the centre shows its edges' labels, placed or not.
  await sg.locator('svg g.node').first().focus();
  const lit = await page.evaluate(() => {
    const tags = [...document.querySelectorAll('[data-testid=subgraph] svg g.edge-tag.lit .edge-label')];
    return { lit: tags.length, lines: document.querySelectorAll('[data-testid=subgraph] svg g.edge.lit').length, shown: tags.every((t) => getComputedStyle(t).display !== 'none') };
  });
  assert(lit.lit > 0 && lit.lit === lit.lines && lit.shown, `the labels of highlighted edges are shown: ${JSON.stringify(lit)}`);
  // Labels are drawn above every line (the last edge's line comes before the first label).
  const above = await page.evaluate(() => {
    const svg = document.querySelector('[data-testid=subgraph] svg');
    const lines = svg.querySelectorAll('g.edge'), tag = svg.querySelector('g.edge-tag');
    return !!tag && lines.length > 0 && !!(lines[lines.length - 1].compareDocumentPosition(tag) & Node.DOCUMENT_POSITION_FOLLOWING);
  });
  assert(above, 'edge labels are drawn after (above) all edge lines');
  await page.screenshot({ path: path.join(shots, 'subgraph-labels-1280.png') });
  // PNG export: the drawing rasterised at twice its size.
  const { readFileSync } = await import('node:fs');
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), sg.getByTestId('export-png').click()]);
  const png = readFileSync(await dl.path());
  const sig = png.subarray(0, 8).toString('hex');
  const [w, h] = [png.readUInt32BE(16), png.readUInt32BE(20)];
  console.log(`     PNG export: ${dl.suggestedFilename()}, ${w} × ${h} px, ${png.length} bytes`);
  assert(sig === '89504e470d0a1a0a' && dl.suggestedFilename() === 'explanation.png', `a PNG file: ${sig} ${dl.suggestedFilename()}`);
  assert(w === 1600 && h === 1040 && png.length > 10000, `PNG ${w}×${h}, ${png.length} bytes`);
  // A node is a link to its entity page (Enter on a focused node, or a click).
  const node = sg.locator('svg g.node').nth(1);
  const href = await node.getAttribute('data-href');
  assert(/^\/entity\/\w+/.test(href) && (await node.getAttribute('role')) === 'link', `node link ${href}`);
  await node.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL((u) => u.pathname === decodeURIComponent(href) || u.pathname === href, { timeout: 10000 });
  await page.getByTestId('entity-name').waitFor({ timeout: 15000 });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/entity/Disease::DOID:1612');
  await page.locator('article[data-relation="TREATS_CtD"] .link-button').first().click();
  await sg.waitFor({ timeout: 20000 });
  const l390 = await labels();
  assert(l390.overlaps.length === 0, `overlapping labels at 390 px: ${l390.overlaps.slice(0, 3)}`);
  await page.screenshot({ path: path.join(shots, 'subgraph-labels-390.png') });
});

test('candidates: with no known treatment S is not shown (it cannot tell candidates apart), γ is disabled and the CSV has no S', async (page) => {
  // Celiac disease has no treatment in Hetionet: Ae = {the disease}, |A| = 2 per candidate.
  await page.goto(base + '/entity/Disease::DOID:10608');
  await page.getByTestId('candidates').waitFor({ timeout: 30000 });
  const cells = page.locator('[data-testid=candidates] tbody [data-testid=s]');
  const shown = (await cells.allInnerTexts()).map((t) => t.trim());
  assert(shown.length >= 20 && shown.every((t) => t === '—'), `S cells: ${shown.slice(0, 5)}`);
  assert(/whether walks connect them/.test(await cells.first().getAttribute('title')), 'the cell says why S is not shown');
  assert(/whether walks connect them/.test(await page.getByTestId('s-header').getAttribute('title')), 'so does the header');
  // R and N still tell the candidates apart.
  for (const id of ['r', 'n']) {
    const v = await page.locator(`[data-testid=candidates] tbody [data-testid=${id}]`).allInnerTexts();
    assert(new Set(v.map((t) => t.trim())).size > v.length / 2, `${id} varies: ${v.slice(0, 5)}`);
  }
  assert(await page.getByTestId('w-gamma').isDisabled(), 'the γ slider is disabled');
  const sorts = await page.locator('#sort-select option').evaluateAll((os) => os.map((o) => o.value));
  assert(!sorts.includes('s') && sorts.includes('n'), `sort menu: ${sorts}`);
  const csv = decodeURIComponent((await page.getByTestId('candidates-csv').getAttribute('href')).split(',').slice(1).join(','));
  const lines = csv.trim().split('\n');
  assert(/gamma=0\.00/.test(lines[0]), `CSV head: ${lines[0]}`);
  const body = lines.filter((l) => !l.startsWith('#')).slice(1);
  assert(body.length > 20 && body.every((l) => /,-?\d\.\d{4},\d\.\d{4},\d\.\d{4},(,|$)/.test(l)), `CSV: rns, r, n, then an empty S: ${body[0]}`);
  await page.getByTestId('candidates').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'candidates-no-known-treatment.png'), fullPage: false });
  // A disease with known treatments shows S, and γ can be moved.
  await page.goto(base + '/entity/Disease::DOID:1612');
  await page.getByTestId('candidates').waitFor({ timeout: 30000 });
  const s2 = await page.locator('[data-testid=candidates] tbody [data-testid=s]').first().innerText();
  assert(/^\d\.\d{3}/.test(s2.trim()), `S shown with known treatments: ${s2}`);
  assert(!(await page.getByTestId('w-gamma').isDisabled()), 'γ enabled with known treatments');
});

test('candidates: sliders re-rank 200 candidates in WASM without a network request', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:1612');
  await page.getByTestId('candidates').waitFor({ timeout: 30000 });
  await openTune(page);
  const rows = page.locator('[data-testid=candidates] tbody tr');
  assert((await rows.count()) === 200, `candidates shown: ${await rows.count()}`);
  assert((await page.getByTestId('existing').locator('li').count()) >= 10, 'known treatments listed');
  // Each candidate drug says what it already treats, where the graph knows.
  const knownFor = await page.locator('[data-testid=candidates] .known-for').allTextContents();
  assert(knownFor.length >= 20 && knownFor.every((t) => /^treats: \S/.test(t)), `current indications shown: ${knownFor.slice(0, 3)}`);
  const order = async () => rows.evaluateAll((trs) => trs.slice(0, 10).map((tr) => tr.dataset.candidate).join('|'));
  // The default order is the first screen, which the RNS weights do not move: sort by the blend.
  await page.getByTestId('sort-select').selectOption('blend');
  await page.waitForFunction(() => document.querySelector('[data-testid=candidates] th[aria-sort=descending]')?.textContent.includes('Blend'), null, { timeout: 5000 });
  const before = await order();
  // The sliders start at the server's default weights (read from its reply), and the page
  // says where those came from.
  const api = await (await fetch(base + '/api/discover/Disease::DOID:1612?limit=1')).json();
  const defaults = api.default_weights.weights;
  const sliders = { 'w-alpha': defaults.alpha, 'w-beta': defaults.beta, 'w-gamma': defaults.gamma };
  for (const [id, want] of Object.entries(sliders)) {
    const got = Number(await page.getByTestId(id).inputValue());
    assert(Math.abs(got - want) < 0.026, `${id} starts at ${got}, server default ${want}`);
  }
  const source = await page.getByTestId('weights-source').textContent();
  assert(source.includes(api.default_weights.source.label), `weights source shown: ${source}`);
  console.log(`     sliders start at the server's defaults α=${defaults.alpha} β=${defaults.beta} γ=${defaults.gamma} (${api.default_weights.source.kind})`);
  let requests = 0;
  // (Chromium refetches the page icon when the address changes; the view's state goes to the
  // address, so that one is not a request of the re-scoring.)
  page.on('request', (r) => { if (!/favicon/.test(r.url())) requests++; });
  const times = [];
  const rescoreTime = page.getByTestId('rescore-time');
  for (const [id, v] of [['w-beta', '0'], ['w-gamma', '0'], ['w-alpha', '1']]) {
    const seen = Number(await rescoreTime.getAttribute('data-rescores'));
    await page.getByTestId(id).fill(v);
    // Read the time of this move's re-score, not the previous one's.
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=rescore-time]').dataset.rescores) > n, seen, { timeout: 5000 });
    const t = await rescoreTime.textContent();
    times.push(parseFloat(t.match(/in ([0-9.]+) ms/)[1]));
  }
  const after = await order();
  assert(before !== after, 'moving the sliders changes the order');
  assert(/moved the sliders/.test(await page.getByTestId('weights-source').textContent()), 'the page says the weights were moved');
  // The ranking as shown can be taken away as CSV (built in the page, no request).
  const csvHref = await page.getByTestId('candidates-csv').getAttribute('href');
  assert(csvHref.startsWith('data:text/csv'), `CSV link: ${csvHref.slice(0, 40)}`);
  const csvAll = decodeURIComponent(csvHref.slice(csvHref.indexOf(',') + 1)).trim().split('\n');
  const csvNotes = csvAll.filter((l) => l.startsWith('#'));
  const csvLines = csvAll.filter((l) => !l.startsWith('#'));
  assert(/not clinical advice/.test(csvNotes[0]) && csvNotes.some((l) => /^# order: Blend/.test(l)) && csvLines[0] === 'rank,id,name,kind,rns,r,n,s,known_for,p_treats,mechanism,safety', `CSV head: ${csvAll.slice(0, 3)}`);
  assert(csvLines.length === 201, `CSV rows: ${csvLines.length - 1}`);
  const topShown = after.split('|')[0];
  assert(csvLines[1].split(',')[2] === topShown.replace(/^"|"$/g, '') || csvLines[1].includes(topShown), `CSV starts with the top candidate shown (${topShown}): ${csvLines[1]}`);
  // Reset returns the sliders (and the order) to the defaults, still without a request.
  await page.getByTestId('weights-reset').click();
  for (const [id, want] of Object.entries(sliders)) {
    const got = Number(await page.getByTestId(id).inputValue());
    assert(Math.abs(got - want) < 0.026, `${id} after reset: ${got}, default ${want}`);
  }
  await page.waitForFunction((b) => [...document.querySelectorAll('[data-testid=candidates] tbody tr')].slice(0, 10).map((tr) => tr.dataset.candidate).join('|') === b, before, { timeout: 5000 });
  assert(requests === 0, `sliders made ${requests} network requests`);
  times.sort((a, b) => a - b);
  console.log(`     slider re-score of 200 candidates: median ${times[1].toFixed(2)} ms, max ${times[2].toFixed(2)} ms (goal ≤ 16 ms)`);
  // A speed goal, checked as a bench (E2E_ONLY='sliders re-rank' E2E_SPEED_GOALS=1), not as a test.
  if (process.env.E2E_SPEED_GOALS) assert(times[1] <= 16, `median re-score ${times[1]} ms (goal ≤ 16)`);
  await page.screenshot({ path: path.join(shots, 'candidates-sliders.png'), fullPage: false });
  await rows.first().getByRole('button', { name: 'why?' }).click();
  await page.getByTestId('subgraph').waitFor({ timeout: 20000 });
  // With predictions the explanation is grouped by metapath, else it lists paths.
  const evidence = (await page.locator('[data-testid=paths] li').count()) + (await page.getByTestId('metapath-group').count());
  assert(evidence >= 1, 'a candidate has explanation paths');
  await page.getByTestId('subgraph').screenshot({ path: path.join(shots, 'candidate-subgraph.png') });
});

test('predictions: asthma\'s top suggestions with plausibility percentiles, scatter, filter, explanation by metapath with sources', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:2841');
  await page.getByTestId('candidates').waitFor({ timeout: 30000 });
  assert((await page.getByTestId('entity-name').textContent()) === 'asthma', 'entity page for asthma');
  const rows = page.locator('[data-testid=candidates] tbody tr');
  const total = await rows.count();
  assert(total >= 50, `candidates shown: ${total}`);
  // The top 10 carry a plausibility score and percentiles.
  const top = await rows.evaluateAll((trs) => trs.slice(0, 10).map((tr) => ({
    name: tr.dataset.candidate,
    score: tr.querySelector('[data-testid=plausibility]')?.textContent || '',
    pct: tr.querySelector('[data-testid=percentile]')?.textContent || '',
    pall: tr.querySelector('[data-testid=palliates]')?.textContent || '',
  })));
  assert(top.length === 10, 'ten suggestions');
  for (const t of top) {
    assert(/^0\.\d{3}$|^1\.000$/.test(t.score), `plausibility of ${t.name}: ${t.score}`);
    // The second model (CpD) is shown next to it.
    assert(/^palliates (0\.\d{3}|1\.000)( \(known\))?$/.test(t.pall), `palliation of ${t.name}: ${t.pall}`);
    assert(/^\d+\.\d%/.test(t.pct) && /of the drug's diseases/.test(t.pct), `percentiles of ${t.name}: ${t.pct}`);
  }
  // Proposed by plausibility: the API's candidates are the disease's best pairs.
  const api = await (await fetch(base + '/api/discover/Disease::DOID:2841?limit=10')).json();
  assert(/plausib/i.test(api.method), `method: ${api.method}`);
  assert(api.candidates.every((c) => c.plausibility && c.plausibility.disease_percentile >= 90), 'API candidates are the most plausible');
  assert(api.candidates.every((c) => c.plausibility.palliates && c.plausibility.palliates.score >= 0 && c.plausibility.palliates.score <= 1), 'API candidates carry a palliation score');
  console.log(`     asthma top 3 by blend: ${top.slice(0, 3).map((t) => `${t.name} (${t.score}, ${t.pct.split('%')[0]}%)`).join(', ')}`);
  // The plausibility × serendipity scatter, one point per candidate shown.
  await openTune(page);
  const dots = page.locator('[data-testid=scatter] circle');
  assert((await dots.count()) === total, `scatter points ${await dots.count()} for ${total} rows`);
  await page.getByTestId('scatter').screenshot({ path: path.join(shots, 'asthma-scatter.png') });
  // A filter changes the list: plausibility percentile at least 99.
  const before = await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.candidate).join('|'));
  await page.getByTestId('filter-plaus').fill('99');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=candidates] tbody tr').length < n, total, { timeout: 5000 });
  const after = await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.candidate).join('|'));
  assert(after !== before && after.length > 0, 'the filter changes the list');
  assert(/of \d+ candidates shown/.test(await page.getByTestId('shown-count').textContent()), 'shown count');
  // Sorting by another column reorders.
  await page.getByTestId('filter-plaus').fill('0');
  await page.getByTestId('sort-rns').click();
  const byRns = await rows.evaluateAll((trs) => trs.slice(0, 10).map((tr) => tr.dataset.candidate).join('|'));
  await page.getByTestId('sort-plausibility').click();
  const byPl = await rows.evaluateAll((trs) => trs.slice(0, 10).map((tr) => tr.dataset.candidate).join('|'));
  assert(byRns !== byPl, 'sorting by RNS and by plausibility give different orders');
  await page.screenshot({ path: path.join(shots, 'asthma-candidates.png'), fullPage: false });
  // Clicking a point explains the candidate: groups by metapath, edges with sources.
  // The last point drawn (the first row's: on top of any point it overlaps).
  await dots.last().click();
  await page.getByTestId('explanation').waitFor({ timeout: 20000 });
  await page.getByTestId('metapath-group').first().waitFor({ timeout: 20000 });
  const groups = page.getByTestId('metapath-group');
  assert((await groups.count()) >= 1, 'explanation grouped by metapath');
  const h = await groups.first().locator('h3').textContent();
  assert(/^C\S*D · contribution \+\d/.test(h), `metapath heading: ${h}`);
  const sources = await page.locator('[data-testid=explanation] .path-edge').evaluateAll((es) => es.map((e) => e.dataset.source));
  assert(sources.length >= 1 && sources.every((s) => s && s.length > 2), `edge sources: ${sources.slice(0, 3)}`);
  assert(/Edge sources: \S/.test(await page.getByTestId('edge-sources').textContent()), 'sources listed');
  await page.getByTestId('subgraph').waitFor({ timeout: 20000 });
  const drawn = await page.locator('[data-testid=subgraph] text').allTextContents();
  assert(drawn.some((t) => t.includes('asthma')), 'the disease is in the drawing');
  assert((await page.locator('[data-testid=explanation] .path-node a').count()) >= 2, 'nodes link to entity pages');
  await page.getByTestId('explanation').screenshot({ path: path.join(shots, 'asthma-explanation.png') });
});

// Discover's settings (first-screen rule, RNS weights, blend, filters, chart) are folded under
// "Adjust the order and filters" so the list comes first; a person opens them to use them.
async function openTune(p) {
  const t = p.getByTestId('tune');
  await t.waitFor({ state: 'attached', timeout: 30000 });
  if (!(await t.evaluate((el) => el.open))) await t.locator('summary').first().click();
  await p.getByTestId('rescore-time').waitFor({ state: 'visible', timeout: 5000 });
}

// The candidate table's state as a person sees it: order, sliders, filters, the explanation open.
async function discoverState(p) {
  return p.evaluate(() => {
    const v = (id) => document.querySelector(`[data-testid=${id}]`)?.value;
    const open = document.querySelector('[data-testid=explain-drawer]:not([hidden]) h2')?.textContent || '';
    return {
      order: [...document.querySelectorAll('[data-testid=candidates] tbody tr')].map((tr) => tr.dataset.candidate).join('|'),
      alpha: v('w-alpha'), beta: v('w-beta'), gamma: v('w-gamma'), blend: v('w-blend'),
      pmin: v('filter-plaus'), cls: v('filter-class'), mode: v('filter-mode'), mech: v('filter-mechanism'),
      band: v('w-band'), favourNew: document.querySelector('[data-testid=favour-new]')?.checked, flaggedAt: v('flagged-at'),
      sortMenu: v('sort-select'),
      sorted: document.querySelector('[data-testid=candidates] th[aria-sort=descending]')?.textContent.trim() || '',
      open,
    };
  });
}

test('discover: the address reproduces the view — weights, blend, first-screen rule, filters, sort and the open explanation', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:2841');
  const rows = page.locator('[data-testid=candidates] tbody tr');
  await rows.first().waitFor({ timeout: 60000 });
  // A fresh page folds the settings: the list comes first.
  assert(!(await page.getByTestId('tune').evaluate((el) => el.open)), 'the settings start folded');
  const firstRow = await rows.first().evaluate((tr) => tr.getBoundingClientRect().top + window.scrollY);
  const folded = await page.getByTestId('tune').evaluate((el) => el.getBoundingClientRect().bottom + window.scrollY);
  assert(firstRow > folded && firstRow - folded < 500, `the list follows the folded settings: first row at ${firstRow}, settings end at ${folded}`);
  await openTune(page);
  await page.getByTestId('w-band').fill('0.5');
  await page.getByTestId('favour-new').uncheck();
  await page.getByTestId('flagged-at').selectOption('in-place');
  await page.getByTestId('w-alpha').fill('0.8');
  await page.getByTestId('w-beta').fill('-0.2');
  await page.getByTestId('w-blend').fill('0.3');
  await page.getByTestId('filter-plaus').fill('90');
  const cls = await page.getByTestId('filter-class').locator('option').nth(1).getAttribute('value');
  await page.getByTestId('filter-mode').selectOption('exclude');
  await page.getByTestId('filter-class').selectOption(cls);
  await page.getByTestId('sort-rns').click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('sort') === 'rns', null, { timeout: 5000 });
  const pick = rows.nth(2);
  const picked = await pick.getAttribute('data-candidate');
  await pick.getByRole('button', { name: 'why?' }).click();
  await page.getByTestId('explanation').waitFor({ timeout: 30000 });
  const here = await discoverState(page);
  const url = page.url();
  const q = new URL(url).searchParams;
  assert(q.get('w') === '0.8,-0.2,' + q.get('w').split(',')[2] && q.get('blend') === '0.3' && q.get('pmin') === '90' && q.get('class') === cls && q.get('cmode') === 'exclude' && q.get('sort') === 'rns' && q.get('why') && q.get('band') === '0.5' && q.get('newmech') === '0' && q.get('flagged') === 'in-place', `the address holds the view: ${url}`);
  assert(here.open.includes(picked), `the explanation of ${picked} is open: ${here.open}`);
  console.log(`     shared link: ${url.replace(base, '')}`);
  // A fresh page (no shared state but the address) shows the same view.
  const other = await page.context().newPage();
  await other.goto(url);
  await other.getByTestId('explanation').waitFor({ timeout: 60000 });
  await other.waitForFunction((n) => document.querySelectorAll('[data-testid=candidates] tbody tr').length === n, here.order.split('|').length, { timeout: 10000 });
  const there = await discoverState(other);
  assert(await other.getByTestId('tune').evaluate((el) => el.open), 'a shared link with settings opens them');
  assert((await other.getByTestId('tune-changed').count()) === 1, 'the fold says the settings were changed');
  for (const k of Object.keys(here)) assert(here[k] === there[k], `${k}: ${JSON.stringify(here[k]).slice(0, 120)} here, ${JSON.stringify(there[k]).slice(0, 120)} in the new page`);
  await other.screenshot({ path: path.join(shots, 'url-state-1280.png') });
  await other.setViewportSize({ width: 390, height: 844 });
  await other.screenshot({ path: path.join(shots, 'url-state-390.png') });
  // Closing the explanation takes it out of the address.
  await other.keyboard.press('Escape');
  await other.getByTestId('explain-drawer').waitFor({ state: 'hidden', timeout: 5000 });
  assert(!new URL(other.url()).searchParams.get('why'), `why= left after closing: ${other.url()}`);
  await other.close();
});

// The first screen's rule (shared/src/screen.rs), written again here to check the API and the
// page against it: flagged drugs last when `flagged` is `last` (only the unexplained ones, of a
// new mechanism, when `unexplained-last`); then slot by slot, inside the
// plausibility band, the lowest (flagged when `in-band`, obvious when favouring new mechanisms)
// wins, the more plausible first; ties by node index.
function screenOrder(items, rule) {
  const band = Number.isFinite(rule.band) ? Math.min(1, Math.max(0, rule.band)) : 1;
  const pl = (i) => (Number.isFinite(items[i].plausibility) ? Math.max(items[i].plausibility, 0) : 0);
  const byPl = items.map((_, i) => i).sort((a, b) => (pl(b) - pl(a)) || (items[a].key - items[b].key));
  // 'last' sets every flagged drug aside; 'unexplained-last' only those of a new mechanism.
  const aside = (i) => items[i].flagged && (rule.flagged === 'last' || (rule.flagged === 'unexplained-last' && items[i].mech === 'new'));
  const groups = ['last', 'unexplained-last'].includes(rule.flagged) ? [byPl.filter((i) => !aside(i)), byPl.filter(aside)] : [byPl];
  // Only 'in-band' makes a flagged drug yield inside the band ('unexplained-last' keeps the
  // explained ones in place).
  const soft = rule.flagged === 'in-band';
  const demerit = (i) => 2 * (soft && items[i].flagged ? 1 : 0) + (rule.favour_new && items[i].obvious ? 1 : 0);
  const out = [];
  for (const rest of groups) {
    while (rest.length) {
      const floor = band * pl(rest[0]);
      let pick = 0;
      for (let k = 1; k < rest.length && pl(rest[k]) >= floor; k++) if (demerit(rest[k]) < demerit(rest[pick])) pick = k;
      out.push(rest.splice(pick, 1)[0]);
    }
  }
  return out;
}
const screenItems = (api) => api.candidates.map((c) => ({
  plausibility: c.plausibility ? c.plausibility.score : 0,
  flagged: (c.safety || []).length > 0,
  obvious: ['same-class', 'shared-target'].includes(c.mechanism?.kind),
  mech: c.mechanism?.kind,
  key: c.node.index,
}));
const discoverApi = async (key) => (await fetch(`${base}/api/discover/${key}?limit=200`)).json();
const rowNames = (page) => page.locator('[data-testid=candidates] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.candidate));
const rowOf = (page, name) => page.locator(`[data-testid=candidates] tbody tr[data-candidate="${name.replace(/["\\]/g, '\\$&')}"]`);

// A disease page with a flagged candidate (the graph records the drug as causing the disease),
// found once through the API (the page asks for 200 candidates too).
let flaggedCase = null;
async function findFlagged() {
  if (flaggedCase) return flaggedCase;
  const tried = [];
  for (const key of ['Disease::DOID:0050156', 'Disease::DOID:14330', 'Disease::DOID:10763', 'Disease::DOID:9352', 'Disease::DOID:1826', 'Disease::DOID:2841', 'Disease::DOID:1612']) {
    const api = await discoverApi(key);
    tried.push(`${key}: ${(api.candidates || []).length} candidates`);
    if (!(api.candidates || []).some((c) => (c.safety || []).length > 0)) continue;
    // The flagged candidate that would stand highest if shown in place.
    // The flagged candidate that stands highest in the API's order.
    const i = api.candidates.findIndex((c) => c.safety.length > 0);
    flaggedCase = { key, api, name: api.candidates[i].node.name, index: i };
    return flaggedCase;
  }
  throw new Error(`no flagged candidate among ${tried.join('; ')}`);
}

test('discover: a flagged drug\'s explanation lists its records by feature and says what they share once, above them', async (page) => {
  const { key, api, name } = await findFlagged();
  const cand = api.candidates.find((c) => c.node.name === name);
  const ck = `${cand.node.kind}::${cand.node.id}`;
  const ex = await (await fetch(`${base}/api/predictions/explain?compound=${encodeURIComponent(ck)}&disease=${encodeURIComponent(key)}`)).json();
  assert(Array.isArray(ex.contradictions) && ex.contradictions.length >= 1, `the explanation lists the records: ${JSON.stringify(ex.contradictions)}`);
  const note = ex.contradiction_note;
  // Said once: no group repeats the shared sentence.
  if (note) {
    const shared = note.split('. ')[0];
    assert(ex.contradictions.every((c) => !c.text.includes(shared)), `a group repeats the note: ${JSON.stringify(ex.contradictions.map((c) => c.text))}`);
  }
  const unfitted = ex.contradictions.some((c) => !c.fitted);
  const raises = ex.contradictions.some((c) => c.fitted && c.contribution > 0.005);
  assert(Boolean(note) === (unfitted || raises), `a note exactly when there is something to say (unfitted ${unfitted}, raises ${raises}): ${note}`);
  console.log(`     ${name} for ${key}: ${ex.contradictions.length} group(s) ${ex.contradictions.map((c) => `${c.feature} ${c.contribution.toFixed(2)}`).join(', ')}; note: ${note ? note.slice(0, 60) + '…' : 'none'}`);
  await page.goto(base + '/entity/' + key);
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const row = rowOf(page, name);
  await row.scrollIntoViewIfNeeded();
  await row.getByRole('button', { name: 'why?' }).click();
  const drawer = page.getByTestId('explain-drawer');
  await drawer.getByTestId('explanation').waitFor({ timeout: 60000 });
  await drawer.getByTestId('contradiction-group').first().waitFor({ timeout: 60000 });
  assert((await drawer.getByTestId('contradiction-group').count()) === ex.contradictions.length, 'one group per feature that fired');
  assert((await drawer.getByTestId('contradiction-note').count()) === (note ? 1 : 0), 'the shared note is shown once (or not at all)');
  await drawer.getByTestId('contradiction-group').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'why-drawer-flagged-1280.png') });
});

test('discover: Parkinson\'s disease lists its palliative drugs as known answers (none of them a candidate) under a note; a drug page labels its own', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:14330');
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const note = (await page.getByTestId('known-note').textContent()).trim();
  assert(note.length > 10, `the known note: ${note}`);
  const pall = page.getByTestId('known-palliates').locator('li');
  const palliates = await pall.allTextContents();
  assert(palliates.length >= 5 && palliates.some((n) => /Levodopa|Pramipexole|Ropinirole/i.test(n)), `palliative drugs listed: ${palliates.slice(0, 8)}`);
  assert((await pall.evaluateAll((ls) => ls.filter((l) => l.dataset.relation !== 'palliates' || !l.querySelector('a[href^="/entity/Compound"]')).length)) === 0, 'each palliative drug is marked and links to its page');
  const treats = await page.getByTestId('existing').locator('li').evaluateAll((ls) => ls.map((l) => [l.dataset.relation, l.textContent]));
  assert(treats.every(([r]) => r === 'treats'), `the treats list holds treats only: ${treats.slice(0, 3)}`);
  const heads = await page.locator('.known-answers h2').allTextContents();
  assert(heads.includes('Known treatments (disease-modifying)') && heads.includes('Symptomatic (palliates)'), `headings: ${heads}`);
  const shown = new Set(await rowNames(page));
  const known = [...palliates, ...treats.map(([, n]) => n)].filter((n) => shown.has(n));
  assert(known.length === 0, `known answers among the candidates: ${known}`);
  console.log(`     Parkinson's: ${treats.length} treat, ${palliates.length} palliate; note: ${note}`);
  // A drug's page: its indications and what it palliates.
  await page.goto(base + '/entity/Compound::DB01235');
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const dheads = await page.locator('.known-answers h2').allTextContents();
  assert(dheads.includes('Known indications') && dheads.includes('Palliates'), `drug page headings: ${dheads}`);
  const dpall = await page.getByTestId('known-palliates').locator('li').allTextContents();
  assert(dpall.some((n) => /Parkinson/i.test(n)), `Levodopa palliates Parkinson's disease: ${dpall}`);
});

test('discover: the first screen is the default order — the first rows are the API\'s, the address stays clean, the probability is beside the percentile', async (page) => {
  const key = 'Disease::DOID:2841';
  const api = await discoverApi(key);
  assert(api.screen && api.screen.rule && typeof api.screen.rule.band === 'number', `the API says its rule: ${JSON.stringify(api.screen)}`);
  // The API's order is its stated rule applied to what it returns.
  const recomputed = screenOrder(screenItems(api), api.screen.rule);
  assert(recomputed.every((v, i) => v === i), `the API order follows its rule (first differences at ${recomputed.findIndex((v, i) => v !== i)})`);
  await page.goto(base + '/entity/' + key);
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const names = await rowNames(page);
  const want = api.candidates.slice(0, 10).map((c) => c.node.name);
  assert(JSON.stringify(names.slice(0, 10)) === JSON.stringify(want), `first rows ${names.slice(0, 10)} vs API ${want}`);
  assert(names.length === api.candidates.length, `all ${api.candidates.length} candidates shown: ${names.length}`);
  assert((await page.getByTestId('sort-select').inputValue()) === 'screen', 'the sort menu says First screen');
  assert((await page.getByTestId('screen-reason').textContent()).trim() === api.screen.reason.trim(), 'the reason is shown');
  assert(Math.abs(Number(await page.getByTestId('w-band').inputValue()) - api.screen.rule.band) < 1e-9, 'the band starts at the rule');
  assert((await page.getByTestId('favour-new').isChecked()) === api.screen.rule.favour_new, 'favour new starts at the rule');
  assert((await page.getByTestId('flagged-at').inputValue()) === api.screen.rule.flagged, 'the flagged placement starts at the rule');
  assert(/Blend/.test(await page.locator('label[for=w-blend]').textContent()) && /"Blend" sort/.test(await page.locator('label[for=w-blend]').textContent()), 'the blend slider says which sort it sets');
  // The percentile cell also says the absolute probability.
  const pct = await page.locator('[data-testid=candidates] tbody tr').first().getByTestId('percentile').textContent();
  assert(/^\d+\.\d% \(P (= 0\.\d+|< 0\.001)\)/.test(pct.trim()), `percentile with P: ${pct}`);
  if (api.evidence && api.evidence.weak) assert((await page.getByTestId('weak-evidence').textContent()).includes(api.evidence.note), 'the weak-evidence note');
  else assert((await page.getByTestId('weak-evidence').count()) === 0, 'no weak-evidence note for strong evidence');
  // Moving the band re-orders in the page; band 1 without favouring new is plausibility order.
  await openTune(page);
  await page.getByTestId('w-band').fill('1');
  await page.getByTestId('favour-new').uncheck();
  await page.getByTestId('flagged-at').selectOption('in-place');
  const byPl = screenOrder(screenItems(api), { band: 1, favour_new: false, flagged: 'in-place' }).map((i) => api.candidates[i].node.name);
  await page.waitForFunction((w) => [...document.querySelectorAll('[data-testid=candidates] tbody tr')].slice(0, 10).map((tr) => tr.dataset.candidate).join('|') === w, byPl.slice(0, 10).join('|'), { timeout: 5000 });
  await page.waitForFunction(() => /band=1/.test(location.search) && /newmech=0/.test(location.search), null, { timeout: 5000 });
  await page.getByTestId('screen-reset').click();
  await page.waitForFunction((w) => [...document.querySelectorAll('[data-testid=candidates] tbody tr')].slice(0, 10).map((tr) => tr.dataset.candidate).join('|') === w, want.join('|'), { timeout: 5000 });
  // An untouched page keeps a clean address.
  const fresh = await page.context().newPage();
  await fresh.goto(base + '/entity/' + key);
  await fresh.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  assert((await fresh.evaluate(() => location.search)) === '', `untouched address: ${fresh.url()}`);
  // The CSV names the order and the rule, with the mechanism and safety columns.
  const csv = decodeURIComponent((await fresh.getByTestId('candidates-csv').getAttribute('href')).split(',').slice(1).join(',')).trim().split('\n');
  assert(csv.some((l) => /^# order: First screen; first-screen rule band=\d\.\d\d flagged=(unexplained-last|in-band|last|in-place) new_mechanisms=favoured/.test(l)), `CSV notes: ${csv.slice(0, 2)}`);
  const head = csv.find((l) => l.startsWith('rank,')).split(',');
  assert(head.includes('mechanism') && head.includes('safety'), `CSV header: ${head}`);
  await fresh.close();
});

test('discover: weak evidence is said above the table; an older server\'s reply (no known, no screen) keeps the old list and the Blend order', async (page) => {
  // The reply is altered in the browser (no real disease need have weak evidence).
  let alter = (d) => ({ ...d, evidence: { best: 0.004, weak: true, threshold: 0.05, note: 'Even the most plausible candidate has a calibrated probability below 1%.' } });
  await page.route('**/api/discover/**', async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, json: alter(await res.json()) });
  });
  await page.goto(base + '/entity/Disease::DOID:2841');
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const weak = page.getByTestId('weak-evidence');
  assert(await weak.isVisible() && (await weak.textContent()).includes('below 1%') && /\bnotice\b/.test(await weak.getAttribute('class')), 'the weak-evidence note');
  const top = await weak.boundingBox();
  const table = await page.getByTestId('candidates').boundingBox();
  assert(top.y < table.y, 'the note is above the table');
  await weak.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'discover-weak-evidence-1280.png') });
  alter = (d) => ({ ...d, known: [], known_note: '', screen: null, evidence: null, candidates: d.candidates.map((c) => ({ ...c, mechanism: undefined, safety: undefined })) });
  await page.reload();
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  assert((await page.getByTestId('existing').locator('li').count()) >= 10, 'the known treatments in one list');
  assert((await page.getByTestId('known-palliates').count()) === 0 && (await page.getByTestId('screen-controls').count()) === 0 && (await page.getByTestId('mechanism').count()) === 0, 'no first-screen parts without the server\'s');
  assert((await page.getByTestId('sort-select').inputValue()) === 'blend', 'the Blend order by default');
  assert((await page.locator('#sort-select option[value=screen]').count()) === 0, 'no First screen sort to pick');
});

test('discover: the mechanism label on each row and the mechanism filter', async (page) => {
  const key = 'Disease::DOID:2841';
  const api = await discoverApi(key);
  const kinds = api.candidates.map((c) => c.mechanism.kind);
  assert(kinds.includes('new') && kinds.some((k) => k === 'same-class' || k === 'shared-target'), `asthma has both kinds: ${[...new Set(kinds)]}`);
  await page.goto(base + '/entity/' + key);
  const rows = page.locator('[data-testid=candidates] tbody tr');
  await rows.first().waitFor({ timeout: 60000 });
  const badges = await rows.evaluateAll((trs) => trs.slice(0, 10).map((tr) => {
    const b = tr.querySelector('[data-testid=mechanism]');
    return { name: tr.dataset.candidate, m: b?.dataset.mechanism, text: b?.textContent || '', visible: !!b && b.getBoundingClientRect().width > 0 };
  }));
  assert(badges.every((b) => b.visible && ['new', 'same-class', 'shared-target', 'none-known'].includes(b.m)), `badges: ${JSON.stringify(badges.slice(0, 3))}`);
  for (const b of badges) {
    if (b.m === 'new') assert(b.text === 'new mechanism', `${b.name}: ${b.text}`);
    if (b.m === 'same-class') assert(/^same class as \S.*: \S/.test(b.text), `${b.name}: ${b.text}`);
    if (b.m === 'shared-target') assert(/^shared target with \S.*: \S/.test(b.text), `${b.name}: ${b.text}`);
  }
  console.log(`     asthma top 10: ${badges.map((b) => `${b.name} (${b.m})`).join(', ')}`);
  assert(/Of the top 10 shown: \d+ new mechanisms?/.test(await page.getByTestId('new-count').textContent()), 'the count line');
  const mechs = () => rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector('[data-testid=mechanism]')?.dataset.mechanism));
  await openTune(page);
  await page.getByTestId('filter-mechanism').selectOption('new');
  const nNew = kinds.filter((k) => k === 'new').length;
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=candidates] tbody tr').length === n, nNew, { timeout: 5000 });
  assert((await mechs()).every((m) => m === 'new'), 'only new mechanisms');
  await page.getByTestId('filter-mechanism').selectOption('obvious');
  const nObv = kinds.filter((k) => k === 'same-class' || k === 'shared-target').length;
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=candidates] tbody tr').length === n, nObv, { timeout: 5000 });
  assert((await mechs()).every((m) => m === 'same-class' || m === 'shared-target'), 'only same class / shared target');
  // Filtering keeps the first screen's order (it hides rows, it does not re-rank).
  const apiObv = api.candidates.filter((c) => ['same-class', 'shared-target'].includes(c.mechanism.kind)).map((c) => c.node.name);
  assert(JSON.stringify(await rowNames(page)) === JSON.stringify(apiObv), 'the filtered rows keep the API order');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('mech') === 'obvious', null, { timeout: 5000 });
  await page.getByTestId('filter-mechanism').selectOption('any');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=candidates] tbody tr').length === n, api.candidates.length, { timeout: 5000 });
});

test('discover: a flagged candidate shows its warning where the rule puts it; "last" moves every flagged one to the end, "in place" where plausibility puts it', async (page) => {
  const { key, api, name } = await findFlagged();
  const items = screenItems(api);
  const names = (o) => o.map((i) => api.candidates[i].node.name);
  assert(JSON.stringify(names(screenOrder(items, api.screen.rule))) === JSON.stringify(api.candidates.map((c) => c.node.name)), `the API order is the rule (${key})`);
  assert(['unexplained-last', 'in-band', 'last', 'in-place'].includes(api.screen.rule.flagged) && api.screen.flagged >= 1, `the API says how many are flagged: ${JSON.stringify(api.screen)}`);
  const flag = api.candidates[flaggedCase.index].safety[0];
  console.log(`     ${key}: ${api.screen.flagged} flagged, e.g. ${name} causes ${flag.side_effect.name} (${flag.source}, ${flag.by}), API row ${flaggedCase.index}`);
  await page.goto(base + '/entity/' + key);
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const row = rowOf(page, name);
  const warn = row.getByTestId('safety-flag');
  await warn.waitFor({ state: 'visible', timeout: 5000 });
  const text = await warn.textContent();
  assert(text.startsWith('⚠ Recorded as causing') && text.includes(flag.side_effect.name), `the warning: ${text}`);
  assert((await warn.getAttribute('role')) === 'note' && (await warn.getAttribute('title')).includes(flag.matched), 'the warning is a note, its title says how it was matched');
  assert(/\bflagged\b/.test(await row.getAttribute('class')), 'the row is marked flagged');
  const noteText = await page.getByTestId('flagged-note').textContent();
  assert(noteText.includes(String(api.screen.flagged)), `the flagged note: ${noteText}`);
  const before = (await rowNames(page)).indexOf(name);
  assert(before === flaggedCase.index, `${name} is row ${before}, API position ${flaggedCase.index}`);
  await page.screenshot({ path: path.join(shots, 'discover-screen-1280.png') });
  await row.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'discover-screen-flagged-1280.png') });
  // Last: every flagged candidate after every unflagged one.
  await openTune(page);
  await page.getByTestId('flagged-at').selectOption('last');
  const last = names(screenOrder(items, { ...api.screen.rule, flagged: 'last' }));
  await page.waitForFunction((w) => [...document.querySelectorAll('[data-testid=candidates] tbody tr')].map((tr) => tr.dataset.candidate).join('|') === w, last.join('|'), { timeout: 5000 });
  const rows = await page.locator('[data-testid=candidates] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.classList.contains('flagged')));
  const first = rows.indexOf(true);
  assert(first >= 0 && rows.slice(first).every((f) => f), `flagged rows come last (first at ${first} of ${rows.length})`);
  assert(/end of the list/.test(await page.getByTestId('flagged-note').textContent()), 'the note says they are at the end');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('flagged') === 'last', null, { timeout: 5000 });
  // In place: where plausibility (and the band) alone put it; the note goes.
  await page.getByTestId('flagged-at').selectOption('in-place');
  const inPlace = names(screenOrder(items, { ...api.screen.rule, flagged: 'in-place' }));
  await page.waitForFunction((w) => [...document.querySelectorAll('[data-testid=candidates] tbody tr')].map((tr) => tr.dataset.candidate).join('|') === w, inPlace.join('|'), { timeout: 5000 });
  assert(inPlace.indexOf(name) <= last.indexOf(name), `in place ${name} is not lower than last: ${inPlace.indexOf(name)} vs ${last.indexOf(name)}`);
  assert((await page.getByTestId('flagged-note').count()) === 0, 'no flagged note when shown in place');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('flagged') === 'in-place', null, { timeout: 5000 });
});

test('discover at 390 px: mechanism label and safety warning read inside their cards, the screen controls fit', async (page) => {
  const { key, name } = await findFlagged();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/entity/' + key);
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  await openTune(page);
  const r = await page.evaluate((flagged) => {
    const bad = [];
    const inside = (b, c) => b.left >= c.left - 0.5 && b.right <= c.right + 0.5;
    const trs = [...document.querySelectorAll('[data-testid=candidates] tbody tr')];
    const check = (tr) => {
      const card = tr.getBoundingClientRect();
      for (const id of ['mechanism', 'safety-flag']) {
        const el = tr.querySelector(`[data-testid=${id}]`);
        if (!el) { if (id === 'mechanism' || tr.dataset.candidate === flagged) bad.push(`${tr.dataset.candidate}: no ${id}`); continue; }
        const b = el.getBoundingClientRect();
        if (b.width < 1 || !inside(b, card)) bad.push(`${tr.dataset.candidate}: ${id} outside its card`);
        if (el.scrollWidth > el.clientWidth + 1) bad.push(`${tr.dataset.candidate}: ${id} cut`);
      }
    };
    trs.slice(0, 10).forEach(check);
    const f = trs.find((tr) => tr.dataset.candidate === flagged);
    if (f) check(f); else bad.push('flagged row missing');
    const controls = document.querySelector('[data-testid=screen-controls]').getBoundingClientRect();
    if (controls.right > document.documentElement.clientWidth + 0.5) bad.push('screen controls overflow');
    return { bad, display: getComputedStyle(trs[0]).display };
  }, name);
  assert(r.display === 'grid', 'cards at 390 px');
  assert(r.bad.length === 0, `at 390 px: ${r.bad.slice(0, 5).join('; ')}`);
  const o = await overflowAt(page);
  assert(o.px <= 1, `the page overflows by ${o.px}px at 390 px: ${o.culprits.join('; ')}`);
  await page.getByTestId('screen-controls').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'discover-screen-390.png') });
  await page.locator('[data-testid=candidates] tbody tr').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'discover-screen-cards-390.png') });
  await rowOf(page, name).scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'discover-screen-flagged-390.png') });
});

test('shortlist: keep candidates from the table and the explanation, list, remove, export CSV; it survives a reload (this browser)', async (page) => {
  await page.goto(base + '/entity/Disease::DOID:2841');
  const rows = page.locator('[data-testid=candidates] tbody tr');
  await rows.first().waitFor({ timeout: 60000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.dataset.place === 'local', null, { timeout: 10000 });
  const names = await rows.evaluateAll((trs) => trs.slice(0, 3).map((tr) => tr.dataset.candidate));
  for (const i of [0, 1]) {
    await rows.nth(i).getByTestId('keep').click();
    await page.waitForFunction((i) => document.querySelectorAll('[data-testid=candidates] tbody tr')[i].querySelector('[data-testid=keep]').getAttribute('aria-pressed') === 'true', i, { timeout: 5000 });
  }
  // From the explanation drawer.
  await rows.nth(2).getByRole('button', { name: 'why?' }).click();
  const drawer = page.getByTestId('explain-drawer');
  await drawer.getByTestId('keep').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]').textContent.trim() === '3', null, { timeout: 5000 });
  await page.keyboard.press('Escape');
  // A reload keeps it (localStorage: nobody is signed in).
  await page.reload();
  await rows.first().waitFor({ timeout: 60000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=shortlist-count]')?.textContent.trim() === '3', null, { timeout: 10000 });
  const pressed = await rows.evaluateAll((trs) => trs.slice(0, 3).map((tr) => tr.querySelector('[data-testid=keep]').getAttribute('aria-pressed')));
  assert(pressed.every((p) => p === 'true'), `kept marks after reload: ${pressed}`);
  await page.getByRole('link', { name: /Shortlist/ }).click();
  const table = page.getByTestId('shortlist');
  await table.waitFor({ timeout: 10000 });
  assert(/this browser/.test(await page.getByTestId('shortlist-where').textContent()), 'says where it is kept');
  const listed = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.candidate));
  assert(JSON.stringify(listed) === JSON.stringify(names), `listed ${listed}, kept ${names}`);
  const api = await (await fetch(base + '/api/discover/Disease::DOID:2841?limit=1')).json();
  const csvHref = await page.getByTestId('shortlist-csv').getAttribute('href');
  const lines = decodeURIComponent(csvHref.slice(csvHref.indexOf(',') + 1)).trim().split('\n');
  assert(lines[0].startsWith('#') && /not clinical advice/.test(lines[0]), `caveat first: ${lines[0]}`);
  assert(lines[1].startsWith('query_id,query_name,query_kind,candidate_id,candidate_name') && lines.length === 5, `CSV: ${lines.slice(0, 2)} (${lines.length} lines)`);
  const head = lines[1].split(',');
  const row = lines[2].split(',');
  const col = (n) => row[head.indexOf(n)];
  assert(col('query_name') === 'asthma' && col('candidate_name') === names[0] && Math.abs(Number(col('alpha')) - api.default_weights.weights.alpha) < 0.006 && Number(col('percentile')) > 0, `first row: ${lines[2]}`);
  await page.screenshot({ path: path.join(shots, 'shortlist-1280.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const o = await overflowAt(page);
  assert(o.px <= 1, `/shortlist overflows by ${o.px}px at 390 px: ${o.culprits.join('; ')}`);
  await page.screenshot({ path: path.join(shots, 'shortlist-390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  // Remove one; a reload shows two.
  await table.locator('tbody tr').nth(1).getByTestId('shortlist-remove').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 2, null, { timeout: 5000 });
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=shortlist] tbody tr').length === 2, null, { timeout: 10000 });
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('serenqa.shortlist.v1') || '[]').map((i) => i.candidate.name));
  assert(JSON.stringify(stored) === JSON.stringify([names[0], names[2]]), `stored after removal: ${stored}`);
  // The "for" link goes back to the page it came from with the explanation open.
  await page.getByTestId('shortlist').locator('tbody tr').first().getByRole('link', { name: 'asthma' }).click();
  await page.getByTestId('explanation').waitFor({ timeout: 60000 });
  assert((await page.getByTestId('explanation').locator('h2').textContent()).includes(names[0]), 'back on asthma with the explanation open');
});

test('ask: a free-text question gets Cypher, answers and serendipitous candidates', async (page) => {
  await page.goto(base + '/');
  await page.getByTestId('ask-input').fill('Which compounds treat asthma?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('ask-result').waitFor({ timeout: 60000 });
  const cypher = await page.getByTestId('ask-cypher').textContent();
  assert(/MATCH/i.test(cypher), `generated Cypher: ${cypher}`);
  assert((await page.getByTestId('ask-answers').locator('li').count()) >= 2, 'existing answers listed');
  assert((await page.locator('[data-testid=ask-candidates] tbody tr').count()) >= 1, 'serendipitous candidates listed');
  const askKnown = await page.locator('[data-testid=ask-candidates] .known-for').allTextContents();
  assert(askKnown.some((t) => /^treats: \S/.test(t)), `a candidate's current indications shown: ${askKnown}`);
  assert(/retrieval/i.test(await page.getByTestId('ask-stages').textContent()), 'stage timings shown');
  assert(/RNS weights α = -?[0-9.]+, β = -?[0-9.]+, γ = -?[0-9.]+: \S/.test(await page.getByTestId('ask-weights').textContent()), 'the weights used, with their source');
  // Progress streamed: every stage was shown as it completed, before the result arrived.
  const arrived = async (sel, attr) => parseFloat(await page.locator(sel).getAttribute(attr));
  const result = await arrived('[data-result-arrived-ms]', 'data-result-arrived-ms');
  let last = 0;
  for (const stage of ['retrieval', 'exploration', 'scoring']) {
    const at = await arrived(`[data-stage-done=${stage}]`, 'data-arrived-ms');
    assert(at >= last && at <= result, `${stage} arrived at ${at} ms, result at ${result} ms`);
    last = at;
  }
  const retrieval = await arrived('[data-stage-done=retrieval]', 'data-arrived-ms');
  assert(retrieval < result, `retrieval (${retrieval} ms) was shown before the result (${result} ms): progress is streamed`);
  console.log(`  ask progress: retrieval shown at ${(await arrived('[data-stage-done=retrieval]', 'data-arrived-ms')).toFixed(0)} ms, result at ${result.toFixed(0)} ms`);
  await page.screenshot({ path: path.join(shots, 'ask.png'), fullPage: true });
  // Each term's header defines it in one sentence.
  const heads = await page.locator('[data-testid=ask-candidates] thead th[title]').evaluateAll((ths) => ths.map((t) => `${t.textContent}: ${t.title}`));
  for (const term of ['RNS', 'R', 'N', 'S']) assert(heads.some((h) => h.startsWith(`${term}: `) && h.length > 40), `${term} header tooltip: ${heads}`);
  // On a phone the candidates are cards: every term is on screen without a sideways scroll.
  await page.setViewportSize({ width: 390, height: 844 });
  const fit = await page.locator('[data-testid=ask-candidates]').evaluate((t) => ({ table: t.scrollWidth, box: t.parentElement.clientWidth }));
  assert(fit.table <= fit.box + 1, `Ask candidates at 390 px: table ${fit.table} px in a ${fit.box} px box`);
  const firstS = await page.locator('[data-testid=ask-candidates] tbody tr').first().getByTestId('ask-s').boundingBox();
  assert(firstS && firstS.x + firstS.width <= 390, `S on screen at 390 px: ${JSON.stringify(firstS)}`);
  const ov = await overflowAt(page);
  assert(ov.px <= 1, `Ask overflows by ${ov.px}px at 390 px: ${ov.culprits.join('; ')}`);
  await page.screenshot({ path: path.join(shots, 'ask-390.png'), fullPage: true });
  // Opening a candidate's paths brings its explanation (drawn below the list) into view.
  await page.locator('[data-testid=ask-candidates] tbody tr').first().getByRole('button').click();
  await page.getByTestId('ask-why').waitFor({ timeout: 10000 });
  await page.waitForFunction(() => { const r = document.querySelector('[data-testid=ask-why]').getBoundingClientRect(); return r.top >= -1 && r.top < window.innerHeight; }, null, { timeout: 5000 });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('ask: an everyday question shows what was understood, misspellings offer alternatives, empty input is refused', async (page) => {
  await page.goto(base + '/');
  // Empty: a message before any request.
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('ask-invalid').waitFor({ timeout: 5000 });
  assert((await page.getByTestId('ask-result').count()) === 0, 'no request for an empty question');
  assert((await page.getByTestId('ask-input').getAttribute('maxlength')) === '2000', 'input maxlength');
  await page.getByTestId('ask-input').fill('Which drugs treat multiple sclerosis?');
  assert((await page.getByTestId('ask-counter').textContent()).startsWith('37 /'), 'character counter');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('ask-result').waitFor({ timeout: 60000 });
  const interp = await page.getByTestId('ask-interpretation').textContent();
  assert(/Drugs that treat multiple sclerosis/.test(interp), `interpretation: ${interp}`);
  assert((await page.getByTestId('ask-entities').locator('li').count()) === 1, 'one linked entity chip');
  assert((await page.getByTestId('ask-answers').locator('li').count()) >= 2, 'answers listed');
  // An ambiguous name: "did you mean" re-asks with the alternative.
  await page.getByTestId('ask-input').fill('which drugs treat diabetes');
  await page.getByRole('button', { name: 'Ask' }).click();
  const dym = page.getByTestId('ask-did-you-mean');
  await dym.waitFor({ timeout: 60000 });
  const alt = dym.getByRole('button').first();
  const altName = (await alt.textContent()).replace(/ \(.*\)$/, '');
  await alt.click();
  await page.waitForFunction((n) => document.querySelector('[data-testid=ask-input]').value.includes(n), altName, { timeout: 5000 });
  await page.waitForFunction((n) => (document.querySelector('[data-testid=ask-interpretation]')?.textContent || '').includes(n), altName, { timeout: 60000 });
  // A name after "besides" is left out of the answers, and its chip says so.
  await page.getByTestId('ask-input').fill('Is metformin useful for anything besides diabetes?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.waitForFunction(() => /other than/.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  const leftOut = await page.getByTestId('ask-entities').locator('li[data-left-out=true]').allTextContents();
  assert(leftOut.length >= 2 && leftOut.every((t) => /diabetes/.test(t) && /left out/.test(t)), `left-out chips: ${leftOut}`);
  const exAnswers = await page.getByTestId('ask-answers').locator('li').allTextContents();
  assert(exAnswers.length >= 1 && exAnswers.every((t) => !/diabetes/i.test(t)), `answers: ${exAnswers}`);
  await page.screenshot({ path: path.join(shots, 'ask-besides.png'), fullPage: true });
  // A yes/no question is answered in words.
  await page.getByTestId('ask-input').fill('Does metformin treat polycystic ovary syndrome?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.waitForFunction(() => /among the diseases that are treated by Metformin\? Yes\./.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  await page.screenshot({ path: path.join(shots, 'ask-yes-no.png'), fullPage: true });
  // A treatment for something the graph holds only as a side effect: refused with the
  // reason (it used to list the drugs that CAUSE tuberculosis), and the question it can
  // answer is offered first; clicking it re-asks and answers.
  await page.getByTestId('ask-input').fill('which drugs treat tuberculosis');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.waitForFunction(() => /only as a side effect \(Tuberculosis\)/.test(document.querySelector('[data-testid=ask-not-understood]')?.textContent || ''), null, { timeout: 60000 });
  assert((await page.getByTestId('ask-answers').locator('li').count()) === 0, 'no answers to a refused question');
  assert((await page.getByTestId('ask-interpretation').count()) === 0, 'no interpretation for a refused question');
  await page.screenshot({ path: path.join(shots, 'ask-refused.png'), fullPage: true });
  const offered = page.getByTestId('ask-examples').getByRole('button').first();
  assert((await offered.textContent()) === 'which drugs cause Tuberculosis', `offered: ${await offered.textContent()}`);
  await offered.click();
  await page.waitForFunction(() => /Drugs that cause Tuberculosis/.test(document.querySelector('[data-testid=ask-interpretation]')?.textContent || ''), null, { timeout: 60000 });
  assert((await page.getByTestId('ask-answers').locator('li').count()) >= 1, 'the offered question is answered');
  // Nothing understood: why, and examples that work.
  await page.getByTestId('ask-input').fill('zqxv blorf');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('ask-not-understood').waitFor({ timeout: 60000 });
  assert((await page.getByTestId('ask-examples').getByRole('button').count()) === 3, 'three example questions');
  await page.screenshot({ path: path.join(shots, 'ask-understood.png'), fullPage: true });
});

test('ask: the four clinician questions of issue 14 and their misspelled variants give the gold answers, with the interpretation', async (page) => {
  const gold = async (cypher) => {
    const r = await fetch(base + '/api/cypher', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: cypher }) });
    assert(r.ok, `gold query failed: ${r.status}`);
    return (await r.json()).rows.map((row) => String(row[0])).sort();
  };
  const ms = await gold("MATCH (c:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2377'}) RETURN DISTINCT c.id");
  const asthma = await gold("MATCH (c:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}) RETURN DISTINCT c.id");
  const metformin = await gold("MATCH (:Compound {id: 'DB00331'})-[:BINDS_CbG]->(g:Gene) RETURN DISTINCT g.id");
  // Hetionet has no "treats" edge for IPF; its one known drug palliates it.
  const ipf = await gold("MATCH (c:Compound)-[:TREATS_CtD|PALLIATES_CpD]->(:Disease {id: 'DOID:0050156'}) RETURN DISTINCT c.id");
  const alz = await gold("MATCH (c:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:10652'}) RETURN DISTINCT c.id");
  // Nor for Parkinson's disease: "treat" falls back to the drugs that palliate it (said in the interpretation).
  const pd = await gold("MATCH (c:Compound)-[:PALLIATES_CpD]->(:Disease {id: 'DOID:14330'}) RETURN DISTINCT c.id");
  const cases = [
    ['Which drugs treat multiple sclerosis?', ms, /multiple sclerosis/],
    ['which drugs treat multple sclerosis', ms, /multiple sclerosis/],
    ['Which drugs treat asthma?', asthma, /asthma/],
    ['which drugs treat asthmma', asthma, /asthma/],
    ['What genes does metformin bind?', metformin, /Metformin/],
    ['what genes does metfromin bind', metformin, /Metformin/],
    ['What drugs could be repurposed for idiopathic pulmonary fibrosis?', ipf, /idiopathic pulmonary fibrosis/],
    ['what drugs could be repurposed for idiopathic pulmonry fibrosis', ipf, /idiopathic pulmonary fibrosis/],
    ['drugs for alzheimers desease', alz, /Alzheimer's disease/],
    ['which drugs treat parkinsons', pd, /palliate Parkinson's disease/],
  ];
  await page.goto(base + '/');
  for (const [q, want, interp] of cases) {
    assert(want.length > 0, `${q}: empty gold set`);
    // Mark the previous result so only the new one is read.
    await page.evaluate(() => document.querySelectorAll('[data-result-arrived-ms]').forEach((d) => d.setAttribute('data-stale', '1')));
    await page.getByTestId('ask-input').fill(q);
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.waitForFunction(() => {
      const d = document.querySelector('[data-result-arrived-ms]:not([data-stale])');
      return d && d.querySelector('[data-testid=ask-interpretation]') && d.querySelectorAll('[data-testid=ask-answers] a').length > 0;
    }, null, { timeout: 60000 });
    const shown = await page.getByTestId('ask-interpretation').textContent();
    assert(interp.test(shown), `${q}: interpretation "${shown}"`);
    const got = (await page.getByTestId('ask-answers').locator('a').evaluateAll((as) => as.map((a) => decodeURIComponent(a.getAttribute('href').replace('/entity/', ''))))).map((k) => k.split('::').pop()).sort();
    assert(JSON.stringify(got) === JSON.stringify(want), `${q}: answers ${got.join(',')} ≠ gold ${want.join(',')}`);
  }
  console.log(`  ask: ${cases.length} everyday and misspelled questions answered exactly as their gold queries`);
  await page.screenshot({ path: path.join(shots, 'ask-misspelled.png'), fullPage: true });
});

// Every text an element matching `sel` showed, however briefly (a retry countdown), kept in
// `window.__seen`: a test checks what the user saw without racing the timer that removes it.
const recordTexts = (page, sel) => page.addInitScript((sel) => {
  window.__seen = [];
  new MutationObserver(() => {
    for (const el of document.querySelectorAll(sel)) {
      const t = el.textContent;
      if (!window.__seen.includes(t)) window.__seen.push(t);
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
}, sel);

// Refusals are answered by the test itself (`page.route`): deterministic, and no rate budget is
// shared with the other tests (the suite's server runs with a generous one, scripts/test.sh).
const askStream = (u) => u.pathname === '/api/ask/stream';
const refuse = (status, code, message, retryAfter) => (route) => route.fulfill({
  status,
  contentType: 'application/json',
  headers: retryAfter ? { 'Retry-After': String(retryAfter) } : {},
  body: JSON.stringify({ code, message }),
});

test('ask: a repurposing question shows the disease page\'s own list (same order, labels, warnings) with a link; an absent disease is said plainly', async (page) => {
  // The entity page's first screen, as its API gives it.
  const api = await discoverApi('Disease::DOID:332');
  await page.goto(base + '/?q=' + encodeURIComponent('what could be repurposed for ALS'));
  await page.getByTestId('ask-repurpose').waitFor({ timeout: 90000 });
  await page.locator('[data-testid=ask-repurpose] [data-testid=candidates] tbody tr').first().waitFor({ timeout: 30000 });
  const names = await page.$$eval('[data-testid=ask-repurpose] [data-testid=candidates] tbody tr', (rows) => rows.map((tr) => tr.dataset.candidate));
  const want = api.candidates.map((c) => c.node.name);
  assert(JSON.stringify(names.slice(0, 10)) === JSON.stringify(want.slice(0, 10)), `Ask's list ${names.slice(0, 10)} vs the page's ${want.slice(0, 10)}`);
  const link = page.getByTestId('ask-repurpose-page');
  assert((await link.getAttribute('href')) === '/entity/Disease%3A%3ADOID%3A332' || /DOID(:|%3A)332/.test(await link.getAttribute('href')), `link to the page: ${await link.getAttribute('href')}`);
  // The flags and mechanism labels are the page's: a flagged candidate shows its warning here too.
  const flagged = api.candidates.findIndex((c) => c.safety && c.safety.length);
  if (flagged >= 0 && flagged < 10) {
    const row = page.locator('[data-testid=ask-repurpose] [data-testid=candidates] tbody tr').nth(flagged);
    assert((await row.getByTestId('safety-flag').count()) >= 1, `the flagged candidate ${api.candidates[flagged].node.name} shows its warning`);
  }
  // Inside Ask's answer the table has less room than on the entity page: at 1280 px it still fits,
  // so "why?" and "Keep" are in view without sideways scrolling.
  const fit = await page.evaluate(() => {
    const wrap = document.querySelector('[data-testid=ask-repurpose] [data-testid=candidates]').parentElement;
    return { sideways: wrap.scrollWidth - wrap.clientWidth, vw: window.innerWidth };
  });
  assert(fit.vw < 1200 || fit.sideways <= 1, `Ask's candidate table scrolls sideways by ${fit.sideways}px at ${fit.vw} px`);
  // Keep works from Ask: the first candidate goes to this browser's shortlist.
  await page.locator('[data-testid=ask-repurpose] [data-testid=candidates] tbody tr').first().getByTestId('keep').click();
  await page.waitForFunction(() => /\b1\b/.test(document.querySelector('[data-testid=shortlist-count]')?.textContent || ''), null, { timeout: 5000 });
  // The pipeline's own path-exploration candidates stay available, folded below it.
  assert((await page.getByTestId('ask-explored-folded').count()) === 1, 'path-exploration candidates folded');
  await page.screenshot({ path: path.join(shots, 'ask-repurpose.png') });
  // A disease the graph does not hold: said plainly with its DO identifier, no answers.
  await page.getByTestId('ask-input').fill('is there anything for cystic fibrosis');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.waitForFunction(() => /does not hold the disease 'cystic fibrosis' \(Disease Ontology DOID:1485/.test(document.querySelector('[data-testid=ask-not-understood]')?.textContent || ''), null, { timeout: 60000 });
  assert((await page.getByTestId('ask-answers').locator('li').count()) === 0, 'no answers about fragments of the name');
  assert((await page.getByTestId('ask-repurpose').count()) === 0, 'no list for an absent disease');
  await page.screenshot({ path: path.join(shots, 'ask-absent.png'), fullPage: true });
});

test('ask refusals: rate limited says why, waits out Retry-After once by itself and answers; busy twice offers "Try again"', async (page) => {
  await recordTexts(page, '[data-testid=ask-retrying]');
  const asked = [];
  await page.route(askStream, async (route) => {
    asked.push(Date.now());
    if (asked.length === 1) await refuse(429, 'rate_limited', 'too many requests from your address; retry in 2 s', 2)(route);
    else await route.continue();
  });
  await page.goto(base + '/');
  await page.getByTestId('ask-input').fill('Which compounds treat asthma?');
  await page.getByRole('button', { name: 'Ask' }).click();
  // For the record only (the countdown lasts 2 s): what the wait looks like.
  await page.getByTestId('ask-retrying').waitFor({ timeout: 5000 })
    .then(() => page.screenshot({ path: path.join(shots, 'ask-retrying.png') })).catch(() => {});
  await page.getByTestId('ask-result').waitFor({ timeout: 60000 });
  const seen = await page.evaluate(() => window.__seen);
  assert(asked.length === 2, `asked ${asked.length} times (refused once, retried once)`);
  assert(asked[1] - asked[0] >= 1900, `the retry waited out Retry-After: 2 (${asked[1] - asked[0]} ms)`);
  assert(seen.some((t) => /^Too many requests from your address/.test(t) && /Retrying in 2 s…/.test(t)), `the reason and the countdown: ${JSON.stringify(seen)}`);
  assert(seen.some((t) => /Retrying in 1 s…/.test(t)), `the countdown counts down: ${JSON.stringify(seen)}`);
  assert((await page.getByTestId('ask-retrying').count()) === 0 && (await page.getByTestId('ask-error').count()) === 0, 'no refusal left once the retry answered');
  // Busy at the first try and at the retry: the final line says so, with "Try again".
  await page.unroute(askStream);
  let busy = 0;
  await page.route(askStream, async (route) => {
    busy++;
    if (busy <= 2) await refuse(503, 'busy', 'the server is busy with other ask requests; retry shortly', 1)(route);
    else await route.continue();
  });
  await page.getByTestId('ask-input').fill('Which drugs treat asthma?');
  await page.getByRole('button', { name: 'Ask' }).click();
  const err = page.getByTestId('ask-error');
  await err.waitFor({ timeout: 15000 });
  assert(busy === 2, `asked ${busy} times before giving up (one automatic retry)`);
  assert((await err.getAttribute('data-kind')) === 'busy', `kind ${await err.getAttribute('data-kind')}`);
  const line = await err.textContent();
  assert(/^The server is busy with other requests right now\. It did not clear after one retry; wait a little, then try again\./.test(line), `the final line: ${line}`);
  assert(!/is it running\?|HTTP \d/.test(line), `no catch-all or bare status: ${line}`);
  await page.screenshot({ path: path.join(shots, 'ask-busy.png') });
  await err.getByTestId('try-again').click();
  await page.getByTestId('ask-result').waitFor({ timeout: 60000 });
  assert(busy === 3, `"Try again" asked once more (${busy})`);
});

test('ask refusals: too slow (504 or the Ask deadline), a server that cannot be reached, a model that needs sign-in — each says why and what to do', async (page) => {
  const cases = [
    ['a proxy\'s 504', (route) => route.fulfill({ status: 504, contentType: 'text/html', body: '<html><body>504 Gateway Time-out</body></html>' }),
      'too-slow', /^The question took too long to answer; try a narrower question/],
    ['the server\'s deadline', (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body:
      'data: {"kind":"stage","name":"retrieval","ms":5}\n\n' +
      'data: {"kind":"error","code":"ask_deadline","message":"the question was not answered within the server\'s limit of 60 s; try a narrower question"}\n\n' }),
      'too-slow', /^The question took too long to answer; try a narrower question/],
    ['no server', (route) => route.abort('connectionrefused'), 'unreachable', /^The server could not be reached/],
    ['a model that needs sign-in', refuse(401, 'not_signed_in', 'this server answers with a language model: sign in first (or ask with model "offline")'),
      'sign-in', /^This server answers with a language model, which needs you signed in: sign in, then ask again\./],
  ];
  let reply = null;
  await page.route(askStream, (route) => reply(route));
  for (const [name, answer, kind, text] of cases) {
    reply = answer;
    await page.goto(base + '/?q=' + encodeURIComponent('Which drugs treat asthma?'));
    const err = page.getByTestId('ask-error');
    await err.waitFor({ timeout: 15000 });
    const line = await err.textContent();
    assert((await err.getAttribute('data-kind')) === kind, `${name}: kind ${await err.getAttribute('data-kind')}, line ${line}`);
    assert(text.test(line), `${name}: ${line}`);
    assert(!/is it running\?/.test(line), `${name}: no catch-all: ${line}`);
    assert((await page.getByRole('button', { name: 'Ask' }).isEnabled()), `${name}: the form is usable again`);
    if (kind === 'sign-in') {
      const href = await err.getByTestId('refused-sign-in').getAttribute('href');
      assert(/^\/login\?next=%2F%3Fq%3D/.test(href), `sign-in link comes back here: ${href}`);
      assert((await err.getByTestId('try-again').count()) === 0, 'no "Try again" when signing in is the fix');
    } else {
      assert((await err.getByTestId('try-again').count()) === 1, `${name}: "Try again"`);
    }
    await page.screenshot({ path: path.join(shots, `ask-refused-${kind}.png`) });
  }
});

test('discover refusals: a rate-limited candidate list waits out Retry-After once and loads', async (page) => {
  await recordTexts(page, '[data-testid=discover-retrying]');
  let n = 0;
  await page.route((u) => u.pathname.startsWith('/api/discover/'), async (route) => {
    n++;
    if (n === 1) await refuse(429, 'rate_limited', 'too many requests from your address; retry in 1 s', 1)(route);
    else await route.continue();
  });
  await page.goto(base + '/entity/Disease::DOID:2841');
  await page.getByTestId('candidates').waitFor({ timeout: 60000 });
  const seen = await page.evaluate(() => window.__seen);
  assert(n === 2, `asked ${n} times`);
  assert(seen.some((t) => /^Too many requests from your address/.test(t) && /Retrying in 1 s…/.test(t)), `the reason and the countdown: ${JSON.stringify(seen)}`);
  assert((await page.getByTestId('discover-error').count()) === 0, 'no error once the retry answered');
});

test('entity pages: an identifier the graph does not hold says "not in the graph" with a search by name', async (page) => {
  for (const [route, shown] of [['/entity/Disease::DOID:999999', 'DOID:999999 (disease)'], ['/entity/no%20such%20thing', 'no such thing']]) {
    await page.goto(base + route);
    const box = page.getByTestId('not-in-graph');
    await box.waitFor({ timeout: 15000 });
    const text = await box.textContent();
    assert(text.startsWith('Not in the graph') && text.includes(`“${shown}”`), `${route}: ${text}`);
    const body = await page.locator('main').textContent();
    assert(!/Type::identifier|unknown_node|HTTP 404/.test(body), `${route}: no developer text: ${body}`);
  }
  await page.screenshot({ path: path.join(shots, 'entity-not-in-graph.png') });
  // The search box finds the entity by name and opens its page.
  await page.getByTestId('not-in-graph').getByTestId('search-input').fill('asthma');
  await page.locator('[data-testid=suggestions] [role=option]').first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await page.waitForURL((u) => u.pathname.startsWith('/entity/Disease'), { timeout: 15000 });
  await page.getByTestId('entity-name').waitFor({ timeout: 15000 });
  // An address that is no page at all says so, with the way to an entity.
  await page.goto(base + '/disease/DOID:999999');
  const nf = page.getByTestId('page-not-found');
  await nf.waitFor({ timeout: 15000 });
  assert(await nf.getByRole('link', { name: 'search by name on Discover' }).isVisible(), 'a way back');
});

test('anonymous visitor: the main pages load without a console error or a failed request', async (page) => {
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`); });
  page.on('requestfailed', (r) => problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
  const pages = [
    ['/', 'starting-points'],
    ['/entity/Disease::DOID:2841', 'candidates'],
    ['/entity/Compound::DB00945', 'entity-name'],
    ['/leaderboard', 'csv'],
    ['/graph', 'node-count'],
    ['/data', 'attributions'],
    ['/shortlist', 'shortlist-empty'],
    ['/annotate', 'sign-in-prompt'],
  ];
  for (const [route, testid] of pages) {
    await page.goto(base + route);
    await page.getByTestId(testid).first().waitFor({ timeout: 60000 });
    // Late requests (the shortlist's session check, the leaderboard's charts) have their say.
    await page.waitForLoadState('networkidle');
  }
  assert(problems.length === 0, `console errors or failed requests: ${problems.join(' | ')}`);
});

test('leaderboard: tables, sorting, CSV export, charts and a question trace', async (page) => {
  await page.goto(base + '/leaderboard');
  const t2 = page.getByTestId('table2');
  await t2.waitFor({ timeout: 15000 });
  // The offline agent's T1 on the independent everyday-question set, with the grammar-oracle label on Table 2.
  const indep = page.getByTestId('t1-independent-table');
  await indep.waitFor({ timeout: 60000 });
  const allRow = indep.locator('tbody tr', { hasText: 'all questions' });
  const f1 = parseFloat(await allRow.locator('td').nth(2).textContent());
  assert(f1 > 50 && f1 <= 100, `independent T1 F1 ${f1}`);
  assert((await indep.locator('tbody tr', { hasText: 'pattern 4.3' }).count()) === 1, 'a row per pattern type');
  assert(/grammar oracle/.test(await t2.textContent()), 'the offline Table 2 row is labelled a grammar oracle');
  assert((await t2.locator('tbody[data-group=offline] tr[data-row]').count()) >= 2, 'two runs listed');
  // Offline rows (a grammar oracle) and the paper's published rows are never ranked.
  assert((await t2.locator('td.best, td.second').count()) === 0, 'no offline or paper value is marked best or second');
  assert((await t2.locator('tbody[data-group=paper] tr[data-row]').count()) === 13, "the paper's Table 2 rows");
  const expl = page.getByTestId('table3-exploration');
  const column = () => expl.locator('tbody[data-group=offline] tr[data-row]').evaluateAll((trs) => trs.map((tr) => parseFloat(tr.querySelectorAll('td')[2].textContent)));
  const sorted = (v, dir) => v.every((x, i) => i === 0 || (dir > 0 ? v[i - 1] <= x : v[i - 1] >= x));
  await expl.getByRole('button', { name: /SerenHit/ }).click();
  const desc = await column();
  assert(sorted(desc, -1), `descending after one click: ${desc}`);
  await expl.getByRole('button', { name: /SerenHit/ }).click();
  const asc = await column();
  assert(sorted(asc, 1), `ascending after two clicks: ${asc}`);
  assert((await expl.locator('th[aria-sort=ascending]').count()) === 1, 'aria-sort reflects the order');
  await page.getByRole('button', { name: 'RNS Guided' }).click();
  assert((await page.getByTestId('table3-reasoning').locator('caption').textContent()).includes('RNS Guided'), 'partition toggle');
  const href = await page.getByTestId('csv').getAttribute('href');
  const csv = decodeURIComponent(href.replace(/^data:text\/csv;charset=utf-8,/, ''));
  assert(csv.startsWith('table,row,group,') && csv.includes('table2,') && csv.includes('table3_exploration_sscore') && csv.includes(',paper,'), 'CSV export content');
  const dl = page.waitForEvent('download');
  await page.getByTestId('csv').click();
  const file = await dl;
  assert(file.suggestedFilename() === 'serenqa-leaderboard.csv', 'CSV download');
  assert((await page.locator('.chart svg polygon.series').count()) >= 2, 'compass polygons per run');
  assert((await page.getByTestId('heatmap').locator('td.heat').count()) >= 9, 'heatmap cells');
  // Figure 3: one lower-triangle matrix per T2/T3 metric (3 × 3, 6 cells drawn, 3 blank).
  const mats = page.locator('[data-testid^=correlation-]');
  assert((await mats.count()) === 6, `one correlation matrix per metric: ${await mats.count()}`);
  assert((await page.getByTestId('correlation-serenhit').locator('td.heat').count()) === 6, 'lower triangle of SerenHit');
  assert((await page.getByTestId('correlation-serenhit').locator('td.blank').count()) === 3, 'upper triangle blank');
  // Figure 7 with F1 and Hit; Figure 5 says offline runs declare no model size.
  assert((await page.getByTestId('fig7').locator('svg').count()) === 2, 'F1 and Hit by pattern');
  assert(await page.getByTestId('fig5-empty').isVisible(), 'model-scale figure explains why it is empty');
  await page.screenshot({ path: path.join(shots, 'leaderboard.png'), fullPage: true });
  // Each question of a run links to its own trace page.
  const link = page.getByTestId('traces').locator('.question-list a').first();
  const traceHref = await link.getAttribute('href');
  assert(/^\/runs\/[^/]+\/trace\/\d+$/.test(traceHref), `a question links to its trace page: ${traceHref}`);
  await link.click();
  await page.waitForURL((u) => u.pathname === traceHref, { timeout: 15000 });
  await page.getByTestId('trace-cypher').first().waitFor({ timeout: 15000 });
  assert(/MATCH/i.test(await page.getByTestId('trace-cypher').first().textContent()), 'trace shows the Cypher');
});

test('leaderboard statistics: settings labels, n and intervals, ties, – for an empty partition, a two-run comparison', async (page) => {
  await page.goto(base + '/leaderboard');
  const t2 = page.getByTestId('table2');
  await t2.waitFor({ timeout: 15000 });
  // Runs are labelled with their settings (scripts/test.sh makes two offline runs, beam 30 / nodes 10 and beam 10 / nodes 5).
  const labels = await t2.locator('tbody[data-group=offline] th[scope=row]').allTextContents();
  assert(labels.some((l) => l.includes('beam 10') && l.includes('nodes 5') && l.includes('limit 45')), `settings labels: ${labels}`);
  assert(labels.some((l) => l.includes('beam 30') && l.includes('nodes 10')), `settings labels: ${labels}`);
  assert(labels.every((l) => l.includes("grammar oracle (shares the generator's templates)")), `offline T1 rows are labelled oracles: ${labels}`);
  // Values with their 95% interval and n.
  const expl = page.getByTestId('table3-exploration');
  const cell = expl.locator('tbody[data-group=offline] tr[data-row]').first().locator('td').nth(2);
  assert(/^\[\d\.\d{3}, \d\.\d{3}\]$/.test(await cell.locator('.ci').textContent()), 'SerenHit shows its interval');
  assert(/^n=\d+$/.test(await cell.locator('.n').textContent()), 'SerenHit shows its n');
  const heads = await expl.locator('thead tr').last().locator('th').allTextContents();
  assert(heads.some((h) => h.startsWith('Relevance (proxy)')), `proxy judge column labelled: ${heads}`);
  assert(await expl.getByText('offline proxy (not an LLM)').isVisible(), 'proxy column group heading');
  // The offline benchmark's "LLM Ensemble" partition was scored by graph statistics: labelled so.
  assert(await page.getByRole('button', { name: 'LLM Ensemble (offline proxy)' }).isVisible(), 'offline ensemble chip labelled');
  assert((await expl.locator('caption').textContent()).includes('LLM Ensemble (offline proxy)'), 'offline ensemble caption labelled');
  // The benchmark has no expert rankings: every Expert cell is "–", none 0.000.
  await page.getByRole('button', { name: 'Expert Crowdsourced' }).click();
  for (const id of ['table3-reasoning', 'table3-exploration']) {
    const cells = await page.getByTestId(id).locator('tbody[data-group=offline] td').allTextContents();
    assert(cells.length >= 6 && cells.every((c) => c === '–'), `${id} expert cells: ${cells}`);
  }
  await page.getByTestId('table3-exploration').screenshot({ path: path.join(shots, 'leaderboard-expert-empty.png') });
  await page.getByRole('button', { name: 'LLM Ensemble' }).click();
  // Figure 3 shows the n behind each coefficient.
  const ns = await page.getByTestId('correlation-serenhit').getByTestId('corr-n').allTextContents();
  assert(ns.length === 6 && ns.includes('n=2') && ns.includes('n=0'), `Pearson n per cell: ${ns}`);
  // Two runs compared: Δ with a paired interval, and the questions each run wins.
  const cmp = page.getByTestId('compare');
  await cmp.getByTestId('compare-table').waitFor({ timeout: 20000 });
  const a = await cmp.getByTestId('compare-a').inputValue();
  const b = await cmp.getByTestId('compare-b').inputValue();
  assert(a && b && a !== b, `two different runs preselected: ${a} ${b}`);
  const hit = cmp.locator('tr[data-metric=seren_hit][data-column=llm][data-row=with]');
  const delta = await hit.getByTestId('delta').textContent();
  assert(/^[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]$/.test(delta), `SerenHit Δ with CI: ${delta}`);
  const wins = await hit.locator('td.qids').allTextContents();
  assert(wins.length === 2 && wins.some((w) => /Q\d+/.test(w)), `questions where one run wins: ${wins}`);
  const expert = cmp.locator('tr[data-metric=seren_hit][data-column=expert][data-row=with]');
  assert((await expert.getByTestId('delta').textContent()) === '–', 'no Δ for an empty partition');
  // One verdict line, corrected for the number of cells compared.
  const verdict = await cmp.getByTestId('compare-verdict').textContent();
  assert(/family-wise 5%/.test(verdict) && /Holm-corrected over \d+ cells/.test(verdict), `the verdict line: ${verdict}`);
  await cmp.screenshot({ path: path.join(shots, 'leaderboard-compare.png') });
  // A run against itself: Δ = 0 exactly.
  await cmp.getByTestId('compare-b').selectOption(a);
  await cmp.locator('tr[data-metric=seren_hit][data-column=llm][data-row=with] [data-testid=delta]').filter({ hasText: '+0.000 [+0.000, +0.000]' }).waitFor({ timeout: 20000 });
  await page.screenshot({ path: path.join(shots, 'leaderboard-stats.png'), fullPage: true });
});

test('leaderboard groups: only model rows are ranked (ties marked, n < 10 not ranked); offline agents and the paper\'s published figures sit apart, unranked', async (page) => {
  // Two model runs are added to the server's reply in the browser (no model runs here).
  const model = (run, name, scale) => {
    const r = JSON.parse(JSON.stringify(run));
    r.id = `model-${name}`;
    r.settings = { ...r.settings, id: r.id, label: name, roles: Object.fromEntries(Object.keys(r.settings.roles).map((k) => [k, name])), ensemble: 'llm' };
    r.manifest = { ...r.manifest, run_id: r.id, label: name, failed: 0, status: 'complete' };
    const a = r.aggregate;
    Object.assign(a, { label: name, judge: name, retrieval: name, ensemble: 'llm' });
    for (const [g, c] of Object.entries(a.table2)) {
      // F1 equal in both runs (a tie); Intersection with n = 4 (below the ranking minimum).
      Object.assign(c, { hit: 40 * scale, f1: 30, exe: 80 * scale, n: g === 'intersection' ? 4 : 12 });
    }
    for (const t of [a.table3_reasoning, a.table3_exploration, a.table3_exploration_wo_summary]) {
      for (const c of Object.values(t || {})) if (c.n > 0) c.n = Math.max(c.n, 12);
    }
    return r;
  };
  await page.route('**/api/runs', async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    body.runs.push(model(body.runs[0], 'ModelA', 1), model(body.runs[0], 'ModelB', 0.5));
    await route.fulfill({ response: res, json: body });
  });
  await page.goto(base + '/leaderboard');
  const t2 = page.getByTestId('table2');
  await t2.locator('tbody[data-group=models] tr[data-row]').first().waitFor({ timeout: 15000 });
  const groups = await t2.locator('tbody').evaluateAll((bs) => bs.map((b) => b.dataset.group));
  assert(JSON.stringify(groups) === '["models","offline","paper"]', `groups in order: ${groups}`);
  const row = (name) => t2.locator(`tbody[data-group=models] tr[data-row^="${name} "]`);
  const cls = async (name, col) => row(name).locator('td').nth(col).getAttribute('class');
  assert(/\bbest\b/.test(await cls('ModelA', 0)) && /\bsecond\b/.test(await cls('ModelB', 0)), 'One-Hop Hit: A best, B second');
  assert(/best tie/.test(await cls('ModelA', 1)) && /best tie/.test(await cls('ModelB', 1)), 'equal F1 is a tie for best');
  assert(!/best|second/.test(await cls('ModelA', 9)), 'Intersection (n = 4) is not ranked');
  assert((await row('ModelA').locator('td').nth(9).getAttribute('title')).includes('n < 10'), 'the cell says why');
  assert((await t2.locator('tbody[data-group=offline] td.best, tbody[data-group=offline] td.second').count()) === 0, 'the grammar oracle is not ranked against models');
  const paperRows = t2.locator('tbody[data-group=paper] tr[data-row]');
  assert((await paperRows.count()) === 13 && (await t2.locator('tbody[data-group=paper] td.best, tbody[data-group=paper] td.second').count()) === 0, 'paper rows, unranked');
  const ds = paperRows.filter({ hasText: 'DeepSeek-V3' });
  assert((await ds.locator('td').nth(1).textContent()).startsWith('78.71'), "the paper's DeepSeek-V3 One-Hop F1");
  assert((await t2.locator('tbody[data-group=paper] .group-note').textContent()).includes('Clinical Knowledge Graph'), 'the note says what differs');
  const expl = page.getByTestId('table3-exploration');
  assert((await expl.locator('tbody[data-group=paper] tr[data-row]').count()) === 18, "the paper's Table 3 exploration rows, with and without summary");
  assert((await expl.locator('tbody[data-group=offline] td.best, tbody[data-group=paper] td.best').count()) === 0, 'proxy-judged and paper rows unranked');
  assert((await expl.locator('tbody[data-group=models] td.best').count()) >= 1, 'model rows ranked in Table 3');
  // Every cell of every run in one tidy CSV: run, group, table, …, n, failed.
  const tidyHref = await page.getByTestId('tidy-csv').getAttribute('href');
  const tidy = decodeURIComponent(tidyHref.replace(/^data:text\/csv;charset=utf-8,/, '')).trim().split('\n');
  assert(tidy[0] === 'run,group,table,model,row,column,metric,value,ci_lo,ci_hi,n,failed', `tidy header: ${tidy[0]}`);
  assert(tidy.some((l) => l.startsWith('model-ModelA,model,table2,')) && tidy.some((l) => /^offline-[^,]+,offline,table2,/.test(l)), 'model and offline lines');
  assert(tidy.slice(1).every((l) => l.split(',').length >= 12), 'every line has every column');
  // A comparison can be linked: the address picks its two runs.
  // (The server compares only the runs it holds: the two offline ones, in reverse order.)
  const offline = [...new Set(tidy.slice(1).map((l) => l.split(',')[0]).filter((id) => id.startsWith('offline-')))];
  assert(offline.length === 2, `two offline runs: ${offline}`);
  await page.goto(base + `/leaderboard?a=${offline[1]}&b=${offline[0]}#compare`);
  const cmp = page.getByTestId('compare');
  await cmp.getByTestId('compare-table').waitFor({ timeout: 20000 });
  assert((await cmp.getByTestId('compare-a').inputValue()) === offline[1] && (await cmp.getByTestId('compare-b').inputValue()) === offline[0], 'the linked comparison');
  assert((await cmp.getByTestId('compare-link').getAttribute('href')).includes(`a=${offline[1]}&b=${offline[0]}`), 'the link to it');
  await cmp.getByTestId('compare-b').selectOption(offline[1]);
  assert(new URL(page.url()).searchParams.get('b') === offline[1], 'the address follows the choice');
  await page.setViewportSize({ width: 1280, height: 900 });
  // The heatmap never puts an LLM judge's score and a proxy's in one column.
  const heads = await page.getByTestId('heatmap').locator('thead th').allTextContents();
  assert(heads.includes('Relevance') && heads.includes('Relevance (proxy)') && heads.includes('Faithful. (proxy)'), `heatmap judge columns split: ${heads}`);
  await t2.screenshot({ path: path.join(shots, 'leaderboard-groups.png') });
  // At 390 px the model column stays in view while the table scrolls sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  const scroller = t2.locator('xpath=..');
  await scroller.evaluate((el) => { el.scrollLeft = 400; });
  const th = await row('ModelA').locator('th').boundingBox();
  const box = await scroller.boundingBox();
  assert(Math.abs(th.x - box.x) < 2, `the model column is sticky: ${th.x} vs ${box.x}`);
  await page.screenshot({ path: path.join(shots, 'leaderboard-groups-390.png') });
});

test('run page: a leaderboard row opens its run — models, settings, costs, code version with its commit, no server path; at 390 px', async (page) => {
  await page.goto(base + '/leaderboard');
  const t2 = page.getByTestId('table2');
  await t2.locator('tbody[data-group=offline] tr[data-row] th a').first().waitFor({ timeout: 15000 });
  const href = await t2.locator('tbody[data-group=offline] tr[data-row] th a').first().getAttribute('href');
  assert(/^\/runs\/offline-[0-9a-f]+$/.test(href), `a row links to its run: ${href}`);
  await t2.locator('tbody[data-group=offline] tr[data-row] th a').first().click();
  await page.waitForURL((u) => u.pathname === href, { timeout: 15000 });
  const run = page.getByTestId('run-page');
  await run.waitFor({ timeout: 15000 });
  const text = await run.textContent();
  for (const want of ['Status: complete', 'Prompts hash', 'Model calls', 'Duration', 'beam ', 'Questions']) assert(text.includes(want), `run page says ${want}`);
  assert(/serenqa-pipeline [\d.]+ \(git [0-9a-f]{7,}\)/.test(text), `the code version names its commit: ${text.match(/serenqa-pipeline[^·]*/)}`);
  assert(!/\/root\/|\/home\/|\/tmp\//.test(text), 'no server path on the page');
  const tidy = await page.getByTestId('run-tidy-csv').getAttribute('href');
  assert(decodeURIComponent(tidy).includes('run,group,table,model,row,column,metric,value,ci_lo,ci_hi,n,failed'), "the run's tidy CSV");
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert(overflow <= 0, `the run page fits at 390 px (overflow ${overflow})`);
  await page.screenshot({ path: path.join(shots, 'run-page-390.png'), fullPage: true });
  await page.goto(base + '/runs/no-such-run');
  await page.getByTestId('run-missing').waitFor({ timeout: 15000 });
});

test('data page shows attributions and non-commercial licenses', async (page) => {
  await page.goto(base + '/data');
  const table = page.getByTestId('attributions');
  await table.waitFor({ timeout: 15000 });
  const text = await table.textContent();
  for (const needle of ['Hetionet', 'CC0 1.0', 'SIDER', 'CC BY-NC-SA 4.0', 'DrugBank', 'CC BY-NC 4.0', 'DisGeNET', 'ODbL']) {
    assert(text.includes(needle), `attributions mention ${needle}`);
  }
  assert((await page.locator('.tag-nc').count()) >= 2, 'non-commercial parts are marked');
  await page.screenshot({ path: path.join(shots, 'data-licenses.png'), fullPage: true });
});

// What sticks out past the right edge, outside any sideways-scrolling box: for a useful failure.
async function overflowAt(page) {
  return page.evaluate(() => {
    const culprits = [];
    for (const el of document.querySelectorAll('body *')) {
      const b = el.getBoundingClientRect();
      // Either the box itself sticks out, or its text spills out of it.
      const spills = el.children.length === 0 && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible';
      if (b.width === 0 || (b.right <= window.innerWidth + 0.5 && !spills)) continue;
      let clipped = false;
      for (let a = el.parentElement; a && !clipped; a = a.parentElement) {
        clipped = ['auto', 'scroll', 'hidden'].includes(getComputedStyle(a).overflowX);
      }
      if (!clipped) culprits.push(`${el.tagName.toLowerCase()}${el.className ? '.' + el.className : ''} "${(el.textContent || '').trim().slice(0, 40)}"`);
    }
    return { px: document.documentElement.scrollWidth - window.innerWidth, culprits: culprits.slice(-3) };
  });
}

test('candidates at 390 px: one card per candidate with name, plausibility, percentile, R, N, S, RNS and a whole "why?" button', async (page) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/entity/Disease::DOID:2841');
  await page.locator('[data-testid=candidates] tbody tr').first().waitFor({ timeout: 60000 });
  const r = await page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const trs = [...document.querySelectorAll('[data-testid=candidates] tbody tr')];
    const bad = [];
    const inside = (b, c) => b.left >= c.left - 0.5 && b.right <= c.right + 0.5;
    for (const tr of trs.slice(0, 40)) {
      const card = tr.getBoundingClientRect();
      const who = tr.dataset.candidate;
      if (card.left < -0.5 || card.right > vw + 0.5) bad.push(`${who}: card ${card.left.toFixed(0)}–${card.right.toFixed(0)} of ${vw}`);
      const name = tr.querySelector('td.col-name a');
      if (!name || !inside(name.getBoundingClientRect(), card) || name.getBoundingClientRect().width < 1) bad.push(`${who}: name`);
      for (const id of ['plausibility', 'percentile', 'rns', 'r', 'n', 's']) {
        const td = tr.querySelector(`[data-testid=${id}]`);
        const b = td?.getBoundingClientRect();
        if (!td || getComputedStyle(td).display === 'none' || b.width < 1 || b.height < 1) { bad.push(`${who}: ${id} hidden`); continue; }
        if (!inside(b, card)) bad.push(`${who}: ${id} outside its card`);
        if (td.scrollWidth > td.clientWidth + 1) bad.push(`${who}: ${id} cut`);
      }
      const why = [...tr.querySelectorAll('button')].find((x) => x.textContent.trim() === 'why?');
      if (!why) { bad.push(`${who}: no "why?"`); continue; }
      const wb = why.getBoundingClientRect();
      if (wb.width < 44 || wb.height < 30 || why.scrollWidth > why.clientWidth + 1 || !inside(wb, card)) bad.push(`${who}: "why?" ${wb.width.toFixed(0)}×${wb.height.toFixed(0)}`);
    }
    const first = trs[0].getBoundingClientRect(), second = trs[1].getBoundingClientRect();
    return { bad, n: trs.length, display: getComputedStyle(trs[0]).display, stacked: second.top >= first.bottom - 0.5, head: getComputedStyle(document.querySelector('[data-testid=candidates] thead')).display, sortMenu: getComputedStyle(document.querySelector('[data-testid=sort-select]')).display };
  });
  assert(r.display === 'grid' && r.stacked && r.head === 'none', `rows are stacked cards: ${JSON.stringify(r).slice(0, 200)}`);
  assert(r.bad.length === 0, `cards at 390 px: ${r.bad.slice(0, 5).join('; ')}`);
  assert(r.sortMenu !== 'none', 'a sort menu replaces the column headers');
  const o = await overflowAt(page);
  assert(o.px <= 1, `the entity page overflows by ${o.px}px at 390 px: ${o.culprits.join('; ')}`);
  // Sorting from the menu works on a phone.
  await page.getByTestId('sort-select').selectOption('n');
  await page.waitForFunction(() => document.querySelector('[data-testid=candidates] th[aria-sort=descending]')?.textContent.includes('N'), null, { timeout: 5000 });
  await page.getByTestId('candidates').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'candidates-cards-390.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  // On a wide screen it is a table again, names on one line.
  const wide = await page.evaluate(() => {
    const tr = document.querySelector('[data-testid=candidates] tbody tr');
    const wrap = document.querySelector('[data-testid=candidates]').parentElement;
    const why = tr.querySelector('button.why').getBoundingClientRect();
    return { display: getComputedStyle(tr).display, head: getComputedStyle(document.querySelector('[data-testid=candidates] thead')).display, name: tr.querySelector('td.col-name a').getBoundingClientRect().height, sideways: wrap.scrollWidth - wrap.clientWidth, whyRight: why.right, right: wrap.getBoundingClientRect().right };
  });
  assert(wide.display === 'table-row' && wide.head !== 'none' && wide.name < 30, `a table at 1280 px: ${JSON.stringify(wide)}`);
  assert(wide.sideways <= 1 && wide.whyRight <= wide.right, `the table fits at 1280 px, "why?" in view: ${JSON.stringify(wide)}`);
  await page.getByTestId('candidates').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'candidates-table-1280.png') });
});

test('narrow screen (390 px): overview, every main page and an Ask result fit without sideways scrolling', async (page) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + '/graph');
  await page.getByTestId('node-count').waitFor({ timeout: 15000 });
  // The data source is a file path; on a fresh machine it can be one long unbreakable word.
  await page.getByTestId('graph-source').evaluate((el) => {
    el.textContent = 'Hetionet files hetionet-nodes.tsv.gz and hetionet-edges.sif.gz in ' +
      '/a/very/deep/checkout/directory/of/the/continuous/integration/machine/shared/data/hetionet';
  });
  let o = await overflowAt(page);
  assert(o.px <= 1, `/graph overflows horizontally by ${o.px}px at 390px: ${o.culprits.join('; ')}`);
  await page.screenshot({ path: path.join(shots, 'overview-390.png'), fullPage: true });
  const pages = [
    ['/', 'search-input'],
    ['/entity/Disease::DOID:1612', 'candidates'],
    ['/leaderboard', 'csv'],
    ['/data', 'attributions'],
  ];
  for (const [route, testid] of pages) {
    await page.goto(base + route);
    await page.getByTestId(testid).first().waitFor({ timeout: 15000 });
    await page.waitForTimeout(300);
    o = await overflowAt(page);
    assert(o.px <= 1, `${route} overflows horizontally by ${o.px}px at 390px: ${o.culprits.join('; ')}`);
  }
  // An Ask result (Cypher, answers, candidate table, summaries) on a phone.
  await page.goto(base + '/');
  await page.getByTestId('ask-input').fill('Which compounds treat asthma?');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page.getByTestId('ask-result').waitFor({ timeout: 60000 });
  o = await overflowAt(page);
  assert(o.px <= 1, `an Ask result overflows horizontally by ${o.px}px at 390px: ${o.culprits.join('; ')}`);
});

test('API errors are JSON with a code', async (page) => {
  const resp = await page.request.get(base + '/api/search?q=');
  assert(resp.status() === 400, `status ${resp.status()}`);
  const body = await resp.json();
  assert(body.code === 'empty_query' && body.message, JSON.stringify(body));
  const iso = await page.request.get(base + '/');
  assert(iso.headers()['cross-origin-opener-policy'] === 'same-origin', 'COOP header');
  assert(iso.headers()['cross-origin-embedder-policy'] === 'require-corp', 'COEP header');
  const csp = iso.headers()['content-security-policy'] || '';
  assert(/script-src 'self' 'wasm-unsafe-eval' 'sha256-/.test(csp) && csp.includes("frame-ancestors 'none'"), `CSP header: ${csp}`);
  assert(iso.headers()['x-content-type-options'] === 'nosniff', 'nosniff header');
});

// A question of a run whose trace has both a retrieval and an exploration with a beam tree
// (the first such question of the first run), and the trace as the API serves it.
async function traceFixture(page) {
  const runs = (await (await page.request.get(base + '/api/runs')).json()).runs.filter((r) => r.aggregate);
  assert(runs.length >= 2, `two runs to trace: ${runs.length}`);
  const run = runs[0].id;
  const qs = await (await page.request.get(`${base}/api/runs/${encodeURIComponent(run)}/questions`)).json();
  for (const q of qs) {
    const t = await (await page.request.get(`${base}/api/runs/${encodeURIComponent(run)}/trace/${q.qid}`)).json();
    if (t.retrieval && t.retrieval.cypher && t.explorations.length && t.explorations[0].tree.length >= 3) return { runs, run, qid: q.qid, t };
  }
  throw new Error(`no question of run ${run} has a retrieval and an explored tree`);
}

test('trace: a deep link opens that question\'s trace — question, Cypher, predicted vs gold with hits, metrics, the beam tree, summaries', async (page) => {
  const { run, qid, t } = await traceFixture(page);
  // A fresh page opened at the address directly (no leaderboard visit first).
  const url = `${base}/runs/${encodeURIComponent(run)}/trace/${qid}`;
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    const fresh = await page.context().newPage();
    await fresh.setViewportSize({ width: w, height: h });
    await fresh.goto(url);
    const q = fresh.getByTestId('trace-question');
    await q.waitFor({ timeout: 20000 });
    assert((await q.textContent()) === t.question, `the trace's question: ${await q.textContent()}`);
    const col = fresh.getByTestId('trace-a');
    await col.getByTestId('trace-cypher').waitFor({ timeout: 20000 });
    assert((await col.getByTestId('trace-cypher').textContent()) === t.retrieval.cypher, 'the Cypher as the run wrote it');
    // Predicted vs gold, hits marked as the API marks them; names, not raw ids.
    const ret = col.getByTestId('trace-retrieval');
    const ticks = async (id) => ret.getByTestId(id).locator('li.hit').count();
    const shownHits = (list) => list.filter((e) => e.hit).length;
    assert(await ticks('trace-predicted') === shownHits(t.retrieval.predicted), `predicted hits: ${await ticks('trace-predicted')}`);
    assert(await ticks('trace-gold') === shownHits(t.retrieval.gold), `gold hits: ${await ticks('trace-gold')}`);
    const named = t.retrieval.gold.find((e) => e.name);
    if (named) assert((await ret.getByTestId('trace-gold').textContent()).includes(named.name), `gold answers by name (${named.name})`);
    // Every metric of the question, with its value.
    const metrics = await ret.getByTestId('trace-metrics').locator('li').evaluateAll((lis) => lis.map((li) => li.dataset.metric));
    assert(metrics.join(',') === 'hit,f1,exe', `T1 metrics: ${metrics}`);
    const ex = col.getByTestId('trace-exploration');
    const exMetrics = await ex.getByTestId('trace-metrics').locator('li').count();
    assert(exMetrics === t.explorations[0].metrics.length && exMetrics >= 3, `exploration metrics: ${exMetrics}`);
    // The beam's paths as a tree: as many rows as the API's tree, children deeper than roots.
    const rows = ex.getByTestId('trace-tree').locator('li');
    assert((await rows.count()) === t.explorations[0].tree.length, `tree rows: ${await rows.count()} vs ${t.explorations[0].tree.length}`);
    const depths = await rows.evaluateAll((lis) => lis.map((li) => Number(li.dataset.depth)));
    assert(depths[0] === 0 && Math.max(...depths) >= 1, `tree depths ${depths.slice(0, 10)}`);
    const indent = await rows.evaluateAll((lis) => { const d = lis.find((li) => li.dataset.depth === '1'); return d ? parseFloat(getComputedStyle(d).paddingLeft) - parseFloat(getComputedStyle(lis[0]).paddingLeft) : 0; });
    assert(indent > 8, `a child is indented under its parent (${indent}px)`);
    assert((await ex.textContent()).includes('Summaries'), 'summaries section');
    // The raw keys are gone from what a person reads (only the data-key attribute keeps them).
    assert(!/t3:\d+:/.test(await col.textContent()), 'no raw trace keys in the text');
    const o = await overflowAt(fresh);
    assert(o.px <= 1, `the trace page overflows by ${o.px}px at ${w}px: ${o.culprits.join('; ')}`);
    await fresh.screenshot({ path: path.join(shots, `trace-${w}.png`), fullPage: true });
    await fresh.close();
  }
  // Stepping to the next question keeps the address in step.
  if (t.next_qid != null) {
    await page.goto(url);
    await page.getByTestId('trace-next').click();
    await page.waitForURL((u) => u.pathname.endsWith(`/trace/${t.next_qid}`), { timeout: 15000 });
    await page.getByTestId('trace-question').waitFor({ timeout: 15000 });
  }
  // A bad run id or question: a readable error on the page, a JSON 4xx with a code from the API.
  await page.goto(`${base}/runs/no-such-run/trace/${qid}`);
  await page.getByTestId('trace-error').waitFor({ timeout: 15000 });
  for (const [u, status, code] of [[`/api/runs/no-such-run/trace/${qid}`, 404, 'no_run'], [`/api/runs/${encodeURIComponent(run)}/trace/t3:${qid}:llm:with`, 400, 'bad_qid'], [`/api/runs/${encodeURIComponent(run)}/trace/999999`, 404, 'no_question']]) {
    const r = await page.request.get(base + u);
    const body = await r.json();
    assert(r.status() === status && body.code === code, `${u}: ${r.status()} ${JSON.stringify(body)}`);
  }
});

test('trace: each model call\'s prompt and reply, folded; a failed call says its kind and the endpoint host only; failed items are said, not scored', async (page) => {
  const { run, qid } = await traceFixture(page);
  // The e2e runs are offline (no model calls): the served trace is given two recorded calls,
  // as a model run writes them, to check how the page shows them.
  const calls = [
    { role: 'retrieval', model: 'llama-3-8b', prompt: [{ role: 'system', content: 'Write one Cypher query.' }, { role: 'user', content: 'Which drugs treat asthma?' }], reply: 'MATCH (c:Compound)-[:TREATS_CtD]->(d:Disease {name: "asthma"}) RETURN c', error_kind: null, error: null, latency_ms: 812, cached: false, issues: [] },
    { role: 'judge', model: 'llama-3-8b', prompt: [{ role: 'user', content: 'Score 1-5.' }], reply: null, error_kind: 'connect', error: 'error sending request for url (10.0.0.7:8000): Connection refused', latency_ms: 3, cached: false, issues: [] },
  ];
  await page.route(`**/api/runs/*/trace/${qid}`, async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    if (body.retrieval) body.retrieval.model_calls = calls.slice(0, 1);
    for (const e of body.explorations || []) e.model_calls = calls;
    body.failed = [{ key: `t3:${qid}:expert:without`, cell: 'Expert · without summaries', error_kind: 'timeout', error: 'no reply from 10.0.0.7:8000 within 30 s', role: 'judge', failed_calls: 1, calls: 4 }];
    await route.fulfill({ response: res, json: body });
  });
  for (const w of [1280, 390]) {
    await page.setViewportSize({ width: w, height: 900 });
    await page.goto(`${base}/runs/${encodeURIComponent(run)}/trace/${qid}`);
    // A failed item is said, not scored.
    const failedItems = page.getByTestId('trace-a').getByTestId('trace-failed');
    await failedItems.waitFor({ timeout: 20000 });
    const ft = await failedItems.textContent();
    assert(/Not scored: 1 failed item/.test(ft) && /Expert · without summaries/.test(ft) && /1 of 4 model calls failed \(timeout\)/.test(ft), `the failed item: ${ft}`);
    const ret = page.getByTestId('trace-a').getByTestId('trace-retrieval');
    const folded = ret.getByTestId('trace-calls');
    await folded.waitFor({ timeout: 20000 });
    assert(!(await folded.evaluate((d) => d.open)), 'the calls are folded at first');
    assert(/Model calls: prompts and replies \(1\)/.test(await folded.locator('summary').first().textContent()), 'the count of calls');
    await folded.locator('summary').first().click();
    const call = folded.getByTestId('trace-call').first();
    assert(/retrieval · llama-3-8b · 812 ms/.test(await call.locator('summary').textContent()), `one line per call: ${await call.locator('summary').textContent()}`);
    await call.locator('summary').click();
    assert((await call.getByTestId('trace-call-reply').textContent()).startsWith('MATCH (c:Compound)'), 'the reply as received');
    assert((await call.textContent()).includes('Write one Cypher query.'), 'the prompt as sent');
    const ex = page.getByTestId('trace-a').getByTestId('trace-exploration').first();
    const exCalls = ex.getByTestId('trace-calls');
    await exCalls.locator('summary').first().click();
    const failed = exCalls.getByTestId('trace-call').nth(1);
    assert(/failed \(connect\)/.test(await failed.locator('summary').textContent()), 'a failed call says its kind');
    await failed.locator('summary').click();
    const err = await failed.getByTestId('trace-call-error').textContent();
    assert(err.includes('10.0.0.7:8000') && !err.includes('http'), `the error names the host only: ${err}`);
    const o = await overflowAt(page);
    assert(o.px <= 1, `the opened calls overflow by ${o.px}px at ${w}px: ${o.culprits.join('; ')}`);
    await page.screenshot({ path: path.join(shots, `trace-calls-${w}.png`), fullPage: true });
  }
});

test('trace: another run beside it on the same question (side by side at 1280 px, stacked at 390 px)', async (page) => {
  const { runs, run, qid } = await traceFixture(page);
  const other = runs[1].id;
  await page.goto(`${base}/runs/${encodeURIComponent(run)}/trace/${qid}`);
  await page.getByTestId('trace-a').getByTestId('trace-cypher').waitFor({ timeout: 20000 });
  const pick = page.getByTestId('trace-vs');
  await pick.locator(`option[value="${other}"]`).waitFor({ state: 'attached', timeout: 15000 });
  await pick.selectOption(other);
  await page.waitForURL((u) => u.searchParams.get('vs') === other, { timeout: 15000 });
  const a = page.getByTestId('trace-a');
  const b = page.getByTestId('trace-b');
  await b.getByTestId('trace-cypher').waitFor({ timeout: 20000 });
  const tagA = await a.locator('.run-tag').textContent();
  const tagB = await b.locator('.run-tag').textContent();
  assert(tagA !== tagB && tagA.startsWith('A') && tagB.startsWith('B'), `two runs labelled: ${tagA} | ${tagB}`);
  assert((await a.getByTestId('trace-question').count()) === 0 && (await page.getByTestId('trace-question').count()) === 1, 'one question heading for both');
  // Choosing an exploration in one column shows the same one in the other.
  const chipsB = b.locator('.chips .chip');
  if ((await chipsB.count()) >= 2) {
    await chipsB.nth(1).click();
    const keyA = (await a.getByTestId('trace-exploration').getAttribute('data-key')).split(':').slice(2).join(':');
    const keyB = (await b.getByTestId('trace-exploration').getAttribute('data-key')).split(':').slice(2).join(':');
    assert(keyA === keyB, `both columns show the same partition and mode: ${keyA} vs ${keyB}`);
  }
  let ba = await a.boundingBox(), bb = await b.boundingBox();
  assert(bb.x > ba.x + ba.width - 1 && Math.abs(bb.y - ba.y) < 2, `side by side at 1280: ${JSON.stringify([ba, bb])}`);
  await page.screenshot({ path: path.join(shots, 'trace-compare-1280.png'), fullPage: true });
  // The direct address reproduces the pair on a phone, stacked.
  const phone = await page.context().newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(page.url());
  await phone.getByTestId('trace-b').getByTestId('trace-cypher').waitFor({ timeout: 20000 });
  ba = await phone.getByTestId('trace-a').boundingBox();
  bb = await phone.getByTestId('trace-b').boundingBox();
  assert(bb.y >= ba.y + ba.height - 1 && Math.abs(bb.x - ba.x) < 2, `stacked at 390: ${JSON.stringify([ba, bb])}`);
  const o = await overflowAt(phone);
  assert(o.px <= 1, `the pair overflows by ${o.px}px at 390px: ${o.culprits.join('; ')}`);
  await phone.screenshot({ path: path.join(shots, 'trace-compare-390.png'), fullPage: true });
  await phone.close();
  // The comparison table's winning questions link to the pair.
  await page.goto(base + '/leaderboard');
  const win = page.getByTestId('compare').locator('td.qids a').first();
  await win.waitFor({ timeout: 30000 });
  assert(/\/runs\/[^/]+\/trace\/\d+\?vs=/.test(await win.getAttribute('href')), `compare links to a pair: ${await win.getAttribute('href')}`);
});

test('leaderboard charts: the heatmap has one colour scale with a legend; compass labels are ≥ 12 px and do not overlap', async (page) => {
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(base + '/leaderboard');
    const heat = page.getByTestId('heatmap');
    await heat.waitFor({ timeout: 20000 });
    const legend = page.getByTestId('heatmap-legend');
    assert(await legend.isVisible(), 'a heatmap legend');
    assert(/One colour scale for every cell/.test(await legend.textContent()), 'the legend says the scale is shared');
    // One scale: every cell's colour is the same function of its value, across columns.
    const cells = await heat.locator('td.heat:not(.empty)').evaluateAll((tds) => tds.map((td) => ({ v: parseFloat(td.textContent), a: parseFloat((getComputedStyle(td).backgroundColor.match(/rgba?\(([^)]+)\)/) || [, '0,0,0,1'])[1].split(',')[3] ?? '1') })));
    assert(cells.length >= 9, `heatmap cells: ${cells.length}`);
    const off = cells.filter((c) => Math.abs(c.a - (0.08 + 0.82 * Math.min(1, Math.max(0, c.v)))) > 0.02);
    assert(off.length === 0, `cells off the shared scale: ${JSON.stringify(off.slice(0, 3))}`);
    // Compass axis labels: rendered size and overlap.
    const labels = await page.getByTestId('compass').evaluate((fig) => {
      const svg = fig.querySelector('svg');
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text.compass-label')].map((t) => { const r = t.getBoundingClientRect(); return { text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, l: r.left, r: r.right, t: r.top, b: r.bottom }; });
    });
    assert(labels.length === 9, `compass labels: ${labels.length}`);
    const small = labels.filter((l) => l.px < 12);
    assert(small.length === 0, `labels under 12 px at ${w}: ${small.map((l) => `${l.text} ${l.px.toFixed(1)}`)}`);
    const overlaps = [];
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      const [x, y] = [labels[i], labels[j]];
      if (x.l < y.r && y.l < x.r && x.t < y.b && y.t < x.b) overlaps.push(`${x.text}/${y.text}`);
    }
    assert(overlaps.length === 0, `overlapping compass labels at ${w}: ${overlaps}`);
    console.log(`     ${w} px: compass labels ${Math.min(...labels.map((l) => l.px)).toFixed(1)}–${Math.max(...labels.map((l) => l.px)).toFixed(1)} px, no overlap; ${cells.length} heatmap cells on one scale`);
    await page.getByTestId('compass').screenshot({ path: path.join(shots, `compass-${w}.png`) });
    await heat.locator('xpath=ancestor::section[1]').screenshot({ path: path.join(shots, `heatmap-${w}.png`) });
  }
});

test('first load under Fast 3G: the shell paints from the HTML alone (no render-blocking request) with a search form that works before the app, compressed assets, timings printed', async (page) => {
  // The shell's form works with no WebAssembly at all (JavaScript off): a name goes to its
  // entity page, a question to Ask.
  const nojs = await page.context().browser().newContext({ javaScriptEnabled: false });
  const np = await nojs.newPage();
  for (const [w, h] of [[390, 844], [1280, 900]]) {
    await np.setViewportSize({ width: w, height: h });
    await np.goto(base + '/');
    await np.getByTestId('boot-search').waitFor();
    await np.screenshot({ path: path.join(shots, `boot-shell-${w}.png`) });
  }
  await np.getByTestId('boot-search').fill('asthma');
  await np.getByTestId('boot-search').press('Enter');
  await np.waitForURL((u) => u.pathname === '/entity/Disease::DOID:2841', { timeout: 15000 });
  await np.goto(base + '/');
  await np.getByTestId('boot-search').fill('Which drugs treat asthma?');
  await np.getByTestId('boot-search').press('Enter');
  await np.waitForURL((u) => u.pathname === '/' && u.searchParams.get('q') === 'Which drugs treat asthma?', { timeout: 15000 });
  await nojs.close();

  // What makes the first paint fast is checked exactly: the shell paints from the HTML alone
  // (no render-blocking stylesheet or script), the bundle is sent compressed, and the shell's
  // form takes typing before the app arrives. The timings are printed; as goals they are a
  // bench, not a test (a cold load on a busy 2-core CI machine varies by ±100 ms):
  //   E2E_ONLY='first load' E2E_LOADS=7 E2E_SPEED_GOALS=1 node tests/e2e/run.mjs URL
  const loads = Math.max(1, Number(process.env.E2E_LOADS || 3));
  const runs = [];
  for (let i = 0; i < loads; i++) {
    const p = await page.context().newPage();
    const cdp = await p.context().newCDPSession(p);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    // Chromium DevTools' "Fast 3G" preset: 1.44 Mbit/s down, 675 kbit/s up (× 0.9), 562.5 ms latency.
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 562.5, downloadThroughput: (1.44 * 1000 * 1000 / 8) * 0.9, uploadThroughput: (675 * 1000 / 8) * 0.9 });
    const encodings = {};
    p.on('response', (r) => { if (/\.(wasm|js)$/.test(new URL(r.url()).pathname)) encodings[new URL(r.url()).pathname.split('.').pop()] = r.headers()['content-encoding'] || 'identity'; });
    await p.goto(base + '/', { waitUntil: 'commit' });
    // Usable: the search form is painted (first contentful paint has happened) and takes typing.
    const box = p.getByTestId('boot-search');
    await box.waitFor({ state: 'visible', timeout: 60000 });
    await p.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, null, { timeout: 60000, polling: 20 });
    await box.fill('asth');
    const usable = await p.evaluate(() => performance.now());
    const shellOnly = await p.evaluate(() => !document.querySelector('[data-testid=search-input]'));
    // The app arrives and carries what was typed into its own search box (with suggestions).
    await p.getByTestId('search-input').waitFor({ timeout: 60000 });
    const app = await p.evaluate(() => performance.now());
    const carried = await p.getByTestId('search-input').inputValue();
    const fcp = await p.evaluate(() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || NaN);
    const blocking = await p.evaluate(() => performance.getEntriesByType('resource')
      .filter((e) => e.renderBlockingStatus === 'blocking').map((e) => new URL(e.name).pathname));
    const stylesheets = await p.evaluate(() => [...document.querySelectorAll('link[rel=stylesheet]')].map((l) => l.getAttribute('href')));
    assert(blocking.length === 0, `the first paint waits for no other request, but these blocked it: ${blocking.join(', ')}`);
    assert(stylesheets.length === 0, `the styles come inline with the HTML, not as ${stylesheets.join(', ')}`);
    assert(shellOnly, 'the shell took typing before the app had started');
    assert(carried === 'asth', `the app keeps what was typed in the shell: "${carried}"`);
    assert(encodings.wasm === 'br' || encodings.wasm === 'gzip', `the wasm bundle was sent ${encodings.wasm}`);
    assert(encodings.js === 'br' || encodings.js === 'gzip', `the JavaScript glue was sent ${encodings.js}`);
    assert(fcp < app, `the shell painted (${fcp} ms) before the app started (${app} ms)`);
    runs.push({ fcp, usable, app });
    console.log(`     Fast 3G load ${i + 1}: first contentful paint ${fcp.toFixed(0)} ms, search form usable ${usable.toFixed(0)} ms, app search with suggestions ${app.toFixed(0)} ms; wasm ${encodings.wasm}, js ${encodings.js}`);
    await p.close();
  }
  const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const fcp = median('fcp'), usable = median('usable'), app = median('app');
  console.log(`     Fast 3G medians of ${runs.length} loads: first contentful paint ${fcp.toFixed(0)} ms (goal ≤ 1500), search usable ${usable.toFixed(0)} ms (goal ≤ 4000), app ${app.toFixed(0)} ms (goal ≤ 8000)`);
  if (process.env.E2E_SPEED_GOALS) {
    assert(fcp <= 1500, `median first contentful paint ${fcp} ms under Fast 3G (goal ≤ 1500)`);
    assert(usable <= 4000, `median search usable after ${usable} ms under Fast 3G (goal ≤ 4000)`);
    assert(app <= 8000, `median: the app itself after ${app} ms under Fast 3G (goal ≤ 8000)`);
  }
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let passed = 0, failed = 0;
for (const t of tests) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Any Content-Security-Policy violation fails the test (the server's CSP must let the
  // whole app run: WebAssembly, Trunk's inline start-up script, styles, fetches, streams).
  await context.addInitScript(() => document.addEventListener('securitypolicyviolation',
    (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`)));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (/Content Security Policy|CSP violation/.test(m.text())) errors.push(m.text());
  });
  const started = Date.now();
  try {
    await t.fn(page);
    if (errors.length) throw new Error('page errors: ' + errors.join('; '));
    passed++;
    console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${t.name}: ${e.message.split('\n')[0]}`);
    await page.screenshot({ path: path.join(shots, 'failed-' + t.name.replace(/\W+/g, '-') + '.png') }).catch(() => {});
  }
  await context.close();
}
await browser.close();
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
