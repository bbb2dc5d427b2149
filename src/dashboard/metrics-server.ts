import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Access } from './access.js';
import { sendJson, setSecurityHeaders } from './http.js';

/** Serves `GET /metrics` of a registry (503 until there is one), under the same access rules as the dashboard. */
export function createMetricsServer(registryOf: () => Registry | undefined, access: Access): Server {
  return createServer((request, response) => {
    setSecurityHeaders(response);
    if (request.method !== 'GET' || new URL(request.url ?? '/', 'http://metrics').pathname !== '/metrics') return sendJson(response, 404, { error: 'only GET /metrics here' });
    if (!access.servesHost(request)) return sendJson(response, 421, { error: `this server answers to ${access.hostNamesText} only` });
    if (!access.allows(request)) return sendJson(response, 401, { error: 'send the token: Authorization: Bearer <token>' });
    const registry = registryOf();
    if (registry === undefined) return sendJson(response, 503, { error: 'the worker is starting' });
    registry
      .metrics()
      .then((text) => {
        response.writeHead(200, { 'Content-Type': registry.contentType });
        response.end(text);
      })
      .catch((error: Error) => sendJson(response, 500, { error: error.message }));
  });
}
