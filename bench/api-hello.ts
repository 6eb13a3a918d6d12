/**
 * The comparison of `pnpm bench api`: a bare Express 5 app answering one small JSON body, run as its
 * own process like the API. Prints its port once listening.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';

const app = express();
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
