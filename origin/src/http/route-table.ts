import type { FastifyInstance } from 'fastify';

export interface ServedRoute {
  method: string;
  url: string;
}

/** Every route the app serves, as it is registered (Fastify's own HEAD twins included). */
export class RouteTable {
  readonly routes: ServedRoute[] = [];
  private readonly patterns: { method: string; pattern: RegExp }[] = [];

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const pattern = new RegExp(`^${route.url.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);
      for (const method of [route.method].flat()) {
        this.routes.push({ method, url: route.url });
        this.patterns.push({ method, pattern });
      }
    });
  }

  /** The methods served at a concrete path, for 405 answers. */
  methodsAt(path: string): string[] {
    return [...new Set(this.patterns.filter((p) => p.pattern.test(path)).map((p) => p.method))];
  }
}
