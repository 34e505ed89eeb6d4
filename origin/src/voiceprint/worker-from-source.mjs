// Worker entry when running from TypeScript sources (tsx, vitest): load worker.ts through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
