// The view's side of the MCP Apps protocol (io.modelcontextprotocol/ui,
// 2026-01-26): JSON-RPC 2.0 over postMessage with the host (window.parent).
// No SDK and nothing fetched: the page is the whole view.
'use strict';
const view = (() => {
  const pending = new Map();
  const handlers = new Map();
  let nextId = 1;
  const post = (message) => window.parent.postMessage(message, '*');
  const request = (method, params) => {
    const id = nextId++;
    post({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  };
  const notify = (method, params) => post(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined) {
      const waiting = pending.get(message.id);
      if (waiting) {
        pending.delete(message.id);
        if (message.error) waiting.reject(message.error); else waiting.resolve(message.result);
      }
      return;
    }
    const handler = handlers.get(message.method);
    if (message.id === undefined) {
      if (handler) handler(message.params || {});
      return;
    }
    if (message.method === 'ui/resource-teardown') {
      post({ jsonrpc: '2.0', id: message.id, result: {} });
    } else if (message.method === 'ping') {
      post({ jsonrpc: '2.0', id: message.id, result: {} });
    } else {
      post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    }
  });
  const size = () => notify('ui/notifications/size-changed', {
    width: Math.ceil(document.documentElement.scrollWidth),
    height: Math.ceil(document.documentElement.scrollHeight),
  });
  const theme = (context) => {
    if (context && (context.theme === 'dark' || context.theme === 'light')) document.documentElement.dataset.theme = context.theme;
  };
  handlers.set('ui/notifications/host-context-changed', theme);
  const start = (name) => request('ui/initialize', {
    appInfo: { name, version: '1.0.0' },
    appCapabilities: {},
    protocolVersion: '2026-01-26',
  }).then((result) => {
    theme(result && result.hostContext);
    notify('ui/notifications/initialized');
    size();
    if (typeof ResizeObserver === 'function') new ResizeObserver(size).observe(document.body);
  });
  // Text only: nothing the server or a sender wrote is ever parsed as markup.
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const on = (method, handler) => handlers.set(method, handler);
  return { request, notify, start, el, on, size };
})();
