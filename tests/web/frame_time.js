#!/usr/bin/env node
// Frame time of the browser demo (tools/web-demo) with 1 and more characters: for each count N it
// opens URL with ?characters=N (N skinned characters of the page's asset in a grid, all walking
// on the held W key) in Debian's chromium, headless with the software renderer (SwiftShader, as
// demo_test.js), and after 2 s of walking prints the median interval between frames (ms; headless
// chromium paces frames to multiples of 16.7 ms) and the median milliseconds of the page's own
// script per frame (updates, posing, draw calls) over SECONDS. Writes a screenshot per count when
// given a folder. Exits non-zero on a page error.
// Usage: node frame_time.js URL [--characters 1,64] [--seconds S] [--screenshots DIR]
'use strict';
const path = require('path');
const puppeteer = require('puppeteer-core');

// The value after option `name` in `args`, or `fallback`.
function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at < 0 ? fallback : args[at + 1];
}
const args = process.argv.slice(2);
const url = args[0];
const counts = option(args, '--characters', '1,64').split(',').map(Number);
const seconds = Number(option(args, '--seconds', '5'));
const screenshots = option(args, '--screenshots', '');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: 'new',
    args: ['--no-sandbox', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--window-size=1024,768'],
  });
  let failed = false;
  for (const count of counts) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1024, height: 768 });
    const errors = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    await page.goto(`${url}${url.includes('?') ? '&' : '?'}characters=${count}`, { waitUntil: 'load' });
    await page.waitForFunction(() => window.lmmDemo && (window.lmmDemo.updates > 10 || window.lmmDemo.errors.length > 0),
                               { timeout: 120000 });
    await page.keyboard.down('KeyW');
    await sleep(2000);
    const frames = await page.evaluate((seconds) => new Promise((resolve) => {
      const times = [], work = [];
      const next = (now) => {
        times.push(now);
        work.push(window.lmmDemo.frameWork);
        if (now - times[0] < seconds * 1000) requestAnimationFrame(next);
        else resolve({ times, work, characters: window.lmmDemo.characters, errors: window.lmmDemo.errors });
      };
      requestAnimationFrame(next);
    }), seconds);
    await page.keyboard.up('KeyW');
    if (screenshots) await page.screenshot({ path: path.join(screenshots, `characters-${count}.png`) });
    const intervals = frames.times.slice(1).map((t, k) => t - frames.times[k]);
    const problems = [...errors, ...frames.errors];
    failed = failed || problems.length > 0 || frames.characters !== count;
    console.log(`${frames.characters} character(s): median frame ${median(intervals).toFixed(1)} ms, script ` +
                `${median(frames.work).toFixed(1)} ms per frame, ${intervals.length} frames in ${seconds} s` +
                (problems.length ? `; errors: ${problems.join('; ')}` : ''));
    await page.close();
  }
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch((error) => { console.error('FAIL', error); process.exit(1); });
