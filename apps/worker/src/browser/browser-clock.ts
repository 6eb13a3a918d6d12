/** Measures how long a run waits on the browser, to tell the service's own overhead apart. */
export class BrowserClock {
  browserMs = 0;

  async time<T>(work: Promise<T>): Promise<T> {
    const began = performance.now();
    try {
      return await work;
    } finally {
      this.browserMs += performance.now() - began;
    }
  }
}
