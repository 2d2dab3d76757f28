#!/usr/bin/env node
// Serves the demo folder on localhost with the headers a threaded WebAssembly module needs
// (cross-origin isolation: SharedArrayBuffer). Usage: node serve.js DIR [PORT]; prints the URL
// (PORT 0: a free port).
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const root = path.resolve(process.argv[2] || '.');
const port = Number(process.argv[3] || 8080);
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.png': 'image/png',
};

// The file under `root` that a request path names, or null when it leaves `root`.
function fileFor(url) {
  const relative = decodeURIComponent(new URL(url, 'http://localhost').pathname);
  const file = path.resolve(root, '.' + (relative.endsWith('/') ? relative + 'index.html' : relative));
  return file === root || file.startsWith(root + path.sep) ? file : null;
}

const server = http.createServer((request, response) => {
  const file = fileFor(request.url);
  const headers = {
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cache-Control': 'no-store',
  };
  if (file === null) {
    response.writeHead(403, headers).end('forbidden');
    return;
  }
  fs.readFile(file, (error, data) => {
    if (error) {
      response.writeHead(404, headers).end('not found: ' + request.url);
      return;
    }
    headers['Content-Type'] = types[path.extname(file)] || 'application/octet-stream';
    response.writeHead(200, headers).end(data);
  });
});
server.listen(port, '127.0.0.1', () => console.log(`lmmkit demo: http://127.0.0.1:${server.address().port}/ (serving ${root})`));
