#!/usr/bin/env node
// Browser test of the demo (tools/web-demo, issue 18): Debian's chromium, headless, driven by
// puppeteer-core. Usage: node demo_test.js URL [SCREENSHOT.png]. Checks: the page loads with no
// console errors; holding W for 3 s moves the character at least 2 m; holding Q (strafe) and D
// for 3 s moves it sideways at least 1 m with the facing within 20 degrees of the held one; the
// page reports its frame time and the update cost. Prints one line per check; exits non-zero on a failure.
'use strict';
const puppeteer = require('puppeteer-core');

const url = process.argv[2];
const screenshot = process.argv[3];
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
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
  if (screenshot) await page.screenshot({ path: screenshot });
  await browser.close();
  process.exit(failures === 0 ? 0 : 1);
})().catch((error) => { console.error('FAIL', error); process.exit(1); });
