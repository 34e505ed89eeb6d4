import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { name: 'shared-schema', include: ['src/**/*.test.ts'], sequence: { groupOrder: 0 } } });
