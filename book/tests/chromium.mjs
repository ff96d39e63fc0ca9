// What the browser tests share: headless Chromium started the same way, and a tally of
// expectations that ends in the closing line "<name>: N passed, N failed".

import { chromium } from "playwright-core";

/** Starts the Chromium that $CHROMIUM names (default /usr/bin/chromium), headless. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Expectations counted as they are checked; `finish` prints them and exits. */
export class Tally {
  constructor(name) {
    this.name = name;
    this.passed = 0;
    this.failures = [];
  }

  expect(condition, what) {
    if (condition) this.passed += 1;
    else this.failures.push(what);
  }

  finish() {
    for (const failure of this.failures) console.log(`  FAIL  ${failure}`);
    console.log(`${this.name}: ${this.passed} passed, ${this.failures.length} failed`);
    process.exit(this.failures.length === 0 ? 0 : 1);
  }
}
