import { type RouteContract, routerPath } from '@vip/shared-schema';
import type { Hono } from 'hono';
import type { H } from 'hono/types';
import type { AppEnv } from './context.js';

/**
 * The routes the Worker serves, recorded as they are mounted (as the origin's RouteTable does), so
 * the OpenAPI document, /docs and the 405 answers describe what is served and nothing else.
 */
export class MountRecord {
  private readonly served: RouteContract[] = [];

  constructor(private readonly app: Hono<AppEnv>) {}

  /** Serves `contract` at its method and path with `handlers`, and records it. */
  serve(contract: RouteContract, ...handlers: H<AppEnv>[]): void {
    this.served.push(contract);
    this.app.on(contract.method.toUpperCase(), [routerPath(contract)], ...handlers);
  }

  /** Every contract served, in the order mounted. */
  get contracts(): readonly RouteContract[] {
    return this.served;
  }

  /** The methods served at a concrete path (edge paths have no parameters), for 405 answers. */
  methodsAt(path: string): string[] {
    return this.served.filter((route) => route.path === path).map((route) => route.method.toUpperCase());
  }
}
