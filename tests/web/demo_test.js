#!/usr/bin/env node
// Browser test of the demo (tools/web-demo, issue 18): Debian's chromium, headless, driven by
// puppeteer-core. Usage: node demo_test.js URL [SCREENSHOT.png]. Checks: the page loads with no
// console errors; holding W for 3 s moves the character at least 2 m; holding Q (strafe) and D
// for 3 s moves it sideways at least 1 m with the facing within 20 degrees of the held one; the
// page reports its frame time and the update cost; a screenshot has the skeleton's pixels where
// the character's joints project (and not 150 px beside them). Prints one line per check; exits non-zero on a failure.
'use strict';
const puppeteer = require('puppeteer-core');

const url = process.argv[2];
const screenshot = process.argv[3];
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
}

// Pauses the demo, takes a screenshot and counts the joints whose projection (through the page's
// own view-projection matrix) has a skeleton-coloured pixel within 2 px, and, as a control, the
// points 150 px to their right that have one.
async function skeletonPixels(page) {
  await page.evaluate(() => { window.lmmDemo.paused = true; });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const view = await page.evaluate(() => ({ joints: window.lmmDemo.joints, mvp: window.lmmDemo.mvp,
                                            width: innerWidth, height: innerHeight }));
  const png = await page.screenshot({ encoding: 'base64' });
  const counts = await page.evaluate(async (png, view) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + png;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const scale = image.width / view.width;
    const bone = (x, y) => {  // the bones' colour (0.85, 0.9, 1.0), antialiased edges included
      if (x < 0 || y < 0 || x >= canvas.width || y >= canvas.height) return false;
      const i = 4 * (y * canvas.width + x);
      return data[i + 2] > 150 && data[i + 2] >= data[i] && data[i] > 110 && data[i + 1] > 110;
    };
    const near = (x, y) => {
      for (let dy = -2; dy <= 2; ++dy) for (let dx = -2; dx <= 2; ++dx) if (bone(x + dx, y + dy)) return true;
      return false;
    };
    const m = view.mvp;
    let on = 0, beside = 0;
    for (const p of view.joints) {
      const clip = [0, 1, 3].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r]);
      const x = Math.round((clip[0] / clip[2] * 0.5 + 0.5) * view.width * scale);
      const y = Math.round((0.5 - clip[1] / clip[2] * 0.5) * view.height * scale);
      if (near(x, y)) on += 1;
      if (near(x + Math.round(150 * scale), y)) beside += 1;
    }
    return { on, beside, joints: view.joints.length };
  }, png, view);
  await page.evaluate(() => { window.lmmDemo.paused = false; });
  return counts;
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: 'new',
    args: ['--no-sandbox', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
           '--window-size=1024,768'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1024, height: 768 });
  const consoleErrors = [];
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.lmmDemo && (window.lmmDemo.updates > 30 || window.lmmDemo.errors.length > 0),
                             { timeout: 60000 });
  const start = await page.evaluate(() => window.lmmDemo.root);
  await page.keyboard.down('KeyW');
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await page.keyboard.up('KeyW');
  const state = await page.evaluate(() => ({ ...window.lmmDemo }));
  const moved = Math.hypot(state.root[0] - start[0], state.root[2] - start[2]);
  await new Promise((resolve) => setTimeout(resolve, 1500));  // come to a stop
  const strafeStart = await page.evaluate(() => ({ ...window.lmmDemo }));
  await page.keyboard.down('KeyQ');
  await page.keyboard.down('KeyD');
  let worstFacing = 0;
  for (let k = 0; k < 30; ++k) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const facing = await page.evaluate(() => window.lmmDemo.facingDegrees);
    const off = Math.abs(((facing - strafeStart.facingDegrees + 540) % 360) - 180);
    worstFacing = Math.max(worstFacing, off);
  }
  await page.keyboard.up('KeyD');
  await page.keyboard.up('KeyQ');
  const strafeEnd = await page.evaluate(() => window.lmmDemo.root);
  const heading = strafeStart.facingDegrees * Math.PI / 180;
  const step = [strafeEnd[0] - strafeStart.root[0], strafeEnd[2] - strafeStart.root[2]];
  const sideways = Math.abs(step[0] * Math.cos(heading) - step[1] * Math.sin(heading));
  check(consoleErrors.length === 0 && state.errors.length === 0,
        `no console errors (${[...consoleErrors, ...state.errors].join('; ') || 'none'})`);
  check(moved >= 2.0, `holding W for 3 s moves the character ${moved.toFixed(2)} m (>= 2 m)`);
  check(sideways >= 1.0 && worstFacing <= 20,
        `strafing (Q + D) for 3 s moves the character ${sideways.toFixed(2)} m sideways (>= 1 m), facing at most ` +
        `${worstFacing.toFixed(1)} degrees off the held one (<= 20)`);
  check(state.frameMilliseconds > 0 && state.updateMicroseconds > 0,
        `frame ${state.frameMilliseconds.toFixed(1)} ms, update ${state.updateMicroseconds.toFixed(0)} us, ${state.updates} updates`);
  const drawn = await skeletonPixels(page);
  check(drawn.on >= 0.9 * drawn.joints && drawn.beside <= 0.1 * drawn.joints,
        `screenshot: skeleton pixels at ${drawn.on} of ${drawn.joints} projected joints, beside ${drawn.beside}`);
  if (screenshot) await page.screenshot({ path: screenshot });
  await browser.close();
  process.exit(failures === 0 ? 0 : 1);
})().catch((error) => { console.error('FAIL', error); process.exit(1); });
