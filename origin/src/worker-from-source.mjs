// Worker entry when running from TypeScript sources (tsx, vitest): load the .ts module named in argv through tsx.
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
